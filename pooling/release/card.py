"""The dataset card: README.md with the YAML front matter the Hugging Face hub reads.

Each Parquet table with rows is a config (`configs:` with `data_files`), loadable with
`datasets.load_dataset(DIR, CONFIG, split="test")`; the qrels are the default config. A
table without rows is no config: `datasets` refuses a split with no data. The body says what
the bundle holds and how each library loads it; every value from input in it is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pooling.release import layout
from pooling.release import markdown as md

SPLIT = "test"  # a test collection is for testing
_DESCRIBE = {
    "qrels": "relevance judgments of every released qrels version (column `version`)",
    "topics": "the topics: query_id, title, description, narrative",
    "documents": "the documents (ids, or texts when released with them)",
    "runs": "the submitted runs: run_id, query_id, doc_id, rank, score",
    "pool": "the pool of each judging round, in its queue order",
    "contributions": "which pooled run contributed each pool entry, at which rank",
    "judgments": "the judgment history, people pseudonymised",
    "qrels_strata": "strata of the sampled qrels versions",
    "pool_strata": "strata and inclusion probabilities of sampled rounds",
}


def card_text(manifest: dict[str, Any]) -> str:
    """README.md: front matter (configs, license, pretty_name, tags), then the body."""
    q = json.dumps
    rows = manifest.get("parquet_rows") or {}
    parquet = {k: v for k, v in manifest["files"]["parquet"].items() if rows.get(k, 1)}
    order = ["qrels", *[k for k in parquet if k != "qrels"]]
    head = ["---", f"pretty_name: {q(manifest['title'])}",
            f"license: {q(manifest['license'] if manifest['license'] != 'unknown' else 'other')}",
            "task_categories:", "  - text-retrieval", "tags:", "  - information-retrieval",
            "  - trec", "  - test-collection", "configs:"]
    for name in order:
        if name not in parquet:
            continue
        head += [f"  - config_name: {name}", "    data_files:",
                 f"      - split: {SPLIT}", f"        path: {q(parquet[name])}"]
        if name == "qrels":
            head.append("    default: true")
    head.append("---")
    default = manifest["default_qrels"]
    versions = "\n".join(
        f"- {md.text(v['name'])}{' (default)' if v['name'] == default else ''}: "
        f"{md.text(v['method'])}, "
        f"{v['n_rows']:,} judgments on {v['n_topics']:,} topics, grades "
        f"{', '.join(map(str, v['grades']))}; `{v['file']}`"
        for v in manifest["qrels_versions"]) or "- none"
    configs = "\n".join(f"- `{k}`: {_DESCRIBE.get(k, k)}" for k in order if k in parquet)
    body = f"""
# {md.text(manifest['title'])}

An information-retrieval test collection ({manifest['topics']:,} topics,
{len(manifest['runs'])} runs). How it was built (pool, judging effort, agreement, pool bias)
is in [{layout.DATASHEET}]({layout.DATASHEET}); how to cite it, in
[{layout.CITATION}]({layout.CITATION}). `sha256sum -c {layout.CHECKSUMS}` checks every file.

## Qrels versions

{versions}

## Configs (Parquet, split `{SPLIT}`)

{configs}

## Loading

- TREC tools (trec_eval, pytrec_eval, ir_measures, PyTerrier): `{layout.QRELS_DIR}/VERSION.qrels`,
  `{layout.TOPICS_TREC}`, `{layout.RUNS_DIR}/RUN.run`.
- Hugging Face: `datasets.load_dataset("DIR", "qrels", split="{SPLIT}")`.
- BEIR: `GenericDataLoader(data_folder="DIR/beir").load(split="VERSION")`.
- ir_datasets: `ir_datasets.create_dataset(docs_tsv="DIR/{layout.IRDS_DOCS}",
  queries_tsv="DIR/{layout.IRDS_QUERIES}", qrels_trec="DIR/{layout.QRELS_DIR}/VERSION.qrels")`.
- pooling: `pooling import release STORE DIR` rebuilds the store.
"""
    return "\n".join(head) + "\n" + body


def write_card(root: Path, manifest: dict[str, Any]) -> None:
    (root / layout.CARD).write_text(card_text(manifest), encoding="utf-8")
