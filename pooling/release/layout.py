"""Where each file of a release lives: every path of the bundle is named here, once.

The writer, the checksums, the dataset card, the datasheet and the rebuild all take their
paths from this module, so a file moved is moved everywhere.
"""

from __future__ import annotations

import re

MANIFEST = "release.json"  # what the bundle holds and the store facts the rebuild needs
CHECKSUMS = "SHA256SUMS"  # `sha256sum -c SHA256SUMS` checks every other file
CITATION = "CITATION.cff"
DATASHEET = "DATASHEET.md"
CARD = "README.md"  # the Hugging Face dataset card (YAML front matter), read first by people

TOPICS_TREC = "topics/topics.trec"
TOPICS_JSONL = "topics/topics.jsonl"
QRELS_DIR = "qrels"  # qrels/VERSION.qrels: plain TREC, no comment line
RUNS_DIR = "runs"  # runs/RUN.run: TREC run files, in trec_eval order
POOL_DIR = "pool"
POOL_ROUNDS = "pool/rounds.json"
POOL_ENTRIES = "pool/pool.tsv"
POOL_CONTRIBUTIONS = "pool/contributions.tsv"
JUDGMENTS = "judgments/judgments.tsv"
JUDGES = "judgments/assessors.tsv"
BEIR_CORPUS = "beir/corpus.jsonl"
BEIR_QUERIES = "beir/queries.jsonl"
BEIR_QRELS_DIR = "beir/qrels"  # beir/qrels/VERSION.tsv, with BEIR's header line
IRDS_DOCS = "ir_datasets/docs.tsv"
IRDS_QUERIES = "ir_datasets/queries.tsv"

# Parquet copies: the Hugging Face configs, and what `pooling import release` reads back.
PARQUET = {
    "topics": "data/topics.parquet",
    "qrels": "data/qrels.parquet",
    "qrels_strata": "data/qrels_strata.parquet",
    "documents": "data/documents.parquet",
    "runs": "data/runs.parquet",
    "pool": "data/pool.parquet",
    "pool_strata": "data/pool_strata.parquet",
    "contributions": "data/contributions.parquet",
    "judgments": "data/judgments.parquet",
}

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
# Where an input came from is released as its file name: the folders before it are the
# organiser's own disk (`../../data/qrels.txt` is released as `qrels.txt`).
FOLDERS = r"^.*[/\\]"


def source_name(source: str | None) -> str | None:
    """An input's recorded source as the release names it: its file name, no folders."""
    return None if source is None else re.sub(FOLDERS, "", source)


def file_stem(name: str) -> str:
    """A qrels version's or run's name as a file name: characters other than letters,
    digits and `._+-` become `_` (names are checked unique after this in the writer)."""
    stem = _UNSAFE.sub("_", name)
    return stem if stem not in ("", ".", "..") else f"_{stem}"


def qrels_path(stem: str) -> str:
    return f"{QRELS_DIR}/{stem}.qrels"


def sampled_qrels_path(stem: str) -> str:
    """A sampled version's five columns, as sample_eval.pl reads them."""
    return f"{QRELS_DIR}/{stem}.sampled.qrels"


def subtopic_qrels_path(stem: str) -> str:
    """A subtopic version's rows, as ndeval reads them (query_id subtopic doc_id relevance)."""
    return f"{QRELS_DIR}/{stem}.subtopic.qrels"


def beir_qrels_path(stem: str) -> str:
    return f"{BEIR_QRELS_DIR}/{stem}.tsv"


def run_path(stem: str) -> str:
    return f"{RUNS_DIR}/{stem}.run"
