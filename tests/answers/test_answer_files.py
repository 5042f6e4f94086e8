"""Answer files read into canonical tables: the four forms, their sentences and citations,
and every malformed file refused at file:line."""

from __future__ import annotations

import io
import json

import pytest

from pooling.errors import FormatError
from pooling.formats.answers import read_answers, sniff_format, write_answers
from pooling.formats.sentences import split_sentences


def rag_line(run="r1", topic="t1", refs=("s1", "s2", "s3"), answer=None, **extra):
    record = {"run_id": run, "topic_id": topic, "topic": "what is x?", "references": list(refs),
              "response_length": 7,
              "answer": answer if answer is not None else [
                  {"text": "X is a letter.", "citations": [0, 2]},
                  {"text": " It comes late.", "citations": []}]}
    record.update(extra)
    return json.dumps(record)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_rag24_answers_keep_sentences_and_resolve_citation_indexes(tmp_path):
    path = write(tmp_path, "a.jsonl", rag_line() + "\n" + rag_line(topic="t2") + "\n")
    got = read_answers(path)
    assert got.format == "rag24"
    assert got.answers.column("query_id").to_pylist() == ["t1", "t2"]
    assert got.answers.column("reference_ids").to_pylist()[0] == ["s1", "s2", "s3"]
    s = got.sentences.to_pylist()
    assert [(r["sentence"], r["text"], r["citations"], r["cited"]) for r in s[:2]] == [
        (0, "X is a letter.", ["s1", "s3"], [0, 2]), (1, " It comes late.", [], [])]


def test_rag25_citations_name_segments_and_may_sit_under_metadata(tmp_path):
    record = {"metadata": {"run_id": "r9", "narrative_id": "7", "narrative": "tell me"},
              "references": ["a", "b"],
              "answer": [{"text": "One.", "citations": ["b"]}, {"text": "Two.", "citations": ["a", "b"]}]}
    path = write(tmp_path, "b.jsonl", json.dumps(record) + "\n")
    got = read_answers(path)
    assert got.format == "rag25"
    row = got.answers.to_pylist()[0]
    assert (row["run_id"], row["query_id"], row["topic"]) == ("r9", "7", "tell me")
    assert [r["cited"] for r in got.sentences.to_pylist()] == [[1], [0, 1]]


def test_rag25_without_references_takes_the_cited_segments_in_first_cited_order(tmp_path):
    record = {"run_id": "r", "topic_id": "q",
              "answer": [{"text": "A.", "citations": ["z", "y"]}, {"text": "B.", "citations": ["y", "w"]}]}
    got = read_answers(write(tmp_path, "c.jsonl", json.dumps(record) + "\n"))
    assert got.answers.column("reference_ids").to_pylist() == [["z", "y", "w"]]
    assert [r["cited"] for r in got.sentences.to_pylist()] == [[0, 1], [1, 2]]


def test_plain_responses_as_json_and_tsv_are_split_by_the_stated_rule(tmp_path):
    text = "Dr. Smith lives in the U.S. now. He moved in 2001! Why? Work."
    js = read_answers(write(tmp_path, "r.json", json.dumps({"q1": {"runA": text}})))
    tsv = read_answers(write(tmp_path, "r.tsv", f"q1\trunA\t{text}\n"))
    assert js.format == "json" and tsv.format == "tsv"
    expected = ["Dr. Smith lives in the U.S. now.", "He moved in 2001!", "Why?", "Work."]
    assert js.sentences.column("text").to_pylist() == expected
    assert tsv.sentences.column("text").to_pylist() == expected
    assert js.answers.column("response_length").to_pylist() == [13]


@pytest.mark.parametrize("text, expected", [
    ("", []),
    ("One line without an end", ["One line without an end"]),
    ("First para.\n\nSecond para", ["First para.", "Second para"]),
    ("Items:\n- one\n- two", ["Items:", "- one", "- two"]),
    ("A wrapped\nline. Next", ["A wrapped line.", "Next"]),
    ("See J. Smith et al. for more. Then stop.", ["See J. Smith et al. for more.", "Then stop."]),
    ('He said "Go." Then left.', ['He said "Go."', "Then left."]),
    ("Costs 3.5 dollars. e.g. apples cost less.", ["Costs 3.5 dollars. e.g. apples cost less."]),
])
def test_sentence_rule(text, expected):
    assert split_sentences(text) == expected


def test_sentences_joined_give_the_response_with_whitespace_collapsed():
    text = "  Alpha beta.  Gamma\n delta!\n\n\nEpsilon?  Zeta. "
    assert " ".join(split_sentences(text)) == " ".join(text.split())


@pytest.mark.parametrize("lines, where, says", [
    ([rag_line(answer=[{"text": "x", "citations": [3]}])], 1, "cites index 3, outside 'references'"),
    ([rag_line(answer=[{"text": "x", "citations": [-1]}])], 1, "cites index -1"),
    ([rag_line(), rag_line()], 2, "duplicate answer of run 'r1' for topic 't1' (first at line 1)"),
    ([json.dumps({"topic_id": "t", "answer": []})], 1, "missing field 'run_id'"),
    ([json.dumps({"run_id": "r", "topic_id": "t"})], 1, "missing field 'answer'"),
    (["{not json"], 1, "not a JSON object"),
    ([rag_line(answer=[{"citations": []}])], 1, "answer[0] must be an object with a 'text'"),
    ([rag_line(answer=[{"text": "x", "citations": 0}])], 1, "answer[0].citations must be a list"),
    ([rag_line(refs=["a", "a"])], 1, "references[1] 'a' repeats references[0]"),
    ([rag_line(response_length=-3)], 1, "'response_length' must be a whole number"),
    ([rag_line(run=" r")], 1, "starts or ends with whitespace"),
    (["", rag_line(answer=[{"text": "x", "citations": ["zz"]}], refs=["a"])], 2,
     "cites segment 'zz', which is not among 'references'"),
    ([rag_line(answer=[{"text": "bad\x07bell", "citations": []}])], 1, "control character"),
])
def test_a_malformed_rag_file_is_refused_at_its_line(tmp_path, lines, where, says):
    path = write(tmp_path, "bad.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(FormatError) as caught:
        read_answers(path, "rag24")
    message = str(caught.value)
    assert f"{path}:{where}: " in message and says in message, message


def test_a_run_given_twice_is_refused_though_its_first_answer_was_bad(tmp_path):
    bad_first = rag_line(answer=[{"text": "x", "citations": [9]}])
    path = write(tmp_path, "bad.jsonl", bad_first + "\n" + rag_line() + "\n")
    with pytest.raises(FormatError) as caught:
        read_answers(path)
    assert [p.line for p in caught.value.problems] == [1, 2]


@pytest.mark.parametrize("text, where, says", [
    ('{"q1": {"r": "fine"},\n "q2": {"r": 3}}', 2, "the response must be text"),
    ('{"q1": {"r": "fine"},\n "q2": ["r"]}', 2, "expected an object of runs"),
    ('{"q1": {"r": "a", "r": "b"}}', None, "the key 'r' is given twice"),
    ('[1, 2]', 1, "expected an object of topics"),
])
def test_a_malformed_json_file_is_refused_naming_where(tmp_path, text, where, says):
    path = write(tmp_path, "bad.json", text)
    with pytest.raises(FormatError) as caught:
        read_answers(path, "json")
    message = str(caught.value)
    assert says in message, message
    if where is not None:
        assert f"{path}:{where}: " in message


def test_a_malformed_tsv_file_is_refused_at_its_line(tmp_path):
    path = write(tmp_path, "bad.tsv", "q1\tr\tok.\nq2 r missing tabs\nq1\tr\tagain\n")
    with pytest.raises(FormatError) as caught:
        read_answers(path)
    assert [p.line for p in caught.value.problems] == [2, 3]
    assert "expected 3 tab-separated fields" in str(caught.value)


def test_an_empty_file_holds_no_answer(tmp_path):
    with pytest.raises(FormatError, match="holds no answer"):
        read_answers(write(tmp_path, "e.jsonl", "\n\n"), "rag24")


@pytest.mark.parametrize("name, text", [
    ("a.jsonl", rag_line() + "\n" + rag_line(topic="t2", answer=[{"text": "Y.", "citations": ["s2"]}]) + "\n"),
    ("b.json", json.dumps({"q": {"r1": "One. Two.", "r2": "Three"}, "p": {"r1": "Four"}}, indent=2)),
    ("c.tsv", "q\tr1\tOne. Two.\np\tr1\tFour\n"),
])
def test_answers_are_written_back_as_they_came(tmp_path, name, text):
    got = read_answers(write(tmp_path, name, text))
    buffer = io.StringIO()
    write_answers(buffer, got.format, got.answers)
    if got.format == "json":
        assert json.loads(buffer.getvalue()) == json.loads(text)
    else:
        assert buffer.getvalue() == text


def test_sniffing_tells_the_forms_apart(tmp_path):
    assert sniff_format(write(tmp_path, "1", rag_line() + "\n")) == "rag24"
    assert sniff_format(write(tmp_path, "2", rag_line(answer=[{"text": "a", "citations": ["s1"]}]))) == "rag25"
    assert sniff_format(write(tmp_path, "3", '{\n "q": {"r": "t"}}')) == "json"
    assert sniff_format(write(tmp_path, "4", "q\tr\tt\n")) == "tsv"


def test_the_real_rag24_and_ikat_answer_files_read_cleanly(shared_dir):
    rag = sorted((shared_dir / "data" / "rag24-baseline-answers").glob("*.jsonl"))
    assert len(rag) == 3
    for path in rag:
        got = read_answers(path)
        assert got.format == "rag24" and got.answers.num_rows == 301 and len(got.run_ids) == 1
        lengths = got.answers.column("reference_ids").to_pylist()
        assert max(len(r) for r in lengths) <= 20
    ikat = read_answers(shared_dir / "data" / "ikat2024-nuggets" / "automatic_responses.json")
    assert ikat.format == "json" and ikat.answers.num_rows == 1501 and len(ikat.run_ids) == 19
    assert len(set(ikat.answers.column("query_id").to_pylist())) == 79


@pytest.mark.parametrize("form", ["rag24", "json"])
def test_json_nested_to_crash_a_reader_is_refused_at_its_line(tmp_path, form):
    head = rag_line() + "\n" if form == "rag24" else '{"q": '
    path = write(tmp_path, "deep", head + "[" * 200_000 + "\n")
    with pytest.raises(FormatError, match="nested too deeply") as caught:
        read_answers(path, form)
    if form == "rag24":
        assert f"{path}:2: " in str(caught.value)


def test_jsonl_topics_nested_to_crash_the_reader_are_refused(tmp_path):
    from pooling.formats.jsonl import read_jsonl_topics

    path = write(tmp_path, "t.jsonl", '{"query_id": "1", "title": "a"}\n' + "[" * 200_000 + "\n")
    with pytest.raises(FormatError, match=f"{path}:2: invalid JSON .arrays and objects nested too deeply"):
        read_jsonl_topics(path)
