"""`simulate` (strategies x budgets on one collection) and `replay_grid` (over collections and
seeds), here or with a task per cell on a Ray cluster; the same table either way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from pooling.strategies.replays.data import ReplayData, StrategySpec
from pooling.strategies.replays.replay import GRID_SCHEMA, SIMULATION_SCHEMA, check_budgets, replay
from pooling.strategies.replays.scores import score


def simulate(
    data: ReplayData,
    strategies: Sequence[StrategySpec],
    budgets: Sequence[int],
    *,
    seed: int = 0,
    floor: int = 0,
    engine: str = "local",
    ray_address: str | None = None,
) -> pa.Table:
    """Per strategy x budget: strategy, budget, judged, relevant_found, found_share, tau, tau_ap.

    engine "ray" replays each (strategy, budget) cell as a task on a Ray cluster; same table.
    """
    if engine != "local":
        from pooling.runner import check_engine
        from pooling.strategies.replays.distributed import simulate_on_ray

        check_engine(engine)
        return simulate_on_ray(data, strategies, budgets, seed=seed, floor=floor,
                               ray_address=ray_address)
    budgets = check_budgets(budgets)
    rows = []
    for spec in strategies:
        rep = replay(data, spec, max(budgets), seed=seed, floor=floor)
        rows += score(data, rep, budgets)
    return pa.Table.from_pylist(rows, schema=SIMULATION_SCHEMA)




def replay_grid(
    collections: Mapping[str, ReplayData],
    strategies: Sequence[StrategySpec],
    budgets: Sequence[int],
    seeds: Sequence[int] = (0,),
    *,
    floor: int = 0,
    engine: str = "local",
    ray_address: str | None = None,
) -> pa.Table:
    """`simulate` over collections (name -> prepared replay) and seeds: collection, seed and
    the simulation's columns, in (collection, seed, strategy, budget) order.

    engine "ray" makes every (collection, seed, strategy, budget) cell a task; same table.
    """
    if engine != "local":
        from pooling.runner import check_engine
        from pooling.strategies.replays.distributed import grid_on_ray

        check_engine(engine)
        return grid_on_ray(collections, strategies, budgets, seeds, floor=floor,
                           ray_address=ray_address)
    parts = []
    for name, data in collections.items():
        for seed in seeds:
            table = simulate(data, strategies, budgets, seed=seed, floor=floor)
            parts.append(table.add_column(0, "seed", pa.array([seed] * table.num_rows, pa.int64()))
                         .add_column(0, "collection", pa.array([name] * table.num_rows, pa.string())))
    return pa.concat_tables(parts).cast(GRID_SCHEMA) if parts else GRID_SCHEMA.empty_table()
