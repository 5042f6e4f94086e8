"""One run's evaluation as an Arrow table, and back: how values cross the network.

The table has a row per evaluated topic (`query_id`, then a column per per-topic value);
the schema's metadata holds the run id, the summary (`all`) values as JSON (which keeps
ints and floats exactly), the topics the run lacks, and each column's NumPy dtype.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from pooling.evaluation.results import Column, RunEvaluation
from pooling.measures import Measure


def run_values(run: RunEvaluation) -> pa.Table:
    """`run`'s values as an Arrow table (see the module docstring)."""
    arrays = {"query_id": pa.array(run.query_ids, pa.string())}
    dtypes = {}
    for name, values in run.per_query.items():
        values = np.asarray(values)
        dtypes[name] = values.dtype.str if values.dtype != object else "object"
        arrays[name] = pa.array(values.tolist() if values.dtype == object else values)
    meta = {"run_id": run.run_id, "summary": run.summary, "missing": run.missing_query_ids,
            "dtypes": dtypes, "order": [c.name for c in run.columns]}
    return pa.table(arrays).replace_schema_metadata({"pooling": json.dumps(meta)})


def run_from_values(table: pa.Table, measures: list[Measure]) -> RunEvaluation:
    """The RunEvaluation `run_values` encoded; `measures` as the evaluation parsed them."""
    meta = json.loads(table.schema.metadata[b"pooling"])
    by_name = {name: Column(name, m.spec.kind, m) for m in measures for name in m.columns}
    columns = [by_name[name] for name in meta["order"]]
    per_query = {}
    for name, dtype in meta["dtypes"].items():
        values = table.column(name).to_numpy(zero_copy_only=False)
        per_query[name] = np.asarray(values, dtype=object if dtype == "object" else np.dtype(dtype))
    return RunEvaluation(meta["run_id"], table.column("query_id").to_pylist(), columns, per_query,
                         meta["summary"], meta["missing"])
