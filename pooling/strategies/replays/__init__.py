"""Replays of pooling strategies against existing qrels, the oracle assessor.

`prepare` builds a collection's replay data once (`data`); `replay` runs one strategy to a
budget (`replay`), `score` measures it (`scores`, `correlations`); `simulate` and
`replay_grid` do strategies x budgets x collections x seeds, here or on a Ray cluster
(`grid`, `distributed`); `leave_one_out` tests a pool's fairness to a left-out run; `triage`
replays how many of automatic judges' errors a review in triage order catches.
"""

from pooling.strategies.replays.correlations import kendall_tau_b, mean_ap, tau_ap, topic_ap
from pooling.strategies.replays.data import (
    Oracle,
    ReplayData,
    SimulationError,
    StrategySpec,
    parse_strategy,
    prepare,
    read_texts,
    with_inputs,
)
from pooling.strategies.replays.grid import replay_grid, simulate
from pooling.strategies.replays.inputs import (
    ReplayInputs,
    depth_pool,
    load_inputs,
    parse_topics,
    read_inputs,
)
from pooling.strategies.replays.leave_one_out import (
    LEAVE_ONE_OUT_SCHEMA,
    leave_one_out,
    run_group,
)
from pooling.strategies.replays.output import plot_found, render_table, to_csv
from pooling.strategies.replays.replay import (
    GRID_SCHEMA,
    SIMULATION_SCHEMA,
    Replay,
    check_budgets,
    replay,
)
from pooling.strategies.replays.scores import (
    bootstrap_tau,
    found_share,
    judged_ap,
    judged_map,
    score,
)

__all__ = [
    "GRID_SCHEMA", "LEAVE_ONE_OUT_SCHEMA", "SIMULATION_SCHEMA", "Oracle", "Replay", "ReplayData",
    "ReplayInputs", "SimulationError", "StrategySpec", "bootstrap_tau", "check_budgets",
    "depth_pool", "found_share", "judged_ap", "judged_map", "kendall_tau_b", "leave_one_out",
    "load_inputs", "mean_ap", "parse_strategy", "parse_topics", "plot_found", "prepare",
    "read_inputs", "read_texts", "render_table", "replay", "replay_grid", "run_group", "score",
    "simulate", "tau_ap", "to_csv", "topic_ap", "with_inputs",
]
