"""What `pooling release` writes: a directory refused when it exists, written whole or not at
all, with plain TREC qrels, a valid citation, a dataset card, a datasheet from the store, the
pool's provenance, and people under stable pseudonyms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from release_data import cli

from pooling.release import ReleaseOptions, write_release
from pooling.release.writer import ReleaseError
from pooling.store import Store


def test_an_existing_directory_is_refused_unless_forced(demo_store, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    with Store(demo_store) as s, pytest.raises(ReleaseError, match="exists; .* --force"):
        write_release(s, out)
    assert (out / "mine.txt").read_text() == "keep me"
    with Store(demo_store) as s:
        write_release(s, out, ReleaseOptions(force=True, pool_bias=False))
    assert not (out / "mine.txt").exists()
    assert (out / "SHA256SUMS").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_failure_half_way_leaves_nothing_under_out(demo_store, tmp_path, monkeypatch):
    import pooling.release.citation as citation

    def broken(root, manifest):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(citation, "write_citation", broken)
    with Store(demo_store) as s, pytest.raises(OSError, match="No space"):
        write_release(s, tmp_path / "out", ReleaseOptions(pool_bias=False))
    assert list(tmp_path.iterdir()) == []


def test_qrels_files_are_plain_trec_without_a_comment_line(demo_release, demo_store):
    with Store(demo_store, read_only=True) as s:
        for version in s.qrels_versions():
            lines = (demo_release / "qrels" / f"{version}.qrels").read_text().splitlines()
            assert not any(line.startswith("#") for line in lines)
            assert [line.split() for line in lines] == [
                [q, "0", d, str(r)] for q, d, r in zip(*(s.qrels_table(version)[c].to_pylist()
                                                         for c in ("query_id", "doc_id",
                                                                   "relevance")), strict=True)]


def test_the_citation_is_cff_1_2_0_with_the_required_keys(demo_release):
    cff = yaml.safe_load((demo_release / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert {"cff-version", "message", "title", "authors"} <= set(cff)
    assert cff["title"] == "Demo: a test collection"
    assert cff["type"] == "dataset" and cff["license"] == "CC-BY-4.0"
    assert all("name" in a or "family-names" in a for a in cff["authors"])


def test_the_dataset_card_lists_every_parquet_table_as_a_config(demo_release):
    text = (demo_release / "README.md").read_text()
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n")[1])
    configs = {c["config_name"]: c for c in front["configs"]}
    assert {"qrels", "topics", "documents", "runs", "pool", "contributions",
            "judgments"} <= set(configs)
    assert configs["qrels"]["default"] is True
    for config in configs.values():
        (files,) = config["data_files"]
        assert files["split"] == "test" and (demo_release / files["path"]).is_file()
    assert front["license"] == "CC-BY-4.0"


def test_the_datasheet_states_what_the_store_holds(demo_release):
    sheet = (demo_release / "DATASHEET.md").read_text()
    for heading in ("## Composition", "## Collection process: the pool", "## Judging effort",
                    "## Agreement", "## Reusability: leave-one-run-out pool bias",
                    "## Qrels versions and their rules"):
        assert heading in sheet
    assert "| round1 | depth | depth 20 | 16 | 50 | 4,998 | no |" in sheet
    assert "Judgments: 5,501, by 2 people, 0 simulated workers and 0 automatic judge(s)" in sheet
    assert "People with people, round round1:" in sheet
    assert "with a depth-20 pool" in sheet and "**Reusability:**" in sheet
    assert '"rule": "majority"' in sheet
    assert "24,058 judged pairs on 50 topics" in sheet


def test_every_contribution_is_the_runs_rank_of_a_pooled_document(demo_release, demo_store):
    rows = [line.split("\t") for line in
            (demo_release / "pool" / "contributions.tsv").read_text().splitlines()[1:]]
    assert rows
    with Store(demo_store, read_only=True) as s:
        table = s.run_table("sysA_neural")
    ranks: dict[tuple[str, str], int] = {}
    seen: dict[str, int] = {}
    for q, d in zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(), strict=True):
        seen[q] = seen.get(q, 0) + 1
        ranks[(q, d)] = seen[q]
    mine = {(q, d, int(k)) for r, q, d, run, k in rows if run == "sysA_neural"}
    # A depth-20 pool: each pooled run contributed exactly its top 20 of every topic.
    assert mine == {(q, d, k) for (q, d), k in ranks.items() if k <= 20}


def test_people_are_pseudonymised_stably_and_a_model_judge_keeps_its_description(
        demo_store, tmp_path):
    import shutil

    store = tmp_path / "s.duckdb"
    shutil.copy(demo_store, store)
    with Store(store) as s:
        s.sql("judge", "INSERT INTO assessors (assessor_id, name, role, token_sha256, created_at, "
              "kind, backend, model, prompt_sha256) VALUES ('words', 'words', 'assessor', '', "
              "now(), 'model', 'openai', 'gpt-x', 'abc123')")
        s.sql("judged", "INSERT INTO judgments (submission_id, round_id, query_id, doc_id, "
              "assessor_id, kind, grade, judged_at) VALUES ('j1', 'round1', '101', 'D02033', "
              "'words', 'judge', 1, now())")
    first, second = tmp_path / "one", tmp_path / "two"
    cli("release", store, first, "--no-pool-bias")
    cli("release", store, second, "--no-pool-bias", "--runs", "none")
    people = (first / "judgments" / "assessors.tsv").read_text()
    assert people == (second / "judgments" / "assessors.tsv").read_text()
    assert "words\tmodel\topenai\tgpt-x\tabc123" in people
    for path in first.rglob("*"):
        if path.is_file() and path.suffix in (".tsv", ".json", ".md", ".jsonl"):
            text = path.read_text()
            assert "ada" not in text.split() and "Ada" not in text and "\tbo\t" not in text
    manifest = json.loads((first / "release.json").read_text())
    names = {a["name"] for a in manifest["assessors"] if a["kind"] == "person"}
    assert len(names) == 2 and all(n.startswith("assessor-") for n in names)
    assert not (second / "runs").exists()


@pytest.mark.parametrize("runs, expected", [("all", 20), ("pooled", 16), ("none", 0)])
def test_runs_all_pooled_or_none(demo_store, tmp_path, runs, expected):
    out = tmp_path / "out"
    cli("release", demo_store, out, "--runs", runs, "--no-pool-bias", "--documents", "none")
    assert len(list(Path(out).glob("runs/*.run"))) == expected
    assert not (out / "data" / "documents.parquet").exists()


def test_documents_text_only_when_asked(demo_store, tmp_path):
    import pyarrow.parquet as pq

    ids, text = tmp_path / "ids", tmp_path / "text"
    cli("release", demo_store, ids, "--no-pool-bias", "--runs", "none", "--qrels", "truth")
    cli("release", demo_store, text, "--no-pool-bias", "--runs", "none", "--qrels", "truth",
        "--documents", "text")
    assert pq.read_table(ids / "data" / "documents.parquet")["text"].null_count == 3064
    assert pq.read_table(text / "data" / "documents.parquet")["text"].null_count == 0
    assert [p.name for p in (ids / "qrels").iterdir()] == ["truth.qrels"]
