"""The options the commands scoring stored runs share, and their one translation.

`leaderboard`, `compare`, `topic-report`, `pool-bias`, `folds` and `evaluate` declare these
same options, so a flag reads and behaves alike in each: the qrels version, the measures, the runs, and the
topic block (--topics, -c, --shared-topics, -l) that `scoring` turns into the library's
keywords. Every command that ranks runs takes -m repeatable and --primary, read by the one
rule of `pooling.measures.primary`: the first -m as given, unless --primary names another.
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
PrimaryOpt = Annotated[str | None, typer.Option(
    help="Measure to rank and test by (default: the first -m as given; added to the -m if "
    "they lack it).")]
# Commands that analyse one measure: they take -m alike and analyse the primary.
OneMeasureOpt = Annotated[list[str], typer.Option(
    "-m", "--measure", help="Measure, one value per run (repeatable; the primary one is "
    "analysed; default map).")]
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


def analysed_measure(measures: list[str], primary: str | None) -> str:
    """The one measure a single-measure analysis runs on (the primary of -m/--primary,
    default map); names the -m it leaves unused on stderr, so none is dropped unsaid."""
    from pooling.measures.primary import primary_first

    names = primary_first(measures or ["map"], primary)
    if len(names) > 1:
        typer.echo(f"analysing {names[0]} (the primary measure); this analysis uses one "
                   f"measure, so {', '.join(names[1:])} is not used", err=True)
    return names[0]


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
