"""Topics as text: TREC's SGML topics, JSON lines, BEIR's queries and ir_datasets' TSV.

A topic's query text, for the loaders that take one string, is its title, else its
description (the field TREC runs are most often made from).
"""

from __future__ import annotations

from typing import Any

from pooling.release.sinks import one_line


def query_text(row: dict[str, Any]) -> str:
    """The one-string query of a topic: its title, else its description, else empty."""
    return one_line(row.get("title") or row.get("description") or "")


def trec_topic(row: dict[str, Any]) -> str:
    """One `<top>` block, as TREC topic files are written (and trec_eval-era tools read)."""
    lines = ["<top>", f"<num> Number: {row['query_id']}", f"<title> {one_line(row.get('title'))}"]
    if row.get("description"):
        lines += ["", "<desc> Description:", one_line(row["description"])]
    if row.get("narrative"):
        lines += ["", "<narr> Narrative:", one_line(row["narrative"])]
    return "\n".join([*lines, "</top>", "", ""])


def jsonl_topic(row: dict[str, Any]) -> dict[str, Any]:
    """A topic's fields as one JSON object (the store's columns; empty fields left out)."""
    return {k: row[k] for k in ("query_id", "title", "description", "narrative", "extra")
            if row.get(k) is not None}


def beir_query(row: dict[str, Any]) -> dict[str, Any]:
    """BEIR's queries.jsonl line: `_id` and `text`, the other fields in `metadata`."""
    return {"_id": row["query_id"], "text": query_text(row),
            "metadata": {k: row[k] for k in ("description", "narrative") if row.get(k)}}


def irds_query(row: dict[str, Any]) -> str:
    """ir_datasets' TsvQueries line: query_id, tab, text."""
    return f"{row['query_id']}\t{query_text(row)}\n"
