"""Leave-one-out: how much a pool built without a run's group still ranks that run fairly."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from pooling.strategies.replays.data import ReplayData, SimulationError, StrategySpec
from pooling.strategies.replays.replay import check_budgets, replay
from pooling.strategies.replays.scores import judged_map

LEAVE_ONE_OUT_SCHEMA = pa.schema(
    [
        ("strategy", pa.string()),
        ("budget", pa.int64()),
        ("left_out", pa.string()),
        ("run_id", pa.string()),
        ("map_full", pa.float64()),
        ("map_without", pa.float64()),
        ("map_change", pa.float64()),
        ("rank_full", pa.int64()),
        ("rank_without", pa.int64()),
        ("rank_change", pa.int64()),
    ]
)


def run_group(run_id: str) -> str:
    """A run's group (participant) guessed from its tag: the letters before the first digit."""
    m = re.match(r"[^\d]+", run_id)
    return m.group(0) if m else run_id


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def leave_one_out(
    data: ReplayData,
    strategies: Sequence[StrategySpec],
    budgets: Sequence[int],
    *,
    by: str = "run",
    groups: Mapping[str, str] | None = None,
    seed: int = 0,
    floor: int = 0,
) -> pa.Table:
    """Pool bias (Zobel 1998): pool without each run (or its whole group), judge with the
    strategy, and compare each left-out run's MAP and rank with those under the full depth pool.

    Groups default to `run_group` (the tag's letters before the first digit).
    """
    if by not in ("run", "group"):
        raise SimulationError(f"--leave-one-out takes run or group, got {by!r}")
    budgets = check_budgets(budgets)
    group_of = {r: (groups or {}).get(r, run_group(r)) if by == "group" else r for r in data.run_ids}
    truth = data.truth_map
    truth_rank = _ranks(truth)
    rows = []
    for unit in dict.fromkeys(group_of.values()):
        kept = [r for r in data.run_ids if group_of[r] != unit]
        out = [i for i, r in enumerate(data.run_ids) if group_of[r] == unit]
        if not kept:
            continue
        for spec in strategies:
            rep = replay(data, spec, max(budgets), seed=seed, floor=floor, runs=kept)
            for b in budgets:
                est, _, _ = judged_map(data, rep, b)
                est_rank = _ranks(est)
                for i in out:
                    rows.append(
                        {
                            "strategy": spec.label,
                            "budget": int(b),
                            "left_out": unit,
                            "run_id": data.run_ids[i],
                            "map_full": float(truth[i]),
                            "map_without": float(est[i]),
                            "map_change": float(est[i] - truth[i]),
                            "rank_full": int(truth_rank[i]),
                            "rank_without": int(est_rank[i]),
                            "rank_change": int(est_rank[i] - truth_rank[i]),
                        }
                    )
    return pa.Table.from_pylist(rows, schema=LEAVE_ONE_OUT_SCHEMA)
