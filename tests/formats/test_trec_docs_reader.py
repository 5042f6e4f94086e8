"""TREC SGML documents: DOCNO/title/text/url mapping, extra fields, streaming, problems."""

from __future__ import annotations

import json

import pytest

from pooling.errors import FormatError
from pooling.formats.schemas import DOCUMENTS_SCHEMA
from pooling.formats.trec_docs import iter_trec_documents, read_trec_documents

NEWSWIRE = """\
<DOC>
<DOCNO> FT911-3 </DOCNO>
<DATE>910514
</DATE>
<HEADLINE>
FT  14 MAY 91 / Contigas plans DM900m east
German project
</HEADLINE>
<TEXT>
CONTIGAS, the German gas group, said yesterday
that it intends to invest DM900m.

Second paragraph.
</TEXT>
</DOC>
<DOC>
<DOCNO> LA010189-0001 </DOCNO>
<HEADLINE><P>Hubble images</P></HEADLINE>
<TEXT>
<P>First.</P>
<P>Second.</P>
</TEXT>
<TEXT>Third.</TEXT>
</DOC>
"""


def test_newswire_documents_map_docno_headline_text_and_extra(make_file):
    table = read_trec_documents(make_file("docs.sgml", NEWSWIRE))
    assert table.schema == DOCUMENTS_SCHEMA
    first, second = table.to_pylist()
    assert first == {
        "doc_id": "FT911-3",
        "title": "FT 14 MAY 91 / Contigas plans DM900m east German project",
        "text": "CONTIGAS, the German gas group, said yesterday that it intends to invest DM900m.\n\nSecond paragraph.",
        "url": None,
        "extra": '{"date":"910514"}',
    }
    assert second["title"] == "Hubble images"
    assert second["text"] == "First.\n\nSecond.\n\nThird."  # <P> breaks paragraphs; TEXTs joined


def test_a_nested_fbis_title_is_found(make_file):
    path = make_file(
        "fbis.sgml",
        "<DOC>\n<DOCNO> FBIS3-1 </DOCNO>\n<HEADER>\n<H3> <TI> A title </TI></H3>\n</HEADER>\n"
        "<TEXT>\nBody.\n</TEXT>\n</DOC>\n",
    )
    row = read_trec_documents(path).to_pylist()[0]
    assert row["title"] == "A title" and row["text"] == "Body."
    assert json.loads(row["extra"]) == {"header": "A title"}


def test_web_documents_without_text_use_all_content_and_the_dochdr_url(make_file):
    path = make_file(
        "web.trec",
        "<DOC><DOCNO>WTX-1</DOCNO><DOCHDR>\nhttp://www.example.com/a.html 1.2.3.4\n</DOCHDR>\n"
        "<html><head><title>Web page</title></head><body><p>Hello <!-- hidden --> world</body></html>\n"
        "</DOC>\n",
    )
    row = read_trec_documents(path).to_pylist()[0]
    assert row["doc_id"] == "WTX-1"
    assert row["title"] == "Web page"
    assert row["url"] == "http://www.example.com/a.html"
    assert row["text"] == "Web page\n\nHello world"
    assert row["extra"] is None


def test_documents_stream_in_batches(make_file):
    body = "".join(f"<DOC>\n<DOCNO>D{i}</DOCNO>\n<TEXT>t{i}</TEXT>\n</DOC>\n" for i in range(5))
    batches = list(iter_trec_documents(make_file("d.sgml.gz", body, gz=True), batch_size=2))
    assert [b.num_rows for b in batches] == [2, 2, 1]
    assert batches[0].schema == DOCUMENTS_SCHEMA


def test_every_problem_is_reported_with_its_line(make_file):
    path = make_file(
        "bad.sgml",
        """\
        <DOC>
        <DOCNO>D1</DOCNO>
        <TEXT>one</TEXT>
        </DOC>
        junk between documents
        <DOC>
        <DOCNO>D1</DOCNO>
        </DOC>
        <DOC>
        <TEXT>no docno</TEXT>
        </DOC>
        <DOC>
        <DOCNO>D3</DOCNO>
        <TEXT>unclosed text
        </DOC>
        </DOC>
        <DOC>
        <DOCNO>D4</DOCNO>
        """,
    )
    with pytest.raises(FormatError) as caught:
        read_trec_documents(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:5: text outside <DOC> ... </DOC>: 'junk between documents'",
        f"{path}:6: duplicate DOCNO 'D1' (first at line 1)",
        f"{path}:9: document has no <DOCNO>",
        f"{path}:14: <TEXT> is not closed",
        f"{path}:16: </DOC> without an opening <DOC>",
        f"{path}:17: <DOC> is not closed: expected </DOC> before the end of the file",
    ]


def test_a_second_doc_before_closing_and_a_second_docno_are_problems(make_file):
    path = make_file(
        "bad.sgml", "<DOC>\n<DOCNO>A</DOCNO>\n<DOCNO>B</DOCNO>\n<DOC>\n<DOCNO>C</DOCNO>\n</DOC>\n"
    )
    with pytest.raises(FormatError) as caught:
        read_trec_documents(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:1: <DOC> is not closed before the next <DOC> at line 4",
        f"{path}:3: second <DOCNO> in the document (first at line 2)",
    ]


def test_a_file_without_documents_is_a_problem(make_file):
    with pytest.raises(FormatError, match="file is empty"):
        read_trec_documents(make_file("e.sgml", ""))
