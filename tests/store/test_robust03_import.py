"""The 17 real TREC 2003 Robust runs import exactly and come back out as the same rankings."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from pooling.formats.trec_run import read_trec_run, trec_order
from pooling.store import Store

ROBUST = "data/trec2003-robust"


@pytest.fixture(scope="module")
def robust_store(shared_dir: Path, tmp_path_factory) -> tuple[Store, Path]:
    root = shared_dir / ROBUST
    store = Store.create(tmp_path_factory.mktemp("robust") / "robust.duckdb")
    store.import_topics(root / "topics/topics.robust03.txt")
    store.import_qrels(root / "qrels/robust03_qrels.txt.gz", name="official")
    report = store.import_runs(sorted((root / "runs").glob("input.*.gz")))
    assert [i.status for i in report.items] == ["imported"] * 17
    assert report.warnings == []
    yield store, root
    store.close()


def _manifest(root: Path) -> list[dict[str, str]]:
    with open(root / "reference/runs_manifest.tsv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_every_run_matches_the_reference_manifest(robust_store):
    store, root = robust_store
    runs = {r["source"].split("/")[-1]: r for r in store.info()["runs"]}
    manifest = _manifest(root)
    assert len(manifest) == 17
    for ref in manifest:
        run = runs[ref["file"]]
        assert run["run_id"] == ref["tags"]
        assert run["n_rows"] == int(ref["lines"])
        assert run["n_topics"] == int(ref["topics"])
        assert run["duplicates_dropped"] == int(ref["dup_qid_doc"]) == 0
        per_topic = store.one(
            "t", "SELECT max(n), min(n) FROM (SELECT count(*) n FROM run_results "
            "WHERE run_id = ? GROUP BY query_id)", [run["run_id"]]
        )
        assert per_topic == (int(ref["max_per_topic"]), int(ref["min_per_topic"]))


def test_topics_and_qrels_counts(robust_store):
    store, _ = robust_store
    counts = store.info()["counts"]
    assert counts["topics"] == 100
    assert counts["qrels"] == 128_796
    info = store.qrels_info("official")
    assert list(info["grades"]) == [0, 1, 2] and info["n_topics"] == 100


def test_every_run_round_trips_through_export(robust_store, tmp_path):
    store, root = robust_store
    for path in sorted((root / "runs").glob("input.*.gz")):
        (original,) = read_trec_run(path)
        out = tmp_path / f"{original.tag}.run"
        store.export_run(original.tag, out)
        (again,) = read_trec_run(out)
        cols = ["query_id", "doc_id", "rank", "score"]
        assert trec_order(again.table).select(cols).equals(trec_order(original.table).select(cols))
        assert again.tag == original.tag


def test_exported_qrels_equal_the_official_file(robust_store, tmp_path):
    store, root = robust_store
    out = tmp_path / "q.txt"
    store.export_qrels(out, "official")
    lines = out.read_text().splitlines()
    assert json.loads(out.with_name("q.txt.meta.json").read_text())["qrels_version"] == "official"
    with gzip.open(root / "qrels/robust03_qrels.txt.gz", "rt") as fh:
        original = {tuple(line.split()[i] for i in (0, 2, 3)) for line in fh if line.strip()}
    exported = {tuple(line.split()[i] for i in (0, 2, 3)) for line in lines}
    assert exported == original


def test_importing_the_same_files_again_is_reported_not_duplicated(robust_store):
    store, root = robust_store
    before = store.table_digest("run_results")
    report = store.import_runs(sorted((root / "runs").glob("input.*.gz"))[:3])
    assert [i.status for i in report.items] == ["already imported"] * 3
    assert store.table_digest("run_results") == before


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda ls: ls.__setitem__(4, " ".join(ls[4].split()[:4])), ":5: expected at least 6 fields"),
        (lambda ls: ls.__setitem__(9, " ".join(ls[9].split()[:4] + ["NaN"] + ls[9].split()[5:])), ":10: score must be a finite number"),
        (lambda ls: ls.__setitem__(99, " ".join(ls[99].split()[:4] + ["high"] + ls[99].split()[5:])), ":100: score must be a finite number, found 'high'"),
        (lambda ls: ls.insert(20, ls[3]), ":21: doc "),
        (lambda ls: ls.__setitem__(30, ls[30].rsplit(None, 1)[0] + " otherTag"), "2 different run tags"),
    ],
    ids=["short-line", "nan-score", "text-score", "duplicate-doc", "second-tag"],
)
def test_malformed_variants_of_a_real_run_are_rejected_with_file_and_line(
    shared_dir, tmp_path, mutate, expected
):
    from pooling.errors import FormatError

    with gzip.open(shared_dir / ROBUST / "runs/input.humR03dc.gz", "rt") as fh:
        lines = fh.read().splitlines()
    mutate(lines)
    bad = tmp_path / "input.bad"
    bad.write_text("\n".join(lines) + "\n")
    store = Store.create(tmp_path / "s.duckdb")
    with pytest.raises(FormatError) as info:
        store.import_runs([bad])
    assert expected in str(info.value)
    assert str(bad) in str(info.value)
    assert store.info()["counts"]["run_results"] == 0
