"""The options the commands scoring stored runs share, and their one translation.

`leaderboard`, `compare`, `topic-report`, `pool-bias`, `folds` and `evaluate` declare these
same options, so a flag reads and behaves alike in each: the qrels version, the measures, the runs, and the
topic block (--topics, -c, --shared-topics, -l) that `scoring` turns into the library's
keywords.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pooling.errors import PoolingError

# The measures a leaderboard shows when none is named.
DEFAULT_MEASURES = ("map", "P_10", "ndcg_cut_10")

QrelsOpt = Annotated[str | None, typer.Option(
    "--qrels", help="Qrels version (default: the store's default, see `pooling qrels default`).")]
QrelsVersionsOpt = Annotated[list[str], typer.Option("--qrels", help="Qrels version (repeatable).")]
MeasuresOpt = Annotated[list[str], typer.Option(
    "-m", "--measure", help="Measure, trec_eval or ir_measures name (repeatable; default "
    "map, P_10, ndcg_cut_10).")]
# One measure: a value per run to compare (pool-bias), or to choose a run by (folds).
MeasurePerRunOpt = Annotated[str, typer.Option(
    "-m", "--measure", help="One measure value per run.")]
MeasureToChooseByOpt = Annotated[str, typer.Option(
    "-m", "--measure", help="Measure to choose by.")]
RunsToIncludeOpt = Annotated[list[str], typer.Option(
    "--run", help="Run to include (repeatable; default all).")]
RunsToReportOpt = Annotated[list[str], typer.Option(
    "--run", help="Run to report (repeatable; default all).")]
TopicsOpt = Annotated[str | None, typer.Option(
    help="Topics: ids and ranges (601-650,303) or a stored subset's name.")]
ZeroOpt = Annotated[bool, typer.Option("-c", help="Topics a run lacks score zero (the default).")]
SharedOpt = Annotated[bool, typer.Option(
    "--shared-topics", help="Only the topics each run shares with the qrels.")]
LevelOpt = Annotated[int, typer.Option("-l", help="Lowest grade that counts as relevant.")]
# The significance tests a board makes between runs, and the seed of the resampling ones.
TestOpt = Annotated[str, typer.Option(help="Pairwise test: t, randomization or tukey.")]
CorrectionOpt = Annotated[str | None, typer.Option(
    help="holm, bh or none (default: holm; none for tukey).")]
AlphaOpt = Annotated[float, typer.Option(help="Significance level.")]
TestSeedOpt = Annotated[int, typer.Option(
    help="Seed of the randomization test and the bootstrap.")]
OutputOpt = Annotated[Path | None, typer.Option("-o", "--output", help="File (default: stdout).")]
TableFormatOpt = Annotated[str, typer.Option(help="table, md, csv or latex.")]
BoardFormatOpt = Annotated[str, typer.Option(help="table, md, csv, latex or html.")]


def measures_or_default(measures: list[str]) -> list[str]:
    """The measures named, else the leaderboard's default ones."""
    return measures or list(DEFAULT_MEASURES)


def missing_topics(zero: bool, shared_topics: bool) -> str:
    """The missing-topics policy of -c / --shared-topics: zero unless --shared-topics."""
    if zero and shared_topics:
        raise PoolingError("-c and --shared-topics are two different topic policies; pick one")
    return "skip" if shared_topics else "zero"


def scoring(topics: str | None, zero: bool, shared_topics: bool,
            relevance_level: int) -> dict[str, Any]:
    """The topic block as the library's keywords: topics, missing_topics, relevance_level."""
    return {"topics": topics, "missing_topics": missing_topics(zero, shared_topics),
            "relevance_level": relevance_level}
