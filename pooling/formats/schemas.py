"""Canonical Arrow schemas: every input is converted once, at the boundary, into one of these."""

from __future__ import annotations

import pyarrow as pa

# A parsed run file: one row per retrieved document, in file order.
RUN_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("doc_id", pa.string()),
        ("rank", pa.int64()),  # as given; never used for ordering
        ("score", pa.float64()),
        ("tag", pa.string()),
    ]
)

# Qrels: one judgment per (query_id, doc_id); negative grades mean "pooled, not judged".
QRELS_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("doc_id", pa.string()),
        ("relevance", pa.int64()),
    ]
)

# Topics: extra holds any further fields as a JSON object text (or null).
TOPICS_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("title", pa.string()),
        ("description", pa.string()),
        ("narrative", pa.string()),
        ("extra", pa.string()),
    ]
)

# Documents: extra holds any further fields as a JSON object text (or null).
DOCUMENTS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
        ("url", pa.string()),
        ("extra", pa.string()),
    ]
)
