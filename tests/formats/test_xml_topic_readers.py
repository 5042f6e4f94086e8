"""CLEF, NTCIR and TREC Web topics, sniffed from content, with file:line errors; JSONL topics
with a field mapping; all through `pooling import topics`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pooling.cli import app
from pooling.errors import FormatError
from pooling.formats import read_topics, reader_for
from pooling.store import Store

CLEF = """<?xml version="1.0" encoding="UTF-8"?>
<queries>
  <query>
    <id> 151001 </id>
    <en>Cough medicine for children</en>
    <fr>Sirop contre la toux pour enfants</fr>
    <de>Hustensaft für Kinder</de>
  </query>
  <query>
    <id>151002</id>
    <en>Sleep apnoea
        treatment</en>
    <fr>Traitement de l'apnée du sommeil</fr>
  </query>
</queries>
"""
NTCIR = """<?xml version="1.0" encoding="UTF-8"?>
<TOPICS>
<TOPIC>
<NUM>0010</NUM>
<SLANG>EN</SLANG><TLANG>EN</TLANG>
<TITLE CASE="b">Kyoto protocol emissions</TITLE>
<DESC>Find reports on emission targets of the Kyoto protocol.</DESC>
<NARR><BACK>Countries agreed targets in 1997.</BACK><RELE>Reports of national targets are relevant.</RELE></NARR>
<CONC>Kyoto, emissions, targets</CONC>
</TOPIC>
</TOPICS>
"""
WEB = """<webtrack2012>
<topic number="151" type="faceted">
  <query>403b</query>
  <description>What is a 403b plan?</description>
  <subtopic number="1" type="inf">What is a 403b plan?</subtopic>
  <subtopic number="2" type="nav">Who is eligible for a 403b plan?</subtopic>
</topic>
<topic number="152" type="single">
  <query>angular cheilitis</query>
  <description>Find information on angular cheilitis.</description>
</topic>
</webtrack2012>
"""
TREC = "<top>\n<num> Number: 301\n<title> International Organized Crime\n</top>\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".xml", ".txt"])
def test_each_xml_format_is_told_from_its_content(tmp_path, suffix):
    assert reader_for("topics", write(tmp_path, "a" + suffix, CLEF)).name == "clef"
    assert reader_for("topics", write(tmp_path, "b" + suffix, NTCIR)).name == "ntcir"
    assert reader_for("topics", write(tmp_path, "c" + suffix, WEB)).name == "trec-web"
    assert reader_for("topics", write(tmp_path, "d" + suffix, TREC)).name == "trec"


def test_clef_takes_the_chosen_language_and_keeps_the_others(tmp_path):
    path = write(tmp_path, "topics.xml", CLEF)
    rows = read_topics(path).to_pylist()
    assert [r["query_id"] for r in rows] == ["151001", "151002"]
    assert rows[0]["title"] == "Cough medicine for children"
    assert rows[1]["title"] == "Sleep apnoea treatment"
    extra = json.loads(rows[0]["extra"])
    assert extra["fr"] == "Sirop contre la toux pour enfants" and extra["language"] == "en"
    french = read_topics(path, language="fr").to_pylist()
    assert french[0]["title"] == "Sirop contre la toux pour enfants"
    with pytest.raises(FormatError) as info:
        read_topics(path, language="de")  # topic 151002 has no German
    assert f"{path}:9: topic 151002 has no text in language 'de' (it has: en, fr)" in str(info.value)


def test_ntcir_keeps_nested_narrative_text_and_other_fields(tmp_path):
    row = read_topics(write(tmp_path, "ntcir.xml", NTCIR)).to_pylist()[0]
    assert row["query_id"] == "0010" and row["title"] == "Kyoto protocol emissions"
    assert row["narrative"] == "Countries agreed targets in 1997. Reports of national targets are relevant."
    assert json.loads(row["extra"])["conc"] == "Kyoto, emissions, targets"


def test_trec_web_keeps_type_and_subtopics(tmp_path):
    rows = read_topics(write(tmp_path, "web.xml", WEB)).to_pylist()
    assert [(r["query_id"], r["title"]) for r in rows] == [("151", "403b"), ("152", "angular cheilitis")]
    extra = json.loads(rows[0]["extra"])
    assert extra["type"] == "faceted"
    assert extra["subtopics"][1] == {"number": "2", "type": "nav", "text": "Who is eligible for a 403b plan?"}


def test_problems_are_named_with_file_and_line(tmp_path):
    broken = write(tmp_path, "broken.xml", "<queries>\n<query><id>1</id><en>x</en>\n</queries>\n")
    with pytest.raises(FormatError, match=r"broken.xml:3: not well-formed XML"):
        read_topics(broken, format="clef")
    web = write(tmp_path, "w.xml", '<w>\n<topic type="x">\n<query>q</query>\n</topic>\n'
                                   '<topic number="2">\n<query></query>\n</topic>\n</w>\n')
    with pytest.raises(FormatError) as info:
        read_topics(web, format="trec-web")
    assert f'{web}:2: <topic> has no number="…" attribute' in str(info.value)
    assert f"{web}:5: topic 2 has no <query> text" in str(info.value)
    ntcir = write(tmp_path, "n.xml", "<TOPICS>\n<TOPIC><NUM>1</NUM><TITLE>a</TITLE></TOPIC>\n"
                                     "<TOPIC><NUM>1</NUM><TITLE>b</TITLE></TOPIC>\n</TOPICS>\n")
    with pytest.raises(FormatError, match=r"n.xml:3: duplicate topic number '1' \(first at line 2\)"):
        read_topics(ntcir, format="ntcir")


def test_an_option_the_format_does_not_take_is_refused(tmp_path):
    with pytest.raises(FormatError, match="the ntcir topics format takes no option language"):
        read_topics(write(tmp_path, "n.xml", NTCIR), language="fr")


def test_jsonl_fields_map_a_tracks_own_names(tmp_path):
    path = write(tmp_path, "t.jsonl", '{"qid": 7, "query": "tip of the tongue", "question": "a film?"}\n')
    mapping = {"query_id": "qid", "title": "query", "description": "question"}
    row = read_topics(path, fields=mapping).to_pylist()[0]
    assert (row["query_id"], row["title"], row["description"]) == ("7", "tip of the tongue", "a film?")
    with pytest.raises(FormatError, match="unknown column 'topic'"):
        read_topics(path, fields={"topic": "qid"})


def test_every_format_imports_through_the_cli(tmp_path):
    store = tmp_path / "s.duckdb"
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(store)]).exit_code == 0
    for args in ([write(tmp_path, "clef.xml", CLEF), "--language", "fr"],
                 [write(tmp_path, "ntcir.xml", NTCIR)],
                 [write(tmp_path, "web.xml", WEB)],
                 [write(tmp_path, "t.jsonl", '{"qid": "900", "query": "q"}\n'), "--field", "query_id=qid",
                  "--field", "title=query"]):
        result = runner.invoke(app, ["import", "topics", str(store), *map(str, args)])
        assert result.exit_code == 0, result.output
    bad = runner.invoke(app, ["import", "topics", str(store), str(tmp_path / "t.jsonl"), "--field", "qid"])
    assert bad.exit_code != 0 and "canonical=key" in str(bad.exception)
    with Store(store, read_only=True) as s:
        titles = dict(s.con.execute("SELECT query_id, title FROM topics").fetchall())
    assert titles["151001"] == "Sirop contre la toux pour enfants"
    assert titles["0010"] == "Kyoto protocol emissions" and titles["151"] == "403b" and titles["900"] == "q"
