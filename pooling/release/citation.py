"""CITATION.cff: how to cite the collection, as Citation File Format 1.2.0 (type dataset).

Strings are written as JSON strings, which YAML reads as they are: a title or name with a
colon or a quote stays one value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pooling.release.layout import CITATION


def citation_text(manifest: dict[str, Any]) -> str:
    """The CFF text: cff-version, message, type, title, version, date-released, authors
    (each an entity by name; default: the collection's organisers), license when known."""
    q = json.dumps
    authors = manifest["authors"] or [f"The organisers of {manifest['title']}"]
    lines = [
        "cff-version: 1.2.0",
        f"message: {q('If you use this test collection, please cite it as below.')}",
        "type: dataset",
        f"title: {q(manifest['title'])}",
        f"version: {q(manifest['version'])}",
        f"date-released: {manifest['released_at'][:10]}",
        "authors:",
        *(f"  - name: {q(a)}" for a in authors),
        f"abstract: {q(_abstract(manifest))}",
    ]
    if manifest["license"] not in ("unknown", "other"):
        lines.append(f"license: {q(manifest['license'])}")
    return "\n".join(lines) + "\n"


def _abstract(m: dict[str, Any]) -> str:
    versions = ", ".join(v["name"] for v in m["qrels_versions"]) or "none"
    return (f"An information-retrieval test collection: {m['topics']} topics, qrels versions "
            f"{versions}, {len(m['runs'])} runs, built and judged with pooling.")


def write_citation(root: Path, manifest: dict[str, Any]) -> None:
    (root / CITATION).write_text(citation_text(manifest), encoding="utf-8")
