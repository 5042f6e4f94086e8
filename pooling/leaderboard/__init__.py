"""Leaderboards: ranked runs with intervals, significance tests, pool-bias and topic reports.

`leaderboard(store, ...)` ranks stored runs; `compare_leaderboards` correlates rankings
(Kendall tau, tau_ap, Spearman); `topic_report` gives NIST-style per-topic best/median/worst;
`pool_bias` re-evaluates with each run's (or team's) unique judgments removed;
`cross_validate` picks the best of a family on training topic folds; `html_report` writes
everything as one self-contained HTML file; `participant_reports` gathers what each run's
owner is sent and `write_participant_reports` writes it as HTML and PDF pages.
"""

from pooling.leaderboard.board import DEFAULT_MEASURES, Leaderboard, leaderboard
from pooling.leaderboard.compare import (
    BoardSpec,
    Comparison,
    board_specs,
    compare_leaderboards,
    correlation_table,
)
from pooling.leaderboard.errors import LeaderboardError
from pooling.leaderboard.folds import CrossValidation, cross_validate, topic_folds
from pooling.leaderboard.participant_report import participant_reports
from pooling.leaderboard.per_topic import topic_report
from pooling.leaderboard.pool_bias import PoolBias, pool_bias
from pooling.leaderboard.render import render_leaderboard, render_table
from pooling.leaderboard.report import html_report, store_report, write_html_report
from pooling.leaderboard.report_files import write_participant_reports
from pooling.store.topic_selection import (
    resolve_topic_selection,
    save_topic_subset,
    topic_subsets,
)

__all__ = [
    "DEFAULT_MEASURES",
    "BoardSpec",
    "Comparison",
    "CrossValidation",
    "Leaderboard",
    "LeaderboardError",
    "PoolBias",
    "board_specs",
    "compare_leaderboards",
    "correlation_table",
    "cross_validate",
    "html_report",
    "leaderboard",
    "participant_reports",
    "pool_bias",
    "render_leaderboard",
    "render_table",
    "resolve_topic_selection",
    "save_topic_subset",
    "store_report",
    "topic_folds",
    "topic_report",
    "topic_subsets",
    "write_html_report",
    "write_participant_reports",
]
