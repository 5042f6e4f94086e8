"""The release tests' data: a demo store with a judged round, and the CLI run in process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import pooling.cli  # noqa: F401  (registers every command)
from pooling.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "collections" / "demo"


def cli(*args: object) -> str:
    """Run `pooling ARGS` in this process; fail with its output unless it exits 0."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, f"pooling {' '.join(map(str, args))}:\n{result.output}" + (
        f"\n{result.exception!r}" if result.exception else "")
    return result.output


def build_demo_store(folder: Path) -> Path:
    """The demo of scripts/demo, steps 1 and 3: topics, documents, 20 runs, the truth qrels,
    a depth-20 round judged by two simulated assessors with 10% overlap, and its majority."""
    store = folder / "demo.duckdb"
    cli("init", store)
    cli("import", "topics", store, DEMO / "topics.jsonl")
    cli("import", "docs", store, DEMO / "documents.jsonl")
    cli("import", "runs", store, *sorted((DEMO / "runs").glob("*.run")), "--meta",
        DEMO / "runs.tsv", "--strict")
    cli("import", "qrels", store, DEMO / "truth.qrels", "--name", "truth")
    cli("pool", store, "--round", "round1", "--strategy", "depth", "--depth", "20",
        "--runs", "pooled")
    cli("assessors", "add", store, "Ada")
    cli("assessors", "add", store, "Bo")
    cli("assign", store, "--round", "round1", "--assessors", "ada,bo", "--overlap", "0.1")
    for who in ("ada", "bo"):
        batch = folder / f"batch-{who}.csv"
        cli("batch", "export", store, "--round", "round1", "--assessor", who, "-o", batch)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "simulate_assessor.py"),
                        str(batch), str(DEMO / "truth.qrels"), "--error-rate", "0.1",
                        "--seed", str(len(who))], check=True, capture_output=True)
        cli("batch", "import", store, "--round", "round1", "--assessor", who, batch)
    cli("qrels", "derive", store, "--round", "round1", "--rule", "majority", "--name",
        "round1-majority")
    return store


def documents_seen(release: Path, cache: Path) -> dict[str, int]:
    """How many documents each reader of a release sees: Hugging Face's `documents` config,
    BEIR's corpus, ir_datasets' docs, and the figure the datasheet states."""
    import os
    import re

    import ir_datasets
    from beir.datasets.data_loader import GenericDataLoader

    os.environ.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(cache / "hf"))
    import datasets

    hf = datasets.load_dataset(str(release), "documents", split="test",
                               cache_dir=str(cache / "datasets"))
    version = next((release / "beir" / "qrels").iterdir()).stem
    corpus, _, _ = GenericDataLoader(data_folder=str(release / "beir")).load(split=version)
    local = ir_datasets.create_dataset(docs_tsv=str(release / "ir_datasets" / "docs.tsv"))
    stated = re.search(r"- Documents released: ([\d,]+)", (release / "DATASHEET.md").read_text())
    assert stated is not None
    return {"datasets": hf.num_rows, "beir": len(corpus),
            "ir_datasets": sum(1 for _ in local.docs_iter()),
            "datasheet": int(stated.group(1).replace(",", ""))}
