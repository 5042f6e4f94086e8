"""Judgments as history: the record of one submission, and the replays that find each
assessor's current grades. Append-only: a correction is a new judgment, an undo a `retract`.

Read by rounds (what is next), rules (qrels) and the pages; it imports neither, so the
judging package has no import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from pooling.store.core import Store

KINDS = ("judge", "retract")


@dataclass(frozen=True)
class Judgment:
    """One submission: who judged which document of which round, and how."""

    round_id: str
    assessor_id: str
    query_id: str
    doc_id: str
    grade: int | None
    kind: str = "judge"
    seconds: float | None = None
    note: str | None = None
    submission_id: str | None = None


def assigned_items(store: Store, round_id: str, assessor_id: str) -> pa.Table:
    """An assessor's work in a round: query_id, doc_id, position, role (primary|overlap)."""
    return store.arrow(
        "assigned items",
        """
        SELECT p.query_id, p.doc_id, p.position, 'primary' AS role
        FROM pool_entries p JOIN assignments a
          ON a.round_id = p.round_id AND a.query_id = p.query_id AND a.doc_id IS NULL
        WHERE p.round_id = ? AND a.assessor_id = ?
        UNION ALL
        SELECT a.query_id, a.doc_id, p.position, 'overlap' AS role
        FROM assignments a JOIN pool_entries p
          ON p.round_id = a.round_id AND p.query_id = a.query_id AND p.doc_id = a.doc_id
        WHERE a.round_id = ? AND a.assessor_id = ? AND a.doc_id IS NOT NULL
        ORDER BY query_id, position
        """,
        [round_id, assessor_id, round_id, assessor_id],
    )


def _replay(events: list[tuple[str, int | None]]) -> int | None:
    stack: list[int] = []
    for kind, grade in events:
        if kind == "judge":
            stack.append(grade)
        elif stack:
            stack.pop()
    return stack[-1] if stack else None


def effective_judgments(
    store: Store,
    round_id: str | None = None,
    *,
    query_id: str | None = None,
    assessor_id: str | None = None,
) -> pa.Table:
    """Each assessor's current grade per pair: round_id, assessor_id, query_id, doc_id, grade,
    seq (of the judgment that set it), judged_at. Optional filters narrow the replay."""
    filters = [("round_id", round_id), ("query_id", query_id), ("assessor_id", assessor_id)]
    used = [(column, value) for column, value in filters if value is not None]
    where = ("WHERE " + " AND ".join(f"{column} = ?" for column, _ in used)) if used else ""
    rows = store.con.execute(
        f"SELECT round_id, assessor_id, query_id, doc_id, kind, grade, seq, judged_at "
        f"FROM judgments {where} ORDER BY seq",
        [value for _, value in used],
    ).fetchall()
    stacks: dict[tuple, list[tuple[int, int, Any]]] = {}
    for r, a, q, d, kind, grade, seq, at in rows:
        stack = stacks.setdefault((r, a, q, d), [])
        if kind == "judge":
            stack.append((grade, seq, at))
        elif stack:
            stack.pop()
    out: dict[str, list[Any]] = {k: [] for k in
                                 ("round_id", "assessor_id", "query_id", "doc_id", "grade", "seq",
                                  "judged_at")}
    for (r, a, q, d), stack in stacks.items():
        if stack:
            grade, seq, at = stack[-1]
            for key, value in zip(out, (r, a, q, d, grade, seq, at), strict=True):
                out[key].append(value)
    return pa.table(out, schema=pa.schema([
        ("round_id", pa.string()), ("assessor_id", pa.string()), ("query_id", pa.string()),
        ("doc_id", pa.string()), ("grade", pa.int64()), ("seq", pa.int64()),
        ("judged_at", pa.timestamp("us")),
    ]))


def history(store: Store) -> pa.Table:
    """The full judgment history, in the order it was made."""
    return store.arrow(
        "judgment history",
        "SELECT seq, submission_id, round_id, query_id, doc_id, assessor_id, kind, grade, seconds, "
        "note, judged_at FROM judgments ORDER BY seq",
    )


def export_history(store: Store, path: str | Path) -> int:
    """Write the history as CSV, or Parquet when the file name ends in .parquet."""
    table = history(store)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, tmp)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, tmp)
    tmp.replace(path)
    return table.num_rows
