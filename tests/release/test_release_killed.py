"""A release or an import killed with SIGKILL half-way (a real process, stopped at a named
point by `POOLING_KILL_AT=at:POINT`) leaves no output and a work directory that the next run
removes; the next run's output is complete and correct. A live writer's work is never
removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from release_data import cli

from pooling.release.checksums import verify_checksums
from pooling.release.partial import sweep, work_dir, work_dirs
from pooling.store import Store


def pooling(*args: object, kill_at: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("POOLING_KILL_AT", None)
    if kill_at:
        env["POOLING_KILL_AT"] = f"at:{kill_at}"
    return subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], env=env,
                          capture_output=True, text=True)


def test_a_killed_release_leaves_nothing_under_out_and_the_next_one_cleans_up(
        demo_store, tmp_path):
    out = tmp_path / "release"
    killed = pooling("release", demo_store, out, "--no-pool-bias", kill_at="release:pool")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists()
    (stale,) = work_dirs(out)  # what the killed process had written so far
    assert (stale / "release" / "qrels" / "truth.qrels").is_file()
    assert not (stale / "release" / "SHA256SUMS").exists()

    again = pooling("release", demo_store, out, "--no-pool-bias")
    assert again.returncode == 0, again.stderr
    assert work_dirs(out) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["release"]
    checked = verify_checksums(out)
    clean = tmp_path / "clean" / "release"
    cli("release", demo_store, clean, "--no-pool-bias")
    assert checked == verify_checksums(clean)
    for name in checked:
        if name not in ("release.json", "DATASHEET.md", "CITATION.cff"):  # hold the date
            assert (out / name).read_bytes() == (clean / name).read_bytes(), name


def test_a_killed_import_leaves_no_store_and_the_next_one_cleans_up(demo_release, demo_store,
                                                                   tmp_path):
    target = tmp_path / "rebuilt.duckdb"
    killed = pooling("import", "release", target, demo_release,
                     kill_at="import-release:judgments")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not target.exists()
    (stale,) = work_dirs(target)
    assert (stale / "store.duckdb").exists() or (stale / "store.duckdb.wal").exists()

    again = pooling("import", "release", target, demo_release)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rebuilt.duckdb"]
    count = "SELECT count(*), count(DISTINCT query_id) FROM judgments"
    with Store(target, read_only=True) as b, Store(demo_store, read_only=True) as a:
        assert b.one("judgments", count) == a.one("judgments", count)
        assert b.qrels_versions() == a.qrels_versions()


def test_a_live_work_directory_is_never_swept(tmp_path):
    destination = tmp_path / "release"
    with work_dir(destination) as live:
        (live / "half.txt").write_text("being written")
        assert sweep(destination) == []
        assert (live / "half.txt").is_file()
    assert work_dirs(destination) == []


def test_a_work_directory_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with work_dir(tmp_path / "release") as work:
            assert (work.stat().st_mode & 0o777) == 0o755
    finally:
        os.umask(old)
