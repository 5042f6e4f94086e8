"""What `evaluate` returns: each run's values per topic and summary, and the settings used."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.errors import EvaluationError
from pooling.measures import Kind, Measure

# A schema, not an empty table: building tables at import time loads pandas (slow start-up).
_PER_QUERY_SCHEMA = pa.schema(
    [("run_id", pa.string()), ("query_id", pa.string()), ("measure", pa.string()),
     ("value", pa.float64())]
)


class NoTopicsError(EvaluationError):
    """Nothing to evaluate: the run and the qrels share no topic (trec_eval 9 exits 7)."""

    exit_code = 7


@dataclass(frozen=True)
class Column:
    """One output value: its name (`P_5`), how it prints/averages, and its measure."""

    name: str
    kind: Kind
    measure: Measure


@dataclass
class RunEvaluation:
    """One run's values: per topic (evaluated topics, strcmp order) and the summary `all`.

    missing_query_ids: evaluated topics the run has no lines for (scored 0 under "zero").
    """

    run_id: str
    query_ids: list[str]
    columns: list[Column]
    per_query: dict[str, np.ndarray]
    summary: dict[str, Any]
    missing_query_ids: list[str] = field(default_factory=list)
    zscores: bool = False  # values are z-scores (-Z): printed as `Zname`, all as %6.4f


@dataclass
class Evaluation:
    """Results of `evaluate`: one RunEvaluation per run, plus the settings used."""

    runs: list[RunEvaluation]
    measures: list[Measure]
    missing_topics: str
    relevance_level: int
    max_docs: int | None
    columns: list[Column] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # about the inputs (e.g. a BOM)

    @property
    def per_query(self) -> pa.Table:
        """Tidy numeric values, topic by topic: run_id, query_id, measure, value (float64)."""
        parts = []
        for run in self.runs:
            cols = [c.name for c in run.columns if c.kind in (Kind.FLOAT, Kind.COUNT)]
            T = len(run.query_ids)
            matrix = np.column_stack(
                [np.asarray(run.per_query[c], dtype=np.float64) for c in cols]
            ) if cols else np.empty((T, 0))
            names = [("Z" + c if run.zscores else c) for c in cols]
            parts.append(
                pa.table(
                    {
                        "run_id": pa.array([run.run_id] * (T * len(cols)), pa.string()),
                        "query_id": pa.array(np.repeat(run.query_ids, len(cols)), pa.string()),
                        "measure": pa.array(names * T, pa.string()),
                        "value": pa.array(matrix.ravel(), pa.float64()),
                    }
                )
            )
        return pa.concat_tables(parts) if parts else _PER_QUERY_SCHEMA.empty_table()

    @property
    def means(self) -> pa.Table:
        """Tidy summary values (the `all` row): run_id, measure, value (float64)."""
        rows = [
            (run.run_id, ("Z" if run.zscores else "") + col.name, float(run.summary[col.name]))
            for run in self.runs
            for col in run.columns
            if col.kind not in (Kind.TEXT, Kind.RUNID)
        ]
        return pa.table(
            {
                "run_id": pa.array([r[0] for r in rows], pa.string()),
                "measure": pa.array([r[1] for r in rows], pa.string()),
                "value": pa.array([r[2] for r in rows], pa.float64()),
            }
        )
