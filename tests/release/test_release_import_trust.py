"""`pooling import release` reads only regular files inside the bundle, the files the manifest
names and SHA256SUMS lists, and refuses a bundle whose Parquet and TREC forms disagree; each
refusal names what is wrong, and no store is left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from release_data import cli

from pooling.release import import_release
from pooling.release.checksums import ChecksumError, file_sha256, write_checksums
from pooling.release.forms import FormsDisagree
from pooling.release.writer import ReleaseError


@pytest.fixture
def release(demo_release: Path, tmp_path: Path) -> Path:
    """A copy of the demo release to tamper with, in its own folder."""
    copy = tmp_path / "bundle" / "release"
    shutil.copytree(demo_release, copy)
    return copy


def nothing_imported(target: Path) -> bool:
    return not target.exists() and [p.name for p in target.parent.iterdir()] == []


def target_in(tmp_path: Path) -> Path:
    (tmp_path / "out").mkdir()
    return tmp_path / "out" / "rebuilt.duckdb"


def assert_refused(release: Path, tmp_path: Path, error: type[Exception], match: str) -> None:
    """Importing `release` raises `error` matching `match`, and leaves nothing behind."""
    target = target_in(tmp_path)
    with pytest.raises(error, match=match):
        import_release(release, target)
    assert nothing_imported(target)


def resign(release: Path) -> None:
    """Write SHA256SUMS again over what the release now holds: an altered release whose
    checksums match, the case checksums alone cannot catch."""
    (release / "SHA256SUMS").unlink()
    write_checksums(release)


def edit_manifest(release: Path, change) -> None:
    """Change release.json with `change(manifest)` and sign the release again."""
    manifest = json.loads((release / "release.json").read_text())
    change(manifest)
    (release / "release.json").write_text(json.dumps(manifest))
    resign(release)


def test_an_absolute_path_in_sha256sums_is_refused_naming_the_line(release, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of the release\n")
    with open(release / "SHA256SUMS", "a") as fh:
        fh.write(f"{file_sha256(outside)}  {outside}\n")
    assert_refused(release, tmp_path, ChecksumError,
                   rf"SHA256SUMS, line \d+: '{outside}' is not a file "
                   "inside the release")


@pytest.mark.parametrize("name", ["../outside.txt", "qrels/../../outside.txt", "./README.md",
                                  "qrels//truth.qrels"])
def test_a_name_that_climbs_out_or_is_not_plain_is_refused(release, tmp_path, name):
    (release.parent / "outside.txt").write_text("x\n")
    with open(release / "SHA256SUMS", "a") as fh:
        fh.write(f"{'0' * 64}  {name}\n")
    with pytest.raises(ChecksumError, match="is not a file inside the release"):
        import_release(release, target_in(tmp_path))


def test_a_symbolic_link_is_refused_even_to_identical_content(release, tmp_path):
    qrels = release / "qrels" / "truth.qrels"
    outside = tmp_path / "truth.qrels"
    shutil.copy(qrels, outside)
    qrels.unlink()
    qrels.symlink_to(outside)  # same bytes, so the checksum alone would pass
    assert_refused(release, tmp_path, ChecksumError,
                   r"qrels/truth\.qrels: a symbolic link .* never "
                   "followed")


def test_a_symbolic_link_to_a_folder_is_refused(release, tmp_path):
    runs = release / "runs"
    shutil.move(runs, tmp_path / "runs-elsewhere")
    runs.symlink_to(tmp_path / "runs-elsewhere", target_is_directory=True)
    with pytest.raises(ChecksumError, match=r"runs: a symbolic link"):
        import_release(release, target_in(tmp_path))


def outside_topics(tmp_path: Path) -> list[Path]:
    """Two Parquet files of 10 topics each, outside the release, with the topics' schema."""
    from pooling.release.tables import TOPICS_SCHEMA

    paths = []
    for k in range(2):
        path = tmp_path / "elsewhere" / f"part{k}.parquet"
        path.parent.mkdir(exist_ok=True)
        rows = [{"query_id": f"x{k}{i}", "title": "outside", "description": None,
                 "narrative": None, "extra": None, "source": None} for i in range(10)]
        pq.write_table(pa.Table.from_pylist(rows, schema=TOPICS_SCHEMA), path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("how", ["absolute", "glob"])
def test_a_manifest_naming_a_parquet_path_or_pattern_is_refused(release, tmp_path, how):
    parts = outside_topics(tmp_path)
    named = str(parts[0]) if how == "absolute" else str(parts[0].parent / "*.parquet")
    edit_manifest(release, lambda m: m["files"]["parquet"].__setitem__("topics", named))
    assert_refused(release, tmp_path, ReleaseError,
                   r"the Parquet table 'topics' is given as .* never "
                   "paths or patterns")


def test_a_parquet_table_named_by_a_pattern_inside_the_bundle_is_refused(release, tmp_path):
    edit_manifest(release, lambda m: m["files"]["parquet"].__setitem__("topics",
                                                                        "data/t*.parquet"))
    with pytest.raises(ReleaseError, match="never paths or patterns"):
        import_release(release, target_in(tmp_path))


def test_a_qrels_file_named_outside_the_bundle_is_refused(release, tmp_path):
    outside = tmp_path / "truth.qrels"
    shutil.copy(release / "qrels" / "truth.qrels", outside)

    def elsewhere(manifest):
        for v in manifest["qrels_versions"]:
            if v["name"] == "truth":
                v["file"] = str(outside)

    edit_manifest(release, elsewhere)
    with pytest.raises(ChecksumError, match="qrels version 'truth': the manifest names .* not "
                                            "one of the files SHA256SUMS lists"):
        import_release(release, target_in(tmp_path))


def rewrite_parquet(path: Path, change) -> None:
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def test_qrels_parquet_that_disagrees_with_the_trec_file_is_refused_naming_the_version(
        release, tmp_path):
    def flip(rows):
        row = next(r for r in rows if r["version"] == "round1-majority" and r["relevance"] > 0)
        row["relevance"] = 0

    rewrite_parquet(release / "data" / "qrels.parquet", flip)
    resign(release)
    assert_refused(release, tmp_path, FormsDisagree,
                   r"qrels version 'round1-majority': its Parquet rows "
                   r"and qrels/round1-majority\.qrels disagree on 1 "
                   r"row\(s\) \(topic \S+, document \S+: 0 in the "
                   r"Parquet, [12] in")


def test_run_parquet_that_disagrees_with_the_run_file_is_refused_naming_the_run(
        release, tmp_path):
    def rescore(rows):
        row = next(r for r in rows if r["run_id"] == "sysA_bm25")
        row["score"] += 1000.0

    rewrite_parquet(release / "data" / "runs.parquet", rescore)
    resign(release)
    with pytest.raises(FormsDisagree, match=r"run 'sysA_bm25': its Parquet rows and "
                                            r"runs/sysA_bm25\.run disagree on 1 row"):
        import_release(release, target_in(tmp_path))


def test_a_qrels_version_only_in_the_parquet_is_refused(release, tmp_path):
    rewrite_parquet(release / "data" / "qrels.parquet", lambda rows: rows.append(
        {"version": "smuggled", "query_id": "101", "doc_id": "D1", "relevance": 2}))
    resign(release)
    with pytest.raises(FormsDisagree, match="qrels version 'smuggled': in the release's "
                                            "Parquet but not in its manifest"):
        import_release(release, target_in(tmp_path))


def test_a_refusal_on_the_command_line_is_one_line_naming_the_table(release, tmp_path):
    rewrite_parquet(release / "data" / "qrels.parquet",
                    lambda rows: rows.__setitem__(0, {**rows[0], "relevance": 7}))
    resign(release)
    target = target_in(tmp_path)
    result = subprocess.run([sys.executable, "-m", "pooling", "import", "release", str(target),
                             str(release)], capture_output=True, text=True)
    assert result.returncode == 1
    assert "qrels version 'round1-majority': its Parquet rows" in result.stderr
    assert "disagree on 1 row(s)" in result.stderr and "Traceback" not in result.stderr
    assert nothing_imported(target)


def test_an_untouched_release_still_imports_and_counts_its_checked_files(release, tmp_path):
    target = target_in(tmp_path)
    out = cli("import", "release", target, release)
    listed = len((release / "SHA256SUMS").read_text().splitlines())
    assert f"checked {listed} files" in out and target.is_file()
    assert [p.name for p in target.parent.iterdir()] == ["rebuilt.duckdb"]
    assert not any(os.path.islink(p) for p in release.rglob("*"))


def test_topics_parquet_that_disagrees_with_the_topics_file_is_refused(release, tmp_path):
    def retitle(rows):
        rows[0]["title"] = "another topic altogether"

    rewrite_parquet(release / "data" / "topics.parquet", retitle)
    resign(release)
    assert_refused(release, tmp_path, FormsDisagree,
                   r"the topics: its Parquet rows and topics/topics\.jsonl disagree on 1 "
                   r"row\(s\) \(topic 101: another topic altogether in the Parquet, Electric "
                   "Vehicles Costs in")
