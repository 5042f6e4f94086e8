"""What the crowd commands show and write: `crowd simulate` reports its progress (a bar on a
terminal), and `crowd quality -o FILE` writes its report in each format it offers."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from pseudo_terminal import in_terminal

from pooling.crowds.simulation import play_round, simulated_crowd, truth_grades
from pooling.judging.rounds import create_round
from pooling.store import Store


@pytest.fixture
def crowd_store(tmp_path):
    """One run of 30 documents on topics 1 and 2, an expert's qrels over them, and a crowd
    round c1 (depth 30, K = 2): enough answers that a progress bar is drawn while they come."""
    lines = [f"{q} Q0 d{q}-{i:02d} {i + 1} {30 - i} A" for q in ("1", "2") for i in range(30)]
    (tmp_path / "a.run").write_text("\n".join(lines) + "\n")
    (tmp_path / "expert.qrels").write_text("".join(
        f"{q} 0 d{q}-{i:02d} {i % 3}\n" for q in ("1", "2") for i in range(30)))
    path = tmp_path / "crowd.duckdb"
    with Store.create(path) as s:
        s.import_runs([tmp_path / "a.run"])
        s.import_qrels(tmp_path / "expert.qrels", name="expert")
        create_round(s, "c1", "depth", strategy_params={"depth": 30}, redundancy=2)
    return path


class Recorded:
    """A Progress that keeps every call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def start(self, description: str, total: int | None = None) -> None:
        self.calls.append(("start", description, total))

    def advance(self, amount: int = 1) -> None:
        self.calls.append(("advance", amount))

    def finish(self) -> None:
        self.calls.append(("finish",))


def test_a_simulated_crowd_starts_its_progress_before_advancing_it_and_finishes_it(crowd_store):
    progress = Recorded()
    with Store(crowd_store) as s:
        play = play_round(s, "c1", truth_grades(s, "expert"), simulated_crowd(4, (0, 1, 2)),
                          task_size=3, progress=progress)
    assert progress.calls[0] == ("start", "simulated crowd judging round c1", None)
    assert progress.calls[-1] == ("finish",)
    advanced = [c[1] for c in progress.calls[1:-1]]
    assert all(c[0] == "advance" for c in progress.calls[1:-1])
    assert sum(advanced) == play.answers == 120  # 60 pairs, K = 2


def test_crowd_simulate_shows_its_progress_on_a_terminal(crowd_store):
    text = in_terminal(["crowd", "simulate", str(crowd_store), "--round", "c1", "--truth",
                        "expert", "--workers", "4"], 120)
    assert "simulated crowd judging round c1" in text
    assert "round c1: 120 answers" in text


@pytest.fixture
def judged(crowd_store):
    with Store(crowd_store) as s:
        play_round(s, "c1", truth_grades(s, "expert"), simulated_crowd(4, (0, 1, 2), seed=1),
                   task_size=3)
    return crowd_store


def quality(store, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pooling", "crowd", "quality", str(store),
                           "--round", "c1", "--gold", "expert", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_crowd_quality_writes_its_report_to_a_file_as_it_prints_it(judged, tmp_path, fmt):
    printed = quality(judged, "--format", fmt)
    assert printed.returncode == 0, printed.stderr
    out = tmp_path / f"quality.{fmt}"
    written = quality(judged, "--format", fmt, "-o", out)
    assert written.returncode == 0, written.stderr
    assert written.stdout == "" and f"wrote {out}" in written.stderr
    text = out.read_text()
    assert text == printed.stdout
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert sorted(r["assessor_id"] for r in rows) == [f"worker-0{i}" for i in range(1, 5)]
    elif fmt == "json":
        assert len(json.loads(text)["workers"]) == 4
    else:
        assert text.startswith("round c1: 4 worker(s), gold expert") and "worker-04" in text
