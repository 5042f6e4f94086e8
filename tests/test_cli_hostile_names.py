"""Names holding `/`, `?`, `#`, `%`, spaces and `[brackets]` go through the CLI whole: a round,
a run tag, topic and doc ids and a qrels version are printed as given, stored as given, and
never name a file or folder."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from pooling.store import Store

REPO_ROOT = Path(__file__).resolve().parents[1]
ROUND = "a/b c?#%[x]"
TAG = "[A]/1"
QRELS = "q/1 ?#%[i]"
DOCS = ["x/1", "x?2", "[b]x3"]


def pooling(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pooling", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "COLUMNS": "300", "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0, done.stderr
    return done


def test_hostile_names_are_printed_stored_and_exported_whole(tmp_path):
    (tmp_path / "a.run").write_text("".join(f"7/2 Q0 {d} {i + 1} {9 - i} {TAG}\n"
                                            for i, d in enumerate(DOCS)))
    store = "s.duckdb"
    pooling("init", store, cwd=tmp_path)
    assert f"imported run {TAG} " in pooling("import", "runs", store, "a.run", cwd=tmp_path).stdout
    pooled = pooling("pool", store, "--round", ROUND, "--strategy", "depth", "--depth", "5",
                     cwd=tmp_path)
    assert pooled.stdout.startswith(f"round {ROUND}: depth")
    added = pooling("assessors", "add", store, "Ann [b]", cwd=tmp_path).stdout
    assert "(Ann [b])" in added
    with Store(tmp_path / store, read_only=True) as s:
        (ann,) = [r[0] for r in s.con.execute("SELECT assessor_id FROM assessors").fetchall()]
    pooling("assign", store, "--round", ROUND, "--assessors", ann, cwd=tmp_path)
    pooling("batch", "export", store, "--round", ROUND, "--assessor", ann, "-o", "batch.csv",
            cwd=tmp_path)
    with open(tmp_path / "batch.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["round_id"], r["query_id"], r["doc_id"]) for r in rows} == {(ROUND, "7/2", d) for d in DOCS}
    with open(tmp_path / "judged.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**r, "grade": "1" if r["doc_id"] != "x?2" else "0"} for r in rows)
    pooling("batch", "import", store, "--round", ROUND, "--assessor", ann, "judged.csv", cwd=tmp_path)
    derived = pooling("qrels", "derive", store, "--rule", "latest", "--name", QRELS, "--round",
                      ROUND, cwd=tmp_path)
    assert derived.stdout.startswith(f"qrels version {QRELS}: 3 judgments")
    exported = pooling("export", "qrels", store, "--qrels", QRELS, "-o", "out.qrels", cwd=tmp_path)
    assert f"wrote qrels version {QRELS} to out.qrels" in exported.stderr
    lines = [line for line in (tmp_path / "out.qrels").read_text().splitlines() if not line.startswith("#")]
    assert sorted(lines) == sorted(["7/2 0 x/1 1", "7/2 0 x?2 0", "7/2 0 [b]x3 1"])
    info = pooling("info", store, cwd=tmp_path).stdout
    assert f" {TAG} " in info and f"{QRELS} *" in info
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.run", "batch.csv", "judged.csv", "out.qrels", "out.qrels.meta.json", "s.duckdb"]
