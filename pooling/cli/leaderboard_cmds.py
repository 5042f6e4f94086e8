"""Leaderboard commands: `leaderboard`, `compare`, `topic-report`, `pool-bias`, `folds`, `topics`."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.leaderboard_options import (
    AlphaOpt,
    BoardFormatOpt,
    CorrectionOpt,
    LevelOpt,
    MeasuresOpt,
    OneMeasureOpt,
    OutputOpt,
    PrimaryOpt,
    QrelsOpt,
    QrelsVersionsOpt,
    RunsToIncludeOpt,
    RunsToReportOpt,
    SharedOpt,
    TableFormatOpt,
    TestOpt,
    TestSeedOpt,
    TopicsOpt,
    ZeroOpt,
    analysed_measure,
    measures_or_default,
    scoring,
)
from pooling.cli.store_cmds import StoreArg
from pooling.errors import PoolingError
from pooling.terminal.console import Console, set_narrower, set_wide_note

if TYPE_CHECKING:
    import pyarrow as pa

out = Console()
AS_TABLE = "`--format md` or `--format csv` prints it as a table"
# On sampled qrels each resample re-estimates every topic: at most this many are drawn.
SAMPLED_RESAMPLES = 200
topics_app = typer.Typer(help="Named topic subsets (e.g. old and new topics), usable as --topics.",
                         no_args_is_help=True)
app.add_typer(topics_app, name="topics")

def _say_qrels(version: str) -> None:
    """Name the qrels version used on stderr, so data on stdout stays clean."""
    typer.echo(f"qrels: {version}", err=True)


def _emit(text: str, output: Path | None) -> None:
    """Text to stdout, or atomically to a file."""
    if output is None:
        sys.stdout.write(text)
        return
    from pooling.formats.source import write_lines

    write_lines([text], output)
    typer.echo(f"wrote {output}", err=True)


def _rich(table: "pa.Table", title: str = "") -> None:
    from pooling.leaderboard.render import fmt

    view = Table(title=title or None)
    for k, name in enumerate(table.column_names):
        view.add_column(name, no_wrap=k == 0)
    for row in table.to_pylist():
        view.add_row(*(fmt(v) for v in row.values()))
    out.print(set_wide_note(view, AS_TABLE))


def _render(table: "pa.Table", format: str, output: Path | None, title: str = "") -> None:
    from pooling.leaderboard.render import render_table

    if format == "table":
        if output is not None:
            raise PoolingError("--format table prints to the terminal; use md, csv or latex with -o")
        _rich(table, title)
        return
    _emit(render_table(table, format, title), output)


@app.command("leaderboard")
def leaderboard_command(
    store: StoreArg,
    qrels: QrelsOpt = None,
    measure: MeasuresOpt = [],  # noqa: B006
    primary: PrimaryOpt = None,
    test: TestOpt = "t",
    correction: CorrectionOpt = None,
    alpha: AlphaOpt = 0.05,
    topics: TopicsOpt = None,
    zero: ZeroOpt = False,
    shared_topics: SharedOpt = False,
    relevance_level: LevelOpt = 1,
    max_docs: Annotated[int | None, typer.Option("-M", help="Use only each topic's top M documents.")] = None,
    run: RunsToIncludeOpt = [],  # noqa: B006
    permutations: Annotated[int | None, typer.Option(help="Permutations of the randomization/Tukey test (default: enough for the pairs and alpha).")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples of the intervals.")] = 10_000,
    seed: TestSeedOpt = 0,
    min_judged: Annotated[float, typer.Option(help="Flag runs whose Judged@10 is below this.")] = 0.9,
    pool_depth: Annotated[int | None, typer.Option(help="html: depth of the re-pool for the pool-bias chart.")] = 10,
    pairs: Annotated[bool, typer.Option("--pairs", help="Also print every pairwise test.")] = False,
    assignments: Annotated[str | None, typer.Option(
        "--assignments", help="Rank answer runs by nugget recall on this assignment version "
        "instead of ranked runs on qrels (measures all, vital, strict_all, strict_vital; "
        "--min-judged then flags runs whose share of assigned nuggets is below it).")] = None,
    format: BoardFormatOpt = "table",
    output: OutputOpt = None,
) -> None:
    """Rank stored runs with confidence intervals, Judged@10 and significance groups.

    Runs that no test separates share a rank and a group letter. The randomization and
    Tukey tests draw enough permutations for the smallest corrected p to lie 20 times below
    alpha, and say how many and that floor. --format html writes the full self-contained
    report (table, interval plot, per-topic scores, significance matrix, pool bias,
    correlations between measures).
    """
    from pooling.leaderboard import leaderboard
    from pooling.leaderboard.render import (
        RANK_NOTE,
        caption,
        display_rows,
        permutation_note,
        render_leaderboard,
    )
    from pooling.store import Store
    from pooling.terminal.progress import terminal_progress

    if assignments is not None:
        _answer_board(store, assignments, measure, primary, test, correction, alpha,
                      not shared_topics, run, permutations, resamples, seed, min_judged, pairs,
                      format, output)
        return
    if _sampled_board(store, qrels, measure, primary, topics, run, resamples, seed, format,
                      output):
        return
    options = dict(
        qrels=qrels, measures=measures_or_default(measure), primary=primary, test=test,
        correction=correction, alpha=alpha,
        **scoring(topics, zero, shared_topics, relevance_level),
        max_docs=max_docs, runs=run or None, permutations=permutations, resamples=resamples,
        seed=seed, min_judged=min_judged,
    )
    if format == "html":
        from pooling.leaderboard.report import store_report, write_html_report

        with Store(store) as s:
            options["qrels"] = s.resolve_qrels(qrels)
            text = store_report(s, pool_depth=pool_depth, **options)
        _say_qrels(options["qrels"])
        if output is None:
            sys.stdout.write(text)
        else:
            typer.echo(str(write_html_report(text, output).resolve()))
        return
    if format not in ("table", "md", "csv", "latex"):
        raise PoolingError(f"--format must be table, md, csv, latex or html, not {format!r}")
    with Store(store) as s, terminal_progress() as bar:
        lb = leaderboard(s, **options, progress=bar)
    _say_qrels(lb.qrels_version)
    if format == "table":
        view, narrow = (Table(*display_rows(lb, intervals)[0], title=caption(lb))
                        for intervals in (True, False))
        for table, intervals in ((view, True), (narrow, False)):
            for cells in display_rows(lb, intervals)[1]:
                table.add_row(*cells)
        set_narrower(view, narrow, f"intervals left out to fit the terminal; {AS_TABLE} with "
                     "them")
        out.print(set_wide_note(view, AS_TABLE))
        out.print(RANK_NOTE.capitalize() + ".", highlight=False)
    else:
        _emit(render_leaderboard(lb, format), output)
        if lb.plan is not None:
            typer.echo(f"{lb.test} test: {permutation_note(lb)}", err=True)
    if pairs:
        _render(lb.pairs, "table" if format == "table" else format, None,
                f"pairwise {lb.test} tests on {lb.primary}")


def _answer_board(store: Path, assignments: str, measure: list[str], primary: str | None,
                  test: str, correction: str | None, alpha: float, complete: bool,
                  run: list[str], permutations: int | None, resamples: int, seed: int,
                  min_assigned: float, pairs: bool, format: str, output: Path | None) -> None:
    """Answer runs ranked on an assignment version (`pooling.leaderboard.answers`)."""
    from pooling.leaderboard.answers import DEFAULT_MEASURES, answer_leaderboard
    from pooling.leaderboard.render import RANK_NOTE, caption, display_rows, render_leaderboard
    from pooling.store import Store

    if format not in ("table", "md", "csv", "latex"):
        raise PoolingError(f"--format must be table, md, csv or latex for answer runs, not {format!r}")
    with Store(store, read_only=True) as s:
        lb = answer_leaderboard(s, assignments, measures=measure or DEFAULT_MEASURES,
                                primary=primary, test=test, correction=correction, alpha=alpha,
                                complete=complete, runs=run or None, permutations=permutations,
                                resamples=resamples, seed=seed, min_assigned=min_assigned)
    if format == "table":
        head, rows = display_rows(lb, True)
        table = Table(*head, title=caption(lb))
        for cells in rows:
            table.add_row(*cells)
        out.print(set_wide_note(table, AS_TABLE))
        out.print(RANK_NOTE.capitalize() + ".", highlight=False)
    else:
        _emit(render_leaderboard(lb, format), output)
    if pairs:
        _render(lb.pairs, "table" if format == "table" else format, None,
                f"pairwise {lb.test} tests on {lb.primary}")


def _sampled_board(store: Path, qrels: str | None, measure: list[str], primary: str | None,
                   topics: str | None, run: list[str], resamples: int, seed: int, format: str,
                   output: Path | None) -> bool:
    """On a sampled qrels version, print its estimates with intervals and the sample's size
    (`pooling.leaderboard.sampled`) and return True; on plain qrels return False."""
    from pooling.store import Store
    from pooling.store.sampled_qrels import is_sampled

    with Store(store, read_only=True) as s:
        if not is_sampled(s, qrels):
            return False
    from pooling.leaderboard.sampled import (
        DEFAULT_ESTIMATORS,
        display_rows,
        render_sampled,
        sample_note,
        sampled_leaderboard,
    )

    if format not in ("table", "md", "csv", "latex", "html"):
        raise PoolingError(f"--format must be table, md, csv, latex or html, not {format!r}")
    from pooling.terminal.progress import terminal_progress

    with Store(store) as s, terminal_progress() as bar:
        lb = sampled_leaderboard(s, qrels=qrels, measures=measure or DEFAULT_ESTIMATORS,
                                 primary=primary, runs=run or None, topics=topics,
                                 resamples=min(resamples, SAMPLED_RESAMPLES), seed=seed,
                                 progress=bar)
    _say_qrels(lb.qrels_version)
    if format == "table":
        if output is not None:
            raise PoolingError("--format table prints to the terminal; use md, csv, latex or "
                               "html with -o")
        headers, rows = display_rows(lb)
        view = Table(*headers, title=f"qrels {lb.qrels_version} (sampled)")
        for cells in rows:
            view.add_row(*cells)
        out.print(set_wide_note(view, AS_TABLE))
        out.print(sample_note(lb) + ".", highlight=False)
        return True
    _emit(render_sampled(lb, format), output)
    return True


@app.command("compare")
def compare_command(
    store: StoreArg,
    measure: MeasuresOpt = [],  # noqa: B006
    primary: Annotated[str | None, typer.Option(help="Measure of the reference leaderboard, tau_ap's (default: the first -m as given; added if the -m lack it).")] = None,
    qrels: QrelsVersionsOpt = [],  # noqa: B006
    depth: Annotated[list[int], typer.Option("--depth", help="Cut the qrels to a depth-k re-pool of the pooled runs (repeatable).")] = [],  # noqa: B006
    round: Annotated[list[str], typer.Option("--round", help="Cut the qrels to a judging round's pool (repeatable).")] = [],  # noqa: B006
    topics: TopicsOpt = None,
    zero: ZeroOpt = False,
    shared_topics: SharedOpt = False,
    relevance_level: LevelOpt = 1,
    format: TableFormatOpt = "table",
    output: OutputOpt = None,
) -> None:
    """Correlate leaderboards: Kendall tau, tau_ap and Spearman rho between system orderings.

    Every combination of the given measures, qrels versions and pools (--depth, --round) is
    one leaderboard; each pair is compared, the first of the pair being tau_ap's reference.
    Example: `pooling compare s.duckdb -m map -m P_10` or `-m map --depth 10 --depth 100`.
    """
    from pooling.leaderboard.compare import board_specs, compare_leaderboards
    from pooling.store import Store

    specs = board_specs(measure or ["map"], qrels or None, depth or None, round or None,
                        primary=primary)
    with Store(store) as s:
        result = compare_leaderboards(s, specs, **scoring(topics, zero, shared_topics,
                                                          relevance_level))
        used = ", ".join(qrels) if qrels else s.resolve_qrels(None)
    _say_qrels(used)
    _render(result.pairs, format, output, "rank correlations between leaderboards")


@app.command("topic-report")
def topic_report_command(
    store: StoreArg,
    run: RunsToReportOpt = [],  # noqa: B006
    measure: MeasuresOpt = [],  # noqa: B006
    primary: PrimaryOpt = None,
    qrels: QrelsOpt = None,
    topics: TopicsOpt = None,
    zero: ZeroOpt = False,
    shared_topics: SharedOpt = False,
    relevance_level: LevelOpt = 1,
    format: TableFormatOpt = "csv",
    output: OutputOpt = None,
) -> None:
    """Per-topic scores beside the best, median and worst over all runs (as NIST reports)."""
    from pooling.leaderboard.per_topic import topic_report
    from pooling.store import Store

    with Store(store) as s:
        qrels = s.resolve_qrels(qrels)
        table = topic_report(s, qrels=qrels, measures=measures_or_default(measure),
                             primary=primary, runs=run or None, **scoring(topics, zero, shared_topics,
                                                         relevance_level))
    _say_qrels(qrels)
    _render(table, format, output)


@app.command("pool-bias")
def pool_bias_command(
    store: StoreArg,
    qrels: QrelsOpt = None,
    measure: OneMeasureOpt = [],  # noqa: B006
    primary: PrimaryOpt = None,
    depth: Annotated[int | None, typer.Option(help="Re-pool at this depth first (default: qrels as they are).")] = None,
    leave_out: Annotated[str, typer.Option(help="run (leave-one-run-out) or team (leave-one-group-out).")] = "run",
    runs: Annotated[str, typer.Option(help="Runs that built the pool: pooled, all, or a,b,c.")] = "pooled",
    judged_depth: Annotated[int | None, typer.Option(help="k of judged@k (default: --depth, else 10).")] = None,
    topics: TopicsOpt = None,
    zero: ZeroOpt = False,
    shared_topics: SharedOpt = False,
    relevance_level: LevelOpt = 1,
    format: TableFormatOpt = "table",
    output: OutputOpt = None,
) -> None:
    """Each run's score and rank without the judgments only it (or its team) contributed."""
    import pyarrow.compute as pc

    from pooling.leaderboard.pool_bias import pool_bias
    from pooling.store import Store

    with Store(store) as s:
        result = pool_bias(s, qrels=qrels, measure=analysed_measure(measure, primary), depth=depth, leave_out=leave_out,
                           pooled=runs, **scoring(topics, zero, shared_topics, relevance_level),
                           judged_depth=judged_depth)
    _say_qrels(result.qrels_version)
    where = f"depth-{depth} re-pool" if depth else "qrels as they are"
    title = (f"qrels {result.qrels_version}; leave one {leave_out} out, {where}: "
             f"pool {result.pool_size} documents, "
             f"{result.judged_in_pool} judged, {len(result.query_ids)} topics")
    table = result.table
    if output is not None or format == "csv":
        _render(table, format, output, title)
    else:
        if format == "table":  # the terminal gets the columns that matter
            table = table.select(["run_id", "team", "judged_at_k", "unique_docs",
                                  "unique_relevant", "score", "score_without",
                                  "relative_change", "rank", "rank_without", "pooled"])
        _render(table.filter(table["pooled"]).drop_columns(["pooled"]), format, None,
                f"pooled runs — {title}")
        unpooled = table.filter(pc.invert(table["pooled"])).drop_columns(["pooled"])
        if unpooled.num_rows:
            _render(unpooled, format, None, "unpooled runs (contributed nothing to the pool)")
    summary = result.summary()
    if summary.get("runs"):
        typer.echo(
            f"pooled runs: mean {result.measure} change {summary['mean_relative_change']:+.1%}, "
            f"worst {summary['worst_relative_change']:+.1%} ({summary['worst_run']})", err=True)


@app.command("folds")
def folds_command(
    store: StoreArg,
    family: Annotated[list[str], typer.Option("--family", help="Runs to choose from: names or patterns like 'fub03*' (repeatable; default all).")] = [],  # noqa: B006
    measure: OneMeasureOpt = [],  # noqa: B006
    primary: PrimaryOpt = None,
    k: Annotated[int, typer.Option("-k", help="Number of folds.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the topic split.")] = 0,
    folds: Annotated[list[str], typer.Option("--folds", help="Stored topic subsets to use as the folds (repeatable).")] = [],  # noqa: B006
    qrels: QrelsOpt = None,
    topics: TopicsOpt = None,
    format: TableFormatOpt = "table",
    output: OutputOpt = None,
) -> None:
    """Cross-validated selection: the family's best run on training folds, scored held out."""
    from pooling.leaderboard.folds import cross_validate
    from pooling.store import Store

    with Store(store) as s:
        qrels = s.resolve_qrels(qrels)
        result = cross_validate(s, family=family or None,
                                measure=analysed_measure(measure, primary), k=k, seed=seed,
                                folds=folds or None, qrels=qrels, topics=topics)
    _say_qrels(qrels)
    _render(result.folds, format, output, f"{len(result.family)} runs, {result.measure}")
    typer.echo(f"cross-validated {result.measure}: {result.cv_score:.4f}; best on all topics: "
               f"{result.oracle_run} {result.oracle_score:.4f}", err=True)


@topics_app.command("subset")
def topics_subset_command(
    store: StoreArg,
    name: Annotated[str, typer.Argument(help="Subset name, e.g. new.")],
    query_ids: Annotated[list[str], typer.Argument(help="Topic ids and ranges (601-650).")],
) -> None:
    """Store (or replace) a named topic subset; ranges keep the topics the store knows."""
    from pooling.store import Store
    from pooling.store.topic_selection import save_topic_subset

    with Store(store) as s:
        ids = save_topic_subset(s, name, query_ids)
    shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
    out.print(f"subset {name}: {len(ids)} topic(s) ({shown})", highlight=False)


@topics_app.command("list")
def topics_list_command(store: StoreArg) -> None:
    """List the stored topic subsets."""
    from pooling.store import Store
    from pooling.store.topic_selection import topic_subsets

    with Store(store, read_only=True) as s:
        subsets = topic_subsets(s)
    if not subsets:
        out.print("no topic subsets; add one with `pooling topics subset STORE NAME IDS…`")
    for name, ids in subsets.items():
        shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
        typer.echo(f"{name}\t{len(ids)}\t{shown}")


@topics_app.command("remove")
def topics_remove_command(
    store: StoreArg, name: Annotated[str, typer.Argument(help="Subset to remove.")]
) -> None:
    """Remove a stored topic subset."""
    from pooling.store import Store
    from pooling.store.topic_selection import delete_topic_subset

    with Store(store) as s:
        delete_topic_subset(s, name)
