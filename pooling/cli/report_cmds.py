"""Report commands: `report runs`, the reports a campaign sends its participants."""

from pathlib import Path
from typing import Annotated

import typer

from pooling.cli.app import app
from pooling.cli.leaderboard_options import (
    AlphaOpt,
    CorrectionOpt,
    LevelOpt,
    MeasuresOpt,
    PrimaryOpt,
    QrelsOpt,
    RunsToReportOpt,
    SharedOpt,
    TestOpt,
    TestSeedOpt,
    TopicsOpt,
    ZeroOpt,
    scoring,
)
from pooling.cli.store_cmds import StoreArg

report_app = typer.Typer(help="Reports for participants: one per run, with an index.",
                         no_args_is_help=True)
app.add_typer(report_app, name="report")


@report_app.command("runs")
def report_runs_command(
    store: StoreArg,
    out: Annotated[Path, typer.Argument(help="Folder to write the reports to (created if missing).")],
    qrels: QrelsOpt = None,
    measure: MeasuresOpt = [],  # noqa: B006
    primary: PrimaryOpt = None,
    run: RunsToReportOpt = [],  # noqa: B006
    test: TestOpt = "t",
    correction: CorrectionOpt = None,
    alpha: AlphaOpt = 0.05,
    topics: TopicsOpt = None,
    zero: ZeroOpt = False,
    shared_topics: SharedOpt = False,
    relevance_level: LevelOpt = 1,
    seed: TestSeedOpt = 0,
    pdf: Annotated[bool, typer.Option("--pdf/--no-pdf", help="Also print each report to PDF (needs WeasyPrint: the reports extra).")] = True,
) -> None:
    """Write one report per run (HTML and PDF) and an index.html linking them.

    Each report shows the run's summary measures with intervals, its per-topic scores
    against the best, median and worst of all runs (the TREC appendix view), its rank with
    the significance tests against every other run, and how many of its top 10 and 100
    documents were judged. On a sampled qrels version it shows the inferred measures'
    estimates with their intervals and says they come from a sample. The pages fetch
    nothing, so a participant can read them offline.
    """
    from pooling.leaderboard.report_files import write_participant_reports
    from pooling.store import Store
    from pooling.terminal.progress import terminal_progress

    with Store(store) as s, terminal_progress() as bar:
        written = write_participant_reports(
            s, out, pdf=pdf, qrels=qrels, measures=measure or None, primary=primary,
            runs=run or None, progress=bar,
            test=test, correction=correction, alpha=alpha, seed=seed,
            **scoring(topics, zero, shared_topics, relevance_level))
    kinds = "HTML and PDF" if pdf else "HTML"
    typer.echo(f"qrels: {written.reports.qrels_version}", err=True)
    typer.echo(f"wrote {len(written.pages)} report(s) ({kinds}) to {written.folder}", err=True)
    typer.echo(str(written.index.resolve()))
