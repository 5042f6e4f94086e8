"""The store's tables as a release holds them: one query and one Arrow schema per table.

Each query is read as a stream of batches (`batches`). The judgment history names people by
pseudonym (the `_released_names` table the writer registers), numbers submissions anew
(`submission-1`, `submission-2`, ... in the history's order: the ids clients chose can carry
anything, a name included) and leaves out people's free-text notes; an automatic judge's raw
answer (its rationale) is kept. Pools, contributions and judgments are those of the released
rounds only (the `_released_rounds` table, `released_rounds`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import StoreError
from pooling.release.layout import FOLDERS
from pooling.release.sinks import BATCH_ROWS
from pooling.store.core import Store

NAMES_TABLE = "_released_names"  # (assessor_id, name) registered by the writer
ROUNDS_TABLE = "_released_rounds"  # (round_id) of the rounds released, registered as well
# A judgment is released when its round is (one made outside any round always is).
RELEASED_JUDGMENT = f"(round_id IS NULL OR round_id IN (SELECT round_id FROM {ROUNDS_TABLE}))"

TOPICS_SCHEMA = pa.schema([("query_id", pa.string()), ("title", pa.string()),
                           ("description", pa.string()), ("narrative", pa.string()),
                           ("extra", pa.string()), ("source", pa.string())])
TOPICS = ("SELECT query_id, title, description, narrative, extra, source FROM topics "
          "ORDER BY query_id")

QRELS_SCHEMA = pa.schema([("version", pa.string()), ("query_id", pa.string()),
                          ("doc_id", pa.string()), ("relevance", pa.int64())])
QRELS = ("SELECT version, query_id, doc_id, relevance FROM qrels "
         "WHERE version IN (SELECT UNNEST(?::VARCHAR[])) ORDER BY version, query_id, doc_id")

QRELS_STRATA_SCHEMA = pa.schema([("version", pa.string()), ("query_id", pa.string()),
                                 ("doc_id", pa.string()), ("stratum", pa.string())])
QRELS_STRATA = ("SELECT version, query_id, doc_id, stratum FROM qrels_strata "
                "WHERE version IN (SELECT UNNEST(?::VARCHAR[])) "
                "ORDER BY version, query_id, doc_id")

DOCUMENTS_SCHEMA = pa.schema([("doc_id", pa.string()), ("title", pa.string()),
                              ("text", pa.string()), ("url", pa.string())])
DOCUMENT_IDS = ("SELECT doc_id, NULL::VARCHAR AS title, NULL::VARCHAR AS text, "
                "NULL::VARCHAR AS url FROM documents ORDER BY doc_id")
DOCUMENT_TEXTS = "SELECT doc_id, title, text, url FROM documents ORDER BY doc_id"
# BEIR's and ir_datasets' corpus also lists judged documents the store has no row for.
JUDGED_WITHOUT_ROW = ("SELECT DISTINCT doc_id, NULL::VARCHAR AS title, NULL::VARCHAR AS text, "
                      "NULL::VARCHAR AS url FROM qrels WHERE version IN "
                      "(SELECT UNNEST(?::VARCHAR[])) AND doc_id NOT IN "
                      "(SELECT doc_id FROM documents) ORDER BY doc_id")

RUNS_SCHEMA = pa.schema([("run_id", pa.string()), ("query_id", pa.string()),
                         ("doc_id", pa.string()), ("rank", pa.int64()), ("score", pa.float64())])

POOL_SCHEMA = pa.schema([("round_id", pa.string()), ("query_id", pa.string()),
                         ("doc_id", pa.string()), ("position", pa.int64())])
POOL = ("SELECT round_id, query_id, doc_id, position FROM pool_entries "
        f"WHERE round_id IN (SELECT round_id FROM {ROUNDS_TABLE}) "
        "ORDER BY round_id, query_id, position")

POOL_STRATA_SCHEMA = pa.schema([("round_id", pa.string()), ("query_id", pa.string()),
                                ("doc_id", pa.string()), ("stratum", pa.string()),
                                ("inclusion_probability", pa.float64())])
POOL_STRATA = ("SELECT round_id, query_id, doc_id, stratum, inclusion_probability "
               f"FROM pool_strata WHERE round_id IN (SELECT round_id FROM {ROUNDS_TABLE}) "
               "ORDER BY round_id, query_id, doc_id")

# Which pooled run put which pool entry there, at which rank (trec_eval's order: score
# descending, then doc_id descending, the order every strategy pools in): within the
# round's depth for a depth pool, within its candidate depth when it has one, else anywhere.
CONTRIBUTIONS_SCHEMA = pa.schema([("round_id", pa.string()), ("query_id", pa.string()),
                                  ("doc_id", pa.string()), ("run_id", pa.string()),
                                  ("rank", pa.int64())])
CONTRIBUTIONS = f"""
    WITH pooled AS (
        SELECT round_id, UNNEST(pooled_runs) AS run_id, coalesce(
            TRY_CAST(json_extract_string(params, '$.strategy.depth') AS BIGINT),
            candidate_depth) AS depth
        FROM rounds WHERE round_id IN (SELECT round_id FROM {ROUNDS_TABLE})),
    ranked AS (
        SELECT run_id, query_id, doc_id, row_number() OVER (
            PARTITION BY run_id, query_id ORDER BY score DESC, doc_id DESC) AS rank
        FROM run_results WHERE run_id IN (SELECT run_id FROM pooled))
    SELECT p.round_id, p.query_id, p.doc_id, k.run_id, k.rank
    FROM pool_entries p JOIN pooled r ON r.round_id = p.round_id
    JOIN ranked k ON k.run_id = r.run_id AND k.query_id = p.query_id AND k.doc_id = p.doc_id
    WHERE r.depth IS NULL OR k.rank <= r.depth
    ORDER BY p.round_id, p.query_id, p.position, k.run_id
"""

JUDGMENTS_SCHEMA = pa.schema([
    ("seq", pa.int64()), ("submission_id", pa.string()), ("round_id", pa.string()),
    ("query_id", pa.string()), ("doc_id", pa.string()), ("assessor", pa.string()),
    ("assessor_kind", pa.string()), ("kind", pa.string()), ("grade", pa.int64()),
    ("seconds", pa.float64()), ("probability", pa.float64()), ("rationale", pa.string()),
    ("judged_at", pa.timestamp("us")), ("subtopic", pa.string())])
JUDGMENTS = f"""
    SELECT j.seq, 'submission-' || row_number() OVER (
               ORDER BY j.seq, j.assessor_id, j.submission_id) AS submission_id,
           j.round_id, j.query_id, j.doc_id, n.name AS assessor,
           coalesce(a.kind, 'person') AS assessor_kind, j.kind, j.grade, j.seconds,
           j.probability, CASE WHEN a.kind = 'model' THEN j.rationale END AS rationale,
           j.judged_at, j.part AS subtopic
    FROM (SELECT * FROM judgments WHERE {RELEASED_JUDGMENT}) j
    JOIN {NAMES_TABLE} n ON n.assessor_id = j.assessor_id
    LEFT JOIN assessors a ON a.assessor_id = j.assessor_id
    ORDER BY j.seq, j.assessor_id, j.submission_id
"""


def batches(store: Store, step: str, query: str, params: list[Any] | None = None,
            ) -> Iterator[pa.RecordBatch]:
    """A query's result as Arrow batches, read as they are consumed."""
    try:
        yield from store.con.sql(query, params=params or None).to_arrow_reader(BATCH_ROWS)
    except duckdb.Error as exc:
        raise StoreError(f"store step '{step}' failed: {exc}") from exc


@contextmanager
def released_rounds(store: Store, rounds: list[str]) -> Iterator[None]:
    """The rounds a release holds, registered as `ROUNDS_TABLE` for its queries."""
    store.con.register(ROUNDS_TABLE, pa.table({"round_id": pa.array(rounds, pa.string())}))
    try:
        yield
    finally:
        store.con.unregister(ROUNDS_TABLE)


def with_source_names(stream: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Batches whose `source` column holds file names only (`layout.source_name`)."""
    for batch in stream:
        i = batch.schema.get_field_index("source")
        yield batch.set_column(i, "source", pc.replace_substring_regex(
            batch.column(i), FOLDERS, ""))


def run_batches(store: Store, run_id: str) -> Iterator[pa.RecordBatch]:
    """One stored run in trec_eval order, with its run_id: RUNS_SCHEMA batches."""
    yield from batches(store, "read run",
                       "SELECT run_id, query_id, doc_id, rank, score FROM run_results "
                       "WHERE run_id = ? ORDER BY query_id, score DESC, doc_id DESC", [run_id])
