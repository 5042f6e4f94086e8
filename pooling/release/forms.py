"""The Parquet and TREC forms of a release's tables must say the same thing.

A release holds its qrels and runs twice: as TREC text (what trec_eval, pytrec_eval and
ir_measures read) and as Parquet (what Hugging Face loads and what `pooling import release`
rebuilds the store from). Checksums only say the files are the ones listed; if the two forms
disagree (a release altered and its checksums written again), a rebuilt store would score
runs differently from the bundle's own TREC files. So the rebuilt tables are compared with
the TREC files, row by row (qrels and runs; the topics' ids and titles with topics.jsonl),
and any difference refuses the import, naming the table.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from pooling.errors import PoolingError
from pooling.release import layout
from pooling.release.checksums import CheckedRelease
from pooling.store.core import Store

_TREC_VIEW = "_trec_form"
_SHOWN = 3  # differing rows quoted in the error

# Step: the rows where the store's table (from the Parquet) and the TREC file differ, by key.
_QRELS_DIFF = f"""
    WITH parquet AS (SELECT query_id, doc_id, relevance FROM qrels WHERE version = ?)
    SELECT coalesce(p.query_id, t.query_id) AS q, coalesce(p.doc_id, t.doc_id) AS d,
           p.relevance AS in_parquet, t.relevance AS in_trec
    FROM parquet p FULL JOIN {_TREC_VIEW} t ON p.query_id = t.query_id AND p.doc_id = t.doc_id
    WHERE p.relevance IS DISTINCT FROM t.relevance
    ORDER BY q, d"""
_RUN_DIFF = f"""
    WITH parquet AS (SELECT query_id, doc_id, rank, score FROM run_results WHERE run_id = ?)
    SELECT coalesce(p.query_id, t.query_id) AS q, coalesce(p.doc_id, t.doc_id) AS d,
           CASE WHEN p.doc_id IS NOT NULL THEN format('rank {{}} score {{}}', p.rank, p.score)
           END AS in_parquet,
           CASE WHEN t.doc_id IS NOT NULL THEN format('rank {{}} score {{}}', t.rank, t.score)
           END AS in_trec
    FROM parquet p FULL JOIN {_TREC_VIEW} t ON p.query_id = t.query_id AND p.doc_id = t.doc_id
    WHERE p.rank IS DISTINCT FROM t.rank OR p.score IS DISTINCT FROM t.score
    ORDER BY q, d"""

# Topics: the ids and titles (whitespace runs as one space, as readers of topic files see
# them) of the store's table against topics/topics.jsonl.
_TOPICS_DIFF = f"""
    WITH parquet AS (SELECT query_id, regexp_replace(trim(title), '\\s+', ' ', 'g') AS title
                     FROM topics),
    text_form AS (SELECT query_id, regexp_replace(trim(title), '\\s+', ' ', 'g') AS title
                  FROM {_TREC_VIEW})
    SELECT coalesce(p.query_id, t.query_id) AS q, NULL AS d,
           CASE WHEN p.query_id IS NOT NULL THEN coalesce(p.title, '(no title)') END,
           CASE WHEN t.query_id IS NOT NULL THEN coalesce(t.title, '(no title)') END
    FROM parquet p FULL JOIN text_form t ON p.query_id = t.query_id
    WHERE p.title IS DISTINCT FROM t.title OR p.query_id IS NULL OR t.query_id IS NULL
    ORDER BY q"""


class FormsDisagree(PoolingError):
    """A release whose Parquet and TREC forms of one table differ."""


def check_forms_agree(store: Store, checked: CheckedRelease, m: dict[str, Any]) -> None:
    """Refuse a release whose rebuilt qrels or runs (from Parquet) differ from its TREC files,
    or whose Parquet holds versions or runs the manifest does not list."""
    from pooling.formats import read_topics
    from pooling.formats.trec_qrels import read_trec_qrels
    from pooling.formats.trec_run import read_trec_run

    _refuse_strays(store, "qrels", "version", [v["name"] for v in m["qrels_versions"]],
                   "qrels version")
    topics = checked.path(layout.TOPICS_JSONL, "the topics")
    listed = (read_topics(topics, format="jsonl") if topics.stat().st_size  # none: no file
              else pa.table({"query_id": pa.array([], pa.string()),
                             "title": pa.array([], pa.string())}))
    _compare(store, _TOPICS_DIFF, None, listed, "the topics", layout.TOPICS_JSONL)
    _refuse_strays(store, "run_results", "run_id", [r["run_id"] for r in m["runs"]], "run")
    for v in m["qrels_versions"]:
        what = f"qrels version {v['name']!r}"
        path = checked.path(v["file"], what)
        table = read_trec_qrels(path).select(["query_id", "doc_id", "relevance"])
        _compare(store, _QRELS_DIFF, v["name"], table, what, v["file"])
    for r in m["runs"]:
        what = f"run {r['run_id']!r}"
        path = checked.path(r["file"], what)
        (parsed,) = read_trec_run(path)
        _compare(store, _RUN_DIFF, r["run_id"],
                 parsed.table.select(["query_id", "doc_id", "rank", "score"]), what, r["file"])


def _compare(store: Store, query: str, key: str | None, trec: pa.Table, what: str,
             file: str) -> None:
    store.con.register(_TREC_VIEW, trec)
    try:
        rows = store.sql(f"compare {what}", query, [key] if key is not None else None
                         ).fetchall()
    finally:
        store.con.unregister(_TREC_VIEW)
    if not rows:
        return
    shown = "; ".join(f"topic {q}" + (f", document {d}" if d is not None else "")
                      + f": {_said(p)} in the Parquet, {_said(t)} in {file}"
                      for q, d, p, t in rows[:_SHOWN])
    raise FormsDisagree(f"{what}: its Parquet rows and {file} disagree on {len(rows):,} "
                        f"row(s) ({shown}); the release was altered after it was written, so "
                        "nothing was imported: fetch the release again")


def _refuse_strays(store: Store, table: str, column: str, listed: list[str], what: str) -> None:
    stray = [r[0] for r in store.sql(
        f"unlisted {what}s", f"SELECT DISTINCT {column} FROM {table} WHERE {column} NOT IN "
        "(SELECT UNNEST(?::VARCHAR[])) ORDER BY 1", [listed]).fetchall()]
    if stray:
        raise FormsDisagree(f"{what} {stray[0]!r}: in the release's Parquet but not in its "
                            "manifest; the release was altered after it was written, so "
                            "nothing was imported: fetch the release again")


def _said(value: object) -> str:
    return "absent" if value is None else str(value)
