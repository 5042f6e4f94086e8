"""Strategy replays on a Ray cluster: every (collection, seed, strategy, budget) cell a task.

A replay to budget b is the first b judgments per topic of a replay to any larger budget
(no strategy knows the budget), so a cell replayed on its own scores exactly as the local
grid, which replays each strategy once to the largest budget. Each collection's prepared
replay data is broadcast once; the cells' rows come back as Arrow tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from pooling.runner.cluster import connected, get_all
from pooling.strategies.replays.data import with_inputs
from pooling.strategies.replays.replay import GRID_SCHEMA, check_budgets, replay
from pooling.strategies.replays.scores import score


def simulate_on_ray(data: Any, strategies: Sequence[Any], budgets: Sequence[int], *,
                    seed: int = 0, floor: int = 0, ray_address: str | None = None) -> pa.Table:
    """`pooling.strategies.replays.simulate` with a task per (strategy, budget): the same table."""
    grid = grid_on_ray({"": data}, strategies, budgets, [seed], floor=floor,
                       ray_address=ray_address)
    return grid.drop_columns(["collection", "seed"])


def grid_on_ray(collections: Mapping[str, Any], strategies: Sequence[Any],
                budgets: Sequence[int], seeds: Sequence[int], *, floor: int = 0,
                ray_address: str | None = None) -> pa.Table:
    """`pooling.strategies.replays.replay_grid`'s table, a task per cell, rows in the grid's order."""
    budgets = check_budgets(budgets)
    for data in collections.values():
        for spec in strategies:
            with_inputs(data, spec)  # a strategy that cannot replay fails here, before the cluster
    with connected(ray_address) as ray:
        task = ray.remote(num_cpus=1)(_cell)
        refs = []
        for name, data in collections.items():
            data.truth_map  # computed once here, not in every task  # noqa: B018
            shared = ray.put(data)
            refs += [task.remote(shared, name, spec, b, s, floor)
                     for s in seeds for spec in strategies for b in budgets]
        tables = get_all(ray, refs)
    return pa.concat_tables(tables) if tables else GRID_SCHEMA.empty_table()


def _cell(data: Any, collection: str, spec: Any, budget: int, seed: int, floor: int) -> pa.Table:
    """A task: replay one strategy to one budget and score it."""
    rows = score(data, replay(data, spec, budget, seed=seed, floor=floor), [budget])
    return pa.Table.from_pylist([{"collection": collection, "seed": seed, **r} for r in rows],
                                schema=GRID_SCHEMA)
