"""Inferred measures equal NIST's sample_eval.pl, run for real, byte for byte.

Random sampled qrels and runs (several seeds) carry every case the script treats specially:
score ties, documents outside the pool, unsampled pool documents retrieved, strata judged
whole, sampled, or not at all, topics with no relevant document, run topic ids with leading
zeros, topics over 1000 documents, grades 0/1/2 and `-G` gains; then the real bioCADDIE
sampled qrels with runs drawn over its pool and beyond it.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from pooling.evaluation.sampled import evaluate_sampled, sample_eval_text


@pytest.fixture(scope="module")
def sample_eval(shared_dir: Path) -> list[str]:
    """The command that runs the reference script (perl must be there under CI)."""
    script = shared_dir / "oracles" / "sample_eval" / "sample_eval.pl"
    perl = shutil.which("perl")
    if perl is None or not script.is_file():
        message = f"perl or {script} is missing"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return [perl, str(script)]


def _reference(command: list[str], qrels: Path, run: Path, per_query: bool,
               gains: list[str] | None = None) -> str:
    """The script's output. With -G it cannot also take -q from its command line (it counts
    its arguments), so -q is then set the way its own option sets it, before it runs."""
    if gains and per_query:
        program = f'$print_all_queries = 1; do "{command[1]}"; die $@ if $@;'
        args = [command[0], "-e", program, str(qrels), str(run), "-G", *gains]
    else:
        args = [*command, *(["-q"] if per_query else []), str(qrels), str(run),
                *(["-G", *gains] if gains else [])]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return done.stdout


def _random_case(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    topics = [str(t) for t in rng.sample(range(1, 400), 12)]
    for t in topics:
        pool = [f"d{rng.randint(0, 5000):05d}" for _ in range(rng.randint(1, 1300))]
        pool = list(dict.fromkeys(pool))
        kind = rng.random()
        for i, doc in enumerate(pool):
            stratum = "1" if i < len(pool) // 5 else ("2" if i < len(pool) // 2 else "3")
            rate = {"1": 1.0, "2": rng.choice([0.0, 0.3, 1.0]), "3": rng.choice([0.05, 0.2])}[stratum]
            if kind < 0.15:  # a topic with no relevant document
                grade = 0 if rng.random() < rate else -1
            else:
                grade = rng.choice([0, 0, 0, 1, 2]) if rng.random() < rate else -1
            qrels_lines.append(f"{t} 0 {doc} {stratum} {grade}")
        if rng.random() < 0.9:  # some qrels topics have no run lines
            n = rng.choice([3, 40, 300, 1100, 1500])
            ranked = rng.sample(pool, min(n, len(pool)))
            ranked += [f"x{rng.randint(0, 10**6)}" for _ in range(rng.randint(0, n // 3 + 1))]
            tid = rng.choice(["", "0", "00"]) + t
            for i, doc in enumerate(ranked):
                score = rng.choice([round(rng.random() * 3, 1), float(rng.randint(0, 4))])
                run_lines.append(f"{tid} Q0 {doc} {i + 1} {score} run{seed}")
    for t in ("9999", "0"):  # run topics the qrels do not have
        run_lines.append(f"{t} Q0 z1 1 1.0 run{seed}")
    rng.shuffle(run_lines)
    qrels, run = tmp_path / f"qrels{seed}.txt", tmp_path / f"run{seed}.txt"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    run.write_text("\n".join(run_lines) + "\n")
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("per_query", [True, False])
def test_random_sampled_qrels_and_runs_print_what_sample_eval_prints(
        sample_eval, tmp_path, seed, per_query):
    qrels, run = _random_case(tmp_path, seed)
    assert sample_eval_text(qrels, run, per_query=per_query) == _reference(
        sample_eval, qrels, run, per_query)


@pytest.mark.parametrize("gains", [["2=3"], ["1=0", "2=1"], ["2=10", "1=-1"], ["1=0.5"]])
def test_gains_remapped_with_G_print_what_sample_eval_prints(sample_eval, tmp_path, gains):
    qrels, run = _random_case(tmp_path, 11)
    assert sample_eval_text(qrels, run, per_query=True, gains=gains) == _reference(
        sample_eval, qrels, run, True, gains)


def test_a_document_listed_twice_keeps_its_last_score_and_counts_twice_in_num_ret(
        sample_eval, tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1 1\n1 0 b 1 0\n1 0 c 2 2\n1 0 d 2 -1\n1 0 e 2 0\n")
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 a 1 5 r\n1 Q0 b 2 4 r\n1 Q0 a 3 1 r\n1 Q0 c 4 4 r\n1 Q0 d 5 4 r\n")
    assert sample_eval_text(qrels, run, per_query=True) == _reference(sample_eval, qrels, run, True)


@pytest.fixture(scope="module")
def biocaddie(shared_dir: Path) -> Path:
    return shared_dir / "data" / "biocaddie-2016-sampled" / "qrels.sampled.txt"


def _biocaddie_run(qrels: Path, path: Path, seed: int) -> Path:
    rng = random.Random(seed)
    pools: dict[str, list[str]] = {}
    for line in qrels.read_text().split("\n"):
        if line.strip():
            t, _, doc, _, _ = line.split()
            pools.setdefault(t, []).append(doc)
    lines = []
    for t, docs in sorted(pools.items()):
        judged_first = docs[: rng.randint(0, 400)]
        ranked = judged_first + rng.sample(docs, min(len(docs), rng.randint(10, 1200)))
        ranked = list(dict.fromkeys(ranked)) + [str(rng.randint(10**6, 2 * 10**6))
                                                for _ in range(rng.randint(0, 300))]
        for i, doc in enumerate(ranked):
            lines.append(f"{t.zfill(3) if rng.random() < 0.5 else t} Q0 {doc} {i} "
                         f"{round(100 - i / 10 + rng.random(), 1)} bio{seed}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.shared
@pytest.mark.parametrize("seed", [21, 22])
def test_the_real_biocaddie_qrels_score_runs_as_sample_eval_does(sample_eval, biocaddie, tmp_path,
                                                                 seed):
    run = _biocaddie_run(biocaddie, tmp_path / "run.txt", seed)
    assert sample_eval_text(biocaddie, run, per_query=True) == _reference(
        sample_eval, biocaddie, run, True)


@pytest.mark.shared
def test_the_trec_layout_carries_the_same_values_as_the_script(sample_eval, biocaddie, tmp_path):
    run = _biocaddie_run(biocaddie, tmp_path / "run.txt", 23)
    reference = {}
    for line in _reference(sample_eval, biocaddie, run, True).splitlines():
        name, topic, value = line.split()
        reference[(name, topic)] = value
    result = evaluate_sampled(biocaddie, run, ["sample_eval"]).runs[0]
    for name, values in result.per_query.items():
        for q, v in zip(result.query_ids, values, strict=True):
            if (name, q) in reference:
                assert f"{v:.4f}" == f"{float(reference[(name, q)]):.4f}", (name, q)
    for name, value in result.summary.items():
        assert f"{float(value):.4f}" == f"{float(reference[(name, 'all')]):.4f}", name
