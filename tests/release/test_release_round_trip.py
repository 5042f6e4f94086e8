"""`pooling import release` rebuilds a store whose evaluation is byte-identical to the
original's, for every qrels version; a tampered release is refused and nothing imported."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from release_data import DEMO, cli, documents_seen

from pooling.release import import_release
from pooling.release.checksums import ChecksumError
from pooling.store import Store


def evaluate_csv(store: Path, version: str, out: Path) -> bytes:
    cli("evaluate", store, "--qrels", version, "--format", "csv", "-o", out)
    return out.read_bytes()


def assert_round_trip(store: Path, release: Path, tmp_path: Path) -> None:
    rebuilt = tmp_path / "rebuilt.duckdb"
    cli("import", "release", rebuilt, release)
    with Store(store, read_only=True) as s:
        versions, default = s.qrels_versions(), s.default_qrels()
    with Store(rebuilt, read_only=True) as r:
        assert r.qrels_versions() == versions
        assert r.default_qrels() == default
    for version in versions:
        original = evaluate_csv(store, version, tmp_path / f"a-{version}.csv")
        again = evaluate_csv(rebuilt, version, tmp_path / f"b-{version}.csv")
        assert original.count(b"\n") > 1000
        assert again == original, f"evaluation on qrels {version} differs after the round trip"


def test_the_demo_after_a_judged_round_evaluates_byte_identically_after_the_round_trip(
        demo_store, demo_release, tmp_path):
    assert_round_trip(demo_store, demo_release, tmp_path)


def test_the_rebuilt_store_keeps_the_pool_the_judgments_and_the_rounds(
        demo_store, demo_release, tmp_path):
    rebuilt = tmp_path / "rebuilt.duckdb"
    import_release(demo_release, rebuilt)
    query = {"pool_entries": "SELECT round_id, query_id, doc_id, position FROM pool_entries",
             "rounds": "SELECT round_id, strategy, params, seed, grades, pooled_runs FROM rounds",
             "judgments": "SELECT round_id, query_id, doc_id, kind, grade, seq FROM judgments",
             "topics": "SELECT * EXCLUDE (source) FROM topics",
             "documents": "SELECT doc_id FROM documents"}
    with Store(demo_store, read_only=True) as a, Store(rebuilt, read_only=True) as b:
        for name, sql in query.items():
            assert sorted(a.sql(name, sql).fetchall()) == sorted(b.sql(name, sql).fetchall()), name
        # Where the topics came from is released as the file's name, without its folders.
        assert {r[0] for r in a.sql("from", "SELECT source FROM topics").fetchall()} == {
            str(DEMO / "topics.jsonl")}
        assert {r[0] for r in b.sql("from", "SELECT source FROM topics").fetchall()} == {
            "topics.jsonl"}
        people = b.sql("people", "SELECT assessor_id, token_sha256, revoked_at IS NOT NULL "
                       "FROM assessors").fetchall()
    assert len(people) == 2
    assert all(a.startswith("assessor-") and token == "" and revoked for a, token, revoked in people)


@pytest.mark.shared
@pytest.mark.slow
def test_robust03_with_its_17_runs_evaluates_byte_identically_after_the_round_trip(
        shared_dir, tmp_path):
    robust = shared_dir / "data" / "trec2003-robust"
    store = tmp_path / "robust03.duckdb"
    cli("init", store)
    cli("import", "topics", store, robust / "topics" / "topics.robust03.txt")
    cli("import", "runs", store, *sorted((robust / "runs").glob("input.*.gz")))
    cli("import", "qrels", store, robust / "qrels" / "robust03_qrels.txt.gz", "--name", "official")
    release = tmp_path / "robust03-release"
    cli("release", store, release, "--no-pool-bias")
    with gzip.open(robust / "qrels" / "robust03_qrels.txt.gz", "rt") as fh:
        official = sorted(line.split() for line in fh if line.strip())
    released = sorted(line.split() for line in (release / "qrels" / "official.qrels").open())
    assert [[q, d, r] for q, _, d, r in released] == [[q, d, r] for q, _, d, r in official]
    # No document texts in the store: the judged documents are the corpus every reader sees.
    judged = len({d for _, _, d, _ in official})
    assert documents_seen(release, tmp_path / "cache") == {
        "datasets": judged, "beir": judged, "ir_datasets": judged, "datasheet": judged}
    assert_round_trip(store, release, tmp_path)


def copy_of(release: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    return copy


def test_a_tampered_file_is_refused_naming_it_and_nothing_is_imported(demo_release, tmp_path):
    release = copy_of(demo_release, tmp_path)
    qrels = release / "qrels" / "truth.qrels"
    qrels.write_text(qrels.read_text().replace(" 0\n", " 1\n", 1))
    target = tmp_path / "rebuilt.duckdb"
    with pytest.raises(ChecksumError, match=r"qrels/truth\.qrels: its checksum does not match"):
        import_release(release, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]


def test_a_tampered_file_is_refused_on_the_command_line_in_one_line(demo_release, tmp_path):
    from typer.testing import CliRunner

    from pooling.cli.app import app

    release = copy_of(demo_release, tmp_path)
    (release / "data" / "runs.parquet").write_bytes(b"not parquet")
    result = CliRunner().invoke(app, ["import", "release", str(tmp_path / "s.duckdb"),
                                      str(release)])
    assert result.exit_code != 0
    assert "data/runs.parquet" in str(result.exception)
    assert not (tmp_path / "s.duckdb").exists()


def test_a_missing_or_an_added_file_is_refused_naming_it(demo_release, tmp_path):
    release = copy_of(demo_release, tmp_path)
    (release / "runs" / "sysA_bm25.run").unlink()
    with pytest.raises(ChecksumError, match=r"runs/sysA_bm25\.run: listed .* but missing"):
        import_release(release, tmp_path / "a.duckdb")
    release = copy_of(demo_release, tmp_path / "second")
    (release / "qrels" / "extra.qrels").write_text("1 0 d 1\n")
    with pytest.raises(ChecksumError, match=r"qrels/extra\.qrels: in .* but not in SHA256SUMS"):
        import_release(release, tmp_path / "b.duckdb")


def test_an_import_into_an_existing_store_is_refused(demo_release, demo_store):
    from pooling.errors import StoreError

    with pytest.raises(StoreError, match="already exists"):
        import_release(demo_release, demo_store)


def test_a_sampled_version_is_released_as_five_columns_and_comes_back_sampled(tmp_path):
    from pooling.store.sampled_qrels import is_sampled, sampled_qrels_table

    sampled = tmp_path / "sample.qrels"
    sampled.write_text("1 0 d1 1 1\n1 0 d2 1 -1\n1 0 d3 2 0\n2 0 e1 1 2\n2 0 e2 2 -1\n")
    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 3 A\n1 Q0 d2 2 2 A\n2 Q0 e1 1 3 A\n")
    store = tmp_path / "s.duckdb"
    with Store.create(store) as s:
        s.import_runs([run])
        s.import_qrels(sampled, name="sample", format="sampled")
    out = tmp_path / "release"
    cli("release", store, out)
    assert (out / "qrels" / "sample.sampled.qrels").read_text() == sampled.read_text()
    assert (out / "qrels" / "sample.qrels").read_text() == "1 0 d1 1\n1 0 d3 0\n2 0 e1 2\n"
    rebuilt = tmp_path / "rebuilt.duckdb"
    import_release(out, rebuilt)
    with Store(store, read_only=True) as a, Store(rebuilt, read_only=True) as b:
        assert is_sampled(b, "sample")
        assert sampled_qrels_table(a, "sample") == sampled_qrels_table(b, "sample")


def test_a_subtopic_version_is_released_as_ndeval_four_columns_and_evaluates_identically(
        tmp_path):
    from pooling.release.checksums import verify_checksums
    from pooling.store.qrels import subtopic_qrels_table

    qrels = tmp_path / "div.qrels"
    qrels.write_text("1 1 d1 1\n1 1 d2 0\n1 2 d2 1\n1 3 d3 2\n2 1 e1 1\n2 2 e1 0\n2 2 e3 1\n")
    runs = []
    for name, text in {"a.run": "1 Q0 d1 1 3 A\n1 Q0 d2 2 3 A\n1 Q0 d4 3 1 A\n2 Q0 e1 1 3 A\n",
                       "b.run": "1 Q0 d3 1 9 B\n1 Q0 d2 2 8 B\n2 Q0 e3 1 3 B\n"}.items():
        (tmp_path / name).write_text(text)
        runs.append(tmp_path / name)
    store = tmp_path / "s.duckdb"
    with Store.create(store) as s:
        s.import_runs(runs)
        s.import_qrels(qrels, name="div", format="subtopic")
    out = tmp_path / "release"
    cli("release", store, out)
    released = out / "qrels" / "div.subtopic.qrels"
    assert released.read_text() == qrels.read_text()  # by topic, subtopic and document
    assert (out / "qrels" / "div.qrels").read_text() == "1 0 d1 1\n1 0 d2 1\n1 0 d3 2\n" \
        "2 0 e1 1\n2 0 e3 1\n"  # the plain rows: the maximum over subtopics
    assert "qrels/div.subtopic.qrels" in verify_checksums(out)
    assert "`qrels/div.subtopic.qrels`" in (out / "DATASHEET.md").read_text()
    rebuilt = tmp_path / "rebuilt.duckdb"
    cli("import", "release", rebuilt, out)
    with Store(store, read_only=True) as a, Store(rebuilt, read_only=True) as b:
        assert subtopic_qrels_table(a, "div") == subtopic_qrels_table(b, "div")
    for measure in (["-m", "alpha-nDCG@20", "-m", "ERR-IA@20", "-m", "map"], ["-m", "ndeval"]):
        before, after = tmp_path / "before.csv", tmp_path / "after.csv"
        cli("evaluate", store, "--qrels", "div", *measure, "--format", "csv", "-o", before)
        cli("evaluate", rebuilt, "--qrels", "div", *measure, "--format", "csv", "-o", after)
        assert b"alpha-nDCG@20" in before.read_bytes()
        assert after.read_bytes() == before.read_bytes()


def test_a_subtopic_rounds_judgments_keep_their_subtopics_and_derive_the_same_version(
        tmp_path):
    from pooling.judging.assessors import add_assessor
    from pooling.judging.history import Judgment
    from pooling.judging.judgments import append_judgments
    from pooling.judging.rounds import create_round
    from pooling.judging.rules import derive_qrels
    from pooling.store.qrels import subtopic_qrels_table

    demo = Path(__file__).resolve().parents[2] / "collections" / "demo"
    store = tmp_path / "web.duckdb"
    with Store.create(store) as s:
        s.import_topics(demo / "subtopics.xml", format="trec-web")
        s.import_runs(sorted((demo / "runs").glob("*.run"))[:3])
        rnd = create_round(s, "d1", "depth", strategy_params={"depth": 2}, subtopics=True,
                           topics=["101", "102"]).round
        ada = add_assessor(s, "Ada")
        pool = s.con.execute("SELECT query_id, doc_id FROM pool_entries WHERE round_id = 'd1' "
                             "ORDER BY query_id, position").fetchall()
        append_judgments(s, [Judgment("d1", ada.assessor_id, q, d, (k + int(n)) % 3,
                                      part=n)
                             for k, (q, d) in enumerate(pool) for n in rnd.parts_of(q)])
        derive_qrels(s, "latest", "d1", round_id="d1")
        before = s.arrow("j", "SELECT query_id, doc_id, part, grade FROM judgments "
                              "ORDER BY seq").to_pylist()
    out = tmp_path / "release"
    cli("release", store, out)
    rebuilt = tmp_path / "rebuilt.duckdb"
    cli("import", "release", rebuilt, out)
    with Store(rebuilt) as b:
        after = b.arrow("j", "SELECT query_id, doc_id, part, grade FROM judgments "
                             "ORDER BY seq").to_pylist()
        assert after == before and all(r["part"] for r in after)
        derive_qrels(b, "latest", "again", round_id="d1")  # the history makes the same version
        assert subtopic_qrels_table(b, "again") == subtopic_qrels_table(b, "d1")
