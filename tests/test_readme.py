"""The README stays a front door that works: the two commands first, short, and a tour of a
campaign that runs as written. The reference it points to is checked by tests/test_docs.py
(commands and options, links, the measure table, Python examples) on every page."""

from __future__ import annotations

import glob
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TOUR = "<!-- tour"


def test_readme_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["scripts/demo", "scripts/test"]


def test_readme_stays_a_front_door_and_links_the_manual():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, "reference belongs in docs/, one page per concept"
    assert "](docs/index.md)" in text


def tours() -> list[list[str]]:
    """Every tour block (a ```bash block after a `<!-- tour` comment), in the README's order:
    the first is the campaign; the others continue on the store it built."""
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(rf"^{TOUR}[^\n]*\n```bash\n(.*?)```", text, re.S | re.M)
    assert blocks, "README lacks the tour block (a ```bash block after a `<!-- tour` comment)"
    return [[line for line in block.splitlines() if line.strip()] for block in blocks]


def tour_lines() -> list[str]:
    return tours()[0]


def test_the_tour_is_about_ten_pooling_commands():
    lines = tour_lines()
    assert all(line.startswith("pooling ") for line in lines)
    assert 8 <= len(lines) <= 12


def test_every_further_tour_is_a_few_pooling_commands():
    for lines in tours()[1:]:
        assert all(line.startswith("pooling ") for line in lines)
        assert 2 <= len(lines) <= 10


@pytest.mark.slow
def test_the_tour_runs_end_to_end_on_the_demo_collection(tmp_path):
    """Each line of the tour, as a `python -m pooling` process in an empty directory that sees
    the repository's collections/ and scripts/ (the judge program runs with this Python)."""
    for name in ("collections", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for line in [line for tour in tours() for line in tour]:
        words = shlex.split(line, comments=True)[1:]
        args = [match for word in words
                for match in (sorted(glob.glob(word, root_dir=tmp_path)) if "*" in word else [word])]
        done = subprocess.run([sys.executable, "-m", "pooling", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    qrels = (tmp_path / "r1.qrels").read_text().splitlines()
    assert len(qrels) > 1000 and all(len(line.split()) == 4 for line in qrels)
    assert "<html" in (tmp_path / "leaderboard.html").read_text(encoding="utf-8").lower()
    sampled = (tmp_path / "sampled.md").read_text(encoding="utf-8")
    assert "[95% CI]" in sampled and "Estimates from a sample" in sampled
    diversity = (tmp_path / "diversity.md").read_text(encoding="utf-8").splitlines()
    rows = [line.split(" | ") for line in diversity if line.startswith("| ") and "sys" in line]
    assert "alpha-nDCG@20" in diversity[0] and len(rows) == 20  # every run, on five topics
    assert all(row[-2].strip() == "5" for row in rows)
    assert rows[-1][2] == "sysF_random"  # the near-random run ranks last on alpha-nDCG@20
    assert "qrels d1; 5 topics; ranked by alpha-nDCG@20" in "\n".join(diversity)
    crowd = [line.split() for line in (tmp_path / "c1-ds.qrels").read_text().splitlines()]
    pairs = {(q, d) for q, _, d, _ in crowd}
    assert len(crowd) == 295 and {q for q, _ in pairs} == {str(q) for q in range(101, 111)}
    gold = [line.split() for line in (ROOT / "collections/demo/truth.qrels").read_text().splitlines()]
    truth = {(q, d): g for q, _, d, g in gold}
    right = sum(truth.get((q, d), "0") == g for q, _, d, g in crowd)
    assert right / len(crowd) > 0.8  # Dawid-Skene over a crowd with spammers, against the truth
    nuggets = [line.split(" | ") for line in
               (tmp_path / "nuggets.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| ") and "rag" in line]
    assert [row[2] for row in nuggets][0] == "ragA_grounded" and len(nuggets) == 3
    assert all(row[-2].strip() == "10" for row in nuggets)  # ten answered topics each
