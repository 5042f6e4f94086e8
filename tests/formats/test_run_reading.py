"""One way of reading run files in every command: --dedupe, --run-names, --meta,
--split-by-tag and --topic-map behave the same in eval, curve, simulate and import runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pooling.cli import app
from pooling.errors import FormatError, PoolingError
from pooling.formats.run_files import RUN_SUFFIXES, RunReading, file_run_name, read_runs
from pooling.formats.topic_map import read_topic_map

QRELS = "151001 0 d1 1\n151001 0 d2 0\n151001 0 d3 1\n152001 0 d1 1\n152001 0 d4 1\n"
# A lab's run: topic ids written short, d2 repeated for topic 151.
MESSY = (
    "151 Q0 d2 1 3.0 lab\n151 Q0 d1 2 2.0 lab\n151 Q0 d2 3 1.5 lab\n151 Q0 d3 4 1.0 lab\n"
    "152 Q0 d4 1 2.0 lab\n152 Q0 d1 2 1.0 lab\n"
)
CLEAN = (
    "151001 Q0 d2 1 3.0 lab\n151001 Q0 d1 2 2.0 lab\n151001 Q0 d3 4 1.0 lab\n"
    "152001 Q0 d4 1 2.0 lab\n152001 Q0 d1 2 1.0 lab\n"
)
TOPIC_MAP = "# as written, canonical\n151\t151001\n152 152001\n"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def campaign(tmp_path: Path) -> dict[str, Path]:
    """Two files that reuse one tag, a duplicate document, and short topic ids."""
    return {
        "qrels": write(tmp_path / "official.qrels", QRELS),
        "a": write(tmp_path / "teamA-run1.txt", MESSY),
        "b": write(tmp_path / "teamB-run1.txt", MESSY.replace(" 3.0 ", " 0.5 ")),
        "map": write(tmp_path / "topics.map", TOPIC_MAP),
        "clean": write(tmp_path / "clean.run", CLEAN),
    }


def invoke(args: list[str]):
    result = CliRunner().invoke(app, [str(a) for a in args])
    message = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        message += str(result.exception)
    return result, message


def test_topic_map_and_dedupe_make_eval_equal_to_the_cleaned_run(campaign):
    plain, _ = invoke(["eval", campaign["qrels"], campaign["clean"], "-m", "map", "-m", "P.5"])
    assert plain.exit_code == 0
    mapped, _ = invoke(["eval", campaign["qrels"], campaign["a"], "-m", "map", "-m", "P.5",
                        "--topic-map", campaign["map"], "--dedupe", "first"])
    assert mapped.exit_code == 0, mapped.output
    assert mapped.stdout == plain.stdout


def test_eval_prints_a_note_when_dedupe_is_on(campaign):
    result, _ = invoke(["eval", campaign["qrels"], campaign["a"], "--topic-map", campaign["map"],
                        "--dedupe", "first"])
    assert "trec_eval refuses repeated documents" in result.stderr
    assert "1 line(s) dropped" in result.stderr
    assert "topic map changed 2 topic id(s)" in result.stderr


def test_eval_refuses_duplicates_by_default_and_names_its_own_option(campaign):
    result, message = invoke(["eval", campaign["qrels"], campaign["a"], "--topic-map", campaign["map"]])
    assert result.exit_code != 0
    assert "--dedupe first" in message
    assert "d2" in message


def test_without_a_topic_map_the_short_ids_share_no_topic(campaign):
    result, message = invoke(["eval", campaign["qrels"], campaign["a"], "--dedupe", "first"])
    assert result.exit_code != 0
    assert "has no lines for 2 qrels topic(s)" in message and "--topic-map" in message


def test_simulate_takes_dedupe_and_names_runs_by_file(campaign):
    args = ["simulate", campaign["qrels"], campaign["a"], campaign["b"], "-s", "depth", "-b", "2",
            "--depth", "3", "--topic-map", campaign["map"], "--format", "csv"]
    refused, message = invoke(args)
    assert refused.exit_code != 0 and "--dedupe first" in message
    same_tag, message = invoke([*args, "--dedupe", "first"])
    assert same_tag.exit_code != 0
    assert "--run-names file" in message and "teamA-run1.txt" in message
    ok, _ = invoke([*args, "--dedupe", "first", "--run-names", "file"])
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.splitlines()[1].split(",")[0] == "depth"


def test_meta_names_runs_and_gives_simulate_its_groups(campaign, tmp_path):
    meta = write(tmp_path / "runs.tsv", "file\trun_id\tteam\tdescription\n"
                 f"{campaign['a'].name}\tA1\tteamA\tfirst\n{campaign['b'].name}\tB1\tteamB\tsecond\n")
    read = read_runs([campaign["a"], campaign["b"]],
                     RunReading(dedupe="first", meta=_meta(meta),
                                topic_map=read_topic_map(campaign["map"])))
    assert [r.run_id for r in read.runs] == ["A1", "B1"]
    assert [r.meta.team for r in read.runs] == ["teamA", "teamB"]
    assert {r.duplicates_dropped for r in read.runs} == {1}
    assert set(read.runs[0].table["query_id"].to_pylist()) == {"151001", "152001"}


def test_a_file_missing_from_meta_is_named(campaign, tmp_path):
    meta = write(tmp_path / "runs.tsv", f"file\trun_id\n{campaign['a'].name}\tA1\n")
    with pytest.raises(PoolingError, match="teamB-run1.txt: not listed in the --meta file"):
        read_runs([campaign["a"], campaign["b"]], RunReading(meta=_meta(meta), dedupe="first"))


def test_split_by_tag_evaluates_each_tag(tmp_path, campaign):
    two = write(tmp_path / "two.run", CLEAN + CLEAN.replace(" lab", " lab2"))
    joined, message = invoke(["eval", campaign["qrels"], two, "-m", "map"])
    assert joined.exit_code != 0 and "twice" in message  # trec_eval: one run, docs repeated
    split, _ = invoke(["eval", campaign["qrels"], two, "-m", "map", "--split-by-tag",
                       "--format", "csv"])
    assert split.exit_code == 0, split.output
    rows = [line.split(",") for line in split.stdout.splitlines()[1:]]
    assert [r[0].strip('"') for r in rows] == ["lab", "lab2"]
    assert rows[0][3] == rows[1][3]  # the same ranking twice: the same MAP


def test_run_names_by_file_strip_gz_and_one_run_suffix():
    assert file_run_name("runs/input.InexpC2.gz") == "input.InexpC2"
    assert file_run_name("/x/teamA-run1.txt") == "teamA-run1"
    assert file_run_name("bm25.run.gz") == "bm25"
    assert file_run_name("bm25.res.txt") == "bm25.res"  # one suffix only


@pytest.mark.parametrize("suffix", [".out", ".exp", ".result", ".results", ".runs", ".trec",
                                    ".tsv", ".res", ".OUT", ".Run"])
def test_every_usual_run_file_ending_is_dropped_from_a_name_by_file(suffix, tmp_path):
    assert file_run_name(f"runs/teamA-run1{suffix}.gz") == "teamA-run1"
    path = write(tmp_path / f"teamA-run1{suffix}", "1 Q0 d1 1 2.0 shared_tag\n")
    (run,) = read_runs([path], RunReading(run_names="file")).runs
    assert run.run_id == "teamA-run1"


def test_the_store_page_lists_the_run_suffixes_the_code_drops():
    page = (Path(__file__).resolve().parents[2] / "docs" / "store.md").read_text()
    (row,) = [line for line in page.splitlines() if line.startswith("| `--run-names tag")]
    listed = re.findall(r"`(\.[a-z]+)`", row.split("one run suffix", 1)[1].split("(`", 1)[0])
    assert tuple(listed) == RUN_SUFFIXES


def test_topic_map_errors_name_file_and_line(tmp_path):
    bad = write(tmp_path / "bad.map", "151 151001\n152 152001 extra\n151 151999\n")
    with pytest.raises(FormatError) as info:
        read_topic_map(bad)
    text = str(info.value)
    assert f"{bad}:2: expected 2 columns" in text
    assert f"{bad}:3: topic '151' is mapped to '151999' here but to '151001' at line 1" in text


def test_import_runs_records_the_topic_map_it_applied(tmp_path, campaign):
    store = tmp_path / "s.duckdb"
    assert invoke(["init", store])[0].exit_code == 0
    result, _ = invoke(["import", "runs", store, campaign["a"], campaign["b"], "--dedupe", "first",
                        "--run-names", "file", "--topic-map", campaign["map"]])
    assert result.exit_code == 0, result.output
    con = duckdb.connect(str(store), read_only=True)
    runs = con.execute("SELECT run_id, duplicates_dropped FROM runs ORDER BY 1").fetchall()
    assert runs == [("teamA-run1", 1), ("teamB-run1", 1)]
    topics = con.execute("SELECT DISTINCT query_id FROM run_results ORDER BY 1").fetchall()
    assert topics == [("151001",), ("152001",)]
    details = [json.loads(d) for (d,) in con.execute(
        "SELECT details FROM imports WHERE kind = 'run' ORDER BY source").fetchall()]
    assert details[0]["topic_map"]["applied"] == {"151": "151001", "152": "152001"}
    assert details[0]["topic_map"]["source"] == str(campaign["map"])


def test_curve_reads_runs_like_eval(campaign):
    result, _ = invoke(["curve", campaign["qrels"], campaign["a"], "--topic-map", campaign["map"],
                        "--dedupe", "first", "--run-names", "file"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith('"teamA-run1"')


def _meta(path: Path):
    from pooling.formats.run_files import read_run_meta

    return read_run_meta(path)


def _first_of_each(lines: list[tuple[str, str, str]], split_by_tag: bool) -> dict[str, list]:
    """The reference of `--dedupe first`: per tag, each (topic, doc)'s first line number in
    file order, and how many lines it left out."""
    kept: dict[str, list[int]] = {}
    seen: set[tuple[str, str, str]] = set()
    dropped: dict[str, int] = {}
    for n, (q, d, tag) in enumerate(lines, start=1):
        tag_of = tag if split_by_tag else lines[-1][2]
        if (tag, q, d) in seen:
            dropped[tag_of] = dropped.get(tag_of, 0) + 1
            continue
        seen.add((tag, q, d))
        kept.setdefault(tag_of, []).append(n)
    return {t: [kept.get(t, []), dropped.get(t, 0)] for t in set(kept) | set(dropped)}


@pytest.mark.parametrize("split_by_tag", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_dedupe_first_read_in_small_blocks_keeps_each_pair_s_first_line_in_file_order(
        monkeypatch, seed, split_by_tag):
    """Repeats within a block and across blocks (of ~64 bytes here, as a gigabyte file's
    blocks are of a MiB), under one tag or several: the lines kept and the count dropped are
    those of keeping each (tag, topic, doc)'s first line of the whole file."""
    import functools
    import random

    import pooling.formats.trec_run as trec_run
    from pooling.formats.source import line_blocks

    rng = random.Random(seed)
    tags = ["r1", "r2", "r3"] if split_by_tag else ["r1"]
    lines = [(str(rng.randint(1, 3)), f"d{rng.randint(1, 6)}", rng.choice(tags))
             for _ in range(rng.randint(1, 80))]
    text = "".join(f"{q} Q0 {d} {i} {rng.random():.3f} {t}\n"
                   for i, (q, d, t) in enumerate(lines, start=1)).encode()
    monkeypatch.setattr(trec_run, "line_blocks", functools.partial(line_blocks, size=64))
    parsed = trec_run.parse_trec_run(text, "x.run", split_by_tag=split_by_tag, dedupe="first")
    got = {p.tag: [p.table["line"].to_pylist(), p.duplicates_dropped] for p in parsed}
    assert got == _first_of_each(lines, split_by_tag)


def test_a_topic_map_is_applied_before_repeats_are_kept_once_in_every_block(monkeypatch):
    """Two written ids of one topic share a document: mapped block by block, the second
    line is a repeat of the first even when the lines are in different blocks."""
    import functools

    import pooling.formats.trec_run as trec_run
    from pooling.formats.source import line_blocks
    from pooling.formats.topic_map import TopicMap

    text = b"".join([b"1 Q0 d1 1 2.0 r\n", b"2 Q0 d9 1 1.0 r\n" * 6, b"101 Q0 d1 2 1.0 r\n"])
    monkeypatch.setattr(trec_run, "line_blocks", functools.partial(line_blocks, size=32))
    mapping = TopicMap({"1": "101", "2": "102"}, "map.tsv", "0" * 64)
    [run] = trec_run.parse_trec_run(text, "x.run", dedupe="first", topic_map=mapping)
    assert run.table.select(["query_id", "doc_id", "line"]).to_pylist() == [
        {"query_id": "101", "doc_id": "d1", "line": 1}, {"query_id": "102", "doc_id": "d9", "line": 2}]
    assert run.duplicates_dropped == 6 and run.topics_mapped == {"1": "101", "2": "102"}
    with pytest.raises(FormatError, match="doc 'd1' repeated for query '101'"):  # refused
        trec_run.parse_trec_run(b"1 Q0 d1 1 2.0 r\n101 Q0 d1 2 1.0 r\n", "x.run",
                                topic_map=mapping)
