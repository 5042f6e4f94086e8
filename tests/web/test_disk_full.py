"""The disk under a served store fills up: clear errors, the server still answers, and no
acknowledged judgment is lost. The store lives on a small tmpfs that the test mounts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import duckdb
import httpx
import pytest
from conftest import REPO_ROOT, build_campaign, start_server

pytestmark = pytest.mark.slow


@pytest.fixture
def small_disk(tmp_path):
    """A 48 MB tmpfs at tmp_path/disk (needs root, as CI has; elsewhere the test is skipped)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        if os.environ.get("CI") and os.geteuid() == 0:
            pytest.fail(f"cannot mount a tmpfs as root: {done.stderr}")
        pytest.skip(f"mounting a tmpfs needs root: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(directory) -> None:
    """Write a file until the file system is full."""
    block = b"\0" * (1 << 16)
    with open(directory / "filler", "wb") as fh:
        try:
            while True:
                fh.write(block)
                fh.flush()
        except OSError:
            pass


def test_a_full_disk_refuses_judgments_plainly_and_loses_none_acknowledged(small_disk, tmp_path):
    campaign = build_campaign(small_disk)
    server = start_server(campaign.path)
    try:
        ann = httpx.Client(base_url=server.url, follow_redirects=False, timeout=30)
        assert ann.get("/login", params={"token": campaign.tokens["ann"]}).status_code == 303
        csrf = re.search(r'name="csrf" value="([^"]+)"', ann.get("/").text).group(1)

        def judge(doc: str, sid: str) -> httpx.Response:
            return ann.post("/rounds/r1/topics/1/judgments", headers={"X-CSRF-Token": csrf},
                            json={"doc_id": doc, "grade": 1, "submission_id": sid})

        acked = ["full-disk-first-0001"]
        assert judge("d1", acked[0]).status_code == 200
        fill(small_disk)
        # Corrections (new judgments) until the disk refuses one: the last free bytes of the
        # store's files may still take a few.
        refused = None
        for i in range(500):
            sid = f"full-disk-correction-{i:04d}"
            answer = judge(("d2", "d3")[i % 2], sid)
            if answer.status_code == 200:
                acked.append(sid)
                continue
            assert answer.status_code == 503, answer.text
            assert "could not be stored" in answer.json()["error"]
            assert "send it again" in answer.json()["error"]
            refused = (("d2", "d3")[i % 2], sid)
            break
        assert refused is not None, "the full disk never refused a judgment"
        assert ann.get("/rounds/r1/topics/1").status_code == 200  # pages still answer
        assert judge(*refused).status_code == 503  # still full: still refused, plainly
        late = tmp_path / "late.run"
        late.write_text("".join(f"1 Q0 z{i} {i + 1} {1000 - i} late\n" for i in range(20000)))
        cli = subprocess.run([sys.executable, "-m", "pooling", "import", "runs", str(campaign.path),
                              str(late)], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
        assert cli.returncode == 1 and "Traceback" not in cli.stderr, cli.stderr
        assert cli.stderr.startswith("Error: ")
        (small_disk / "filler").unlink()
        again = judge(*refused)
        assert again.status_code == 200 and again.json()["duplicate"] is False, again.text
        acked.append(refused[1])
        assert judge("d4", "full-disk-after-0001").status_code == 200
        acked.append("full-disk-after-0001")
    finally:
        server.stop()
    copy = tmp_path / "after.duckdb"
    shutil.copy(campaign.path, copy)
    con = duckdb.connect(str(copy), read_only=True)
    stored = [sid for (sid,) in con.execute("SELECT submission_id FROM judgments ORDER BY seq").fetchall()]
    assert sorted(stored) == sorted(acked)  # every acknowledged one, once; nothing else
    assert con.execute("SELECT count(*) FROM runs WHERE run_id = 'late'").fetchone() == (0,)
