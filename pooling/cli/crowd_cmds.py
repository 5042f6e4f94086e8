"""Crowd rounds: each worker's quality on gold, and the organiser's decisions about workers."""

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg
from pooling.errors import StoreError
from pooling.terminal.console import Console

out = Console()

crowd_app = typer.Typer(help="Crowd rounds: each worker's quality on gold; flag or withdraw workers.",
                        no_args_is_help=True)
app.add_typer(crowd_app, name="crowd")

RoundOpt = Annotated[str, typer.Option("--round", help="The crowd round's name.")]
GoldOpt = Annotated[str | None, typer.Option(
    help="The qrels version of known answers (default: the round's own gold version).")]
MinGoldOpt = Annotated[int, typer.Option(
    help="Gold answers a worker needs before their figures on gold are shown.")]
ReasonOpt = Annotated[str, typer.Option(help="Why (kept in the record of decisions).")]
ByOpt = Annotated[str | None, typer.Option(
    "--by", help="Who decides, for the record (default: your login name).", show_default=False)]
MEASURE_NAMES = {"accuracy": "accuracy", "binary": "binary accuracy", "kappa": "kappa"}


def _dash(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _with_interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f} [{_dash(low, 2)}, {_dash(high, 2)}]"


def _who(by: str | None) -> str:
    import getpass

    return by or getpass.getuser()


@crowd_app.command("quality")
def quality(
    store: StoreArg,
    round: RoundOpt,
    gold: GoldOpt = None,
    min_gold: MinGoldOpt = 3,
    threshold: Annotated[int, typer.Option(
        help="The lowest relevant grade, for binary accuracy.")] = 1,
    format: Annotated[str, typer.Option(help="table, csv or json.")] = "table",
    sort: Annotated[str, typer.Option(
        help="worker, answers, unjudgeable, gold, accuracy, binary, kappa, agreement or "
             "seconds; workers without the figure come last.")] = "worker",
    descending: Annotated[bool, typer.Option(help="Largest first.")] = False,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Write the report here, in the --format chosen (default: "
        "stdout).")] = None,
) -> None:
    """Each worker's quality in a crowd round: accuracy, binary accuracy and Cohen's kappa on
    the gold pairs they answered, with 95% intervals (Wilson), once they answered --min-gold of
    them ("—" before); answers, unjudgeable answers, median seconds per answer, and the share
    of their pairs on which they agree with the other workers' majority."""
    import io

    from pooling.crowds.quality import round_quality
    from pooling.output_files import write_text
    from pooling.store import Store

    if format not in ("table", "csv", "json"):
        raise StoreError(f"--format must be table, csv or json, not {format!r}")
    with Store(store, read_only=True) as s:
        report = round_quality(s, round, gold=gold, min_gold=min_gold, threshold=threshold)
    if format == "csv":
        text = report.to_csv(sort, descending=descending)
    elif format == "json":
        text = report.to_json(sort, descending=descending)
    else:
        buffer = io.StringIO()
        _print_quality(Console(file=buffer) if output is not None else out, report, round,
                       min_gold, sort, descending)
        text = buffer.getvalue()
    if output is not None:
        write_text(output, text)
        Console(stderr=True).print(f"wrote {output}", highlight=False)
    elif format != "table":
        typer.echo(text, nl=False)


def _print_quality(console: Console, report, round: str, min_gold: int, sort: str,
                   descending: bool) -> None:
    """The quality report as a line and a table, on `console`."""
    console.print(f"round {round}: {len(report.workers)} worker(s), gold {report.gold}; figures "
              f"with 95% intervals from {min_gold} gold answers on", highlight=False)
    table = Table("worker", "answers", "unjudgeable", "gold", "accuracy", "binary", "kappa",
                  "agreement", "s/answer", "decision")
    for q in report.sorted(sort, descending=descending):
        table.add_row(q.assessor_id, str(q.answers), str(q.unjudgeable), str(q.gold_answered),
                      *(_with_interval(*q.figure(m)) for m in ("accuracy", "binary", "kappa")),
                      _dash(q.agreement), _dash(q.median_seconds, 1),
                      report.decision_of(q.assessor_id))
    console.print(table)


@crowd_app.command("flag")
def flag(
    store: StoreArg,
    round: RoundOpt,
    workers: Annotated[list[str] | None, typer.Argument(
        help="The workers (assessor ids); or choose them with --below.", show_default=False)] = None,
    below: Annotated[float | None, typer.Option(
        help="Flag every worker whose figure is confidently below this bar: the upper bound "
             "of its 95% interval is below it.")] = None,
    measure: Annotated[str, typer.Option(help="With --below: accuracy, binary or kappa.")] = "accuracy",
    withdraw: Annotated[bool, typer.Option(
        "--withdraw", help="Also take back their remaining queue: they are handed nothing "
        "more in this round.")] = False,
    reason: Annotated[str | None, typer.Option(
        help="Why (kept in the record of decisions; required when naming workers).")] = None,
    gold: GoldOpt = None,
    min_gold: MinGoldOpt = 3,
    by: ByOpt = None,
) -> None:
    """Flag workers of a crowd round (they keep judging), or withdraw them (--withdraw). Every
    judgment they made stays in the history and in derived qrels; the decision is recorded
    with who decided, why, and with --below the measure, the worker's value and the bar."""
    from pooling.crowds.quality import decide, flag_below
    from pooling.store import Store

    decision = "withdraw" if withdraw else "flag"
    if below is None and not workers:
        raise StoreError("name the workers to flag, or give --below BAR to flag by a figure")
    if below is not None and workers:
        raise StoreError("name workers or give --below, not both")
    with Store(store) as s:
        if below is None:
            n = decide(s, round, workers or [], decision, reason=reason or "",
                       decided_by=_who(by))
            out.print(f"{decision}: {n} worker(s) in round {round}", highlight=False)
            return
        chosen = flag_below(s, round, below, measure=measure, withdraw=withdraw, reason=reason,
                            gold=gold, min_gold=min_gold, decided_by=_who(by))
    name = MEASURE_NAMES.get(measure, measure)
    if not chosen:
        out.print(f"no worker of round {round} newly found with {name} confidently below "
                  f"{below:g}", highlight=False)
        return
    for q in chosen:
        out.print(f"{decision}: {q.assessor_id} ({name} {_with_interval(*q.figure(measure))} "
                  f"on {q.gold_answered} gold)", highlight=False)


@crowd_app.command("clear")
def clear(
    store: StoreArg,
    round: RoundOpt,
    workers: Annotated[list[str], typer.Argument(help="The workers (assessor ids).")],
    reason: ReasonOpt,
    by: ByOpt = None,
) -> None:
    """Undo a flag or a withdrawal: the workers are handed pairs again. The earlier decisions
    stay in the record."""
    from pooling.crowds.quality import decide
    from pooling.store import Store

    with Store(store) as s:
        n = decide(s, round, workers, "clear", reason=reason, decided_by=_who(by))
    out.print(f"clear: {n} worker(s) in round {round}", highlight=False)


@crowd_app.command("decisions")
def decisions(
    store: StoreArg,
    round: Annotated[str | None, typer.Option(
        "--round", help="Only this round (default: every round).")] = None,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Write CSV here instead of a table.")] = None,
) -> None:
    """The record of decisions about workers, in the order made: who decided what, when, why,
    and on which figure."""
    from pooling.crowds.decisions import decision_record
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        record = decision_record(s, round)
    if output is not None:
        import io

        import pyarrow.csv as pacsv

        from pooling.formats.csv_cells import safe_text_columns
        from pooling.output_files import write_bytes

        buf = io.BytesIO()
        pacsv.write_csv(safe_text_columns(record), buf)  # a reason is never run as a formula
        write_bytes(output, buf.getvalue())
        typer.echo(f"wrote {output}", err=True)
        return
    if record.num_rows == 0:
        out.print(f"no decision about workers{f' of round {round}' if round else ''} yet",
                  highlight=False)
        return
    table = Table("round", "worker", "decision", "reason", "measure", "value", "bar",
                  "decided by", "decided at")
    for r in record.to_pylist():
        table.add_row(r["round_id"], r["assessor_id"], r["decision"], r["reason"] or "",
                      r["measure"] or "", _dash(r["value"]),
                      "" if r["bar"] is None else f"{r['bar']:g}", r["decided_by"] or "",
                      f"{r['decided_at']:%Y-%m-%d %H:%M:%S}")
    out.print(table)


@crowd_app.command("gold")
def gold_questions(
    store: StoreArg,
    round: RoundOpt,
    source: Annotated[str, typer.Option(
        "--from", help="The expert's qrels version to draw gold pairs from.")],
    name: Annotated[str, typer.Option(help="The new gold qrels version's name.")],
    per_topic: Annotated[int, typer.Option(help="Gold pairs per topic of the round.")] = 4,
    where: Annotated[str, typer.Option(
        help="outside-pool: pairs the round does not queue (a queued pair is the crowd's to "
             "answer, never a gold question).")] = "outside-pool",
    rate: Annotated[float | None, typer.Option(
        help="Share of each worker's pairs that are gold (default: the round's, else 0.1).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the draw.")] = 0,
) -> None:
    """Draw gold questions for a crowd round from an expert's qrels version (--per-topic pairs
    of each topic, relevant and not alike) and mix them into every worker's queue from the
    next pair on. Gold pairs look like any other pair to workers and never enter a qrels
    version derived from the round."""
    from pooling.crowds.simulation import gold_sample
    from pooling.judging.rounds import gold_count, set_gold
    from pooling.store import Store

    with Store(store) as s, s.transaction():
        made = gold_sample(s, source, round, per_topic, name=name, where=where,  # type: ignore[arg-type]
                           seed=seed)
        rnd = set_gold(s, round, name, rate)
        left = gold_count(s, rnd)
    out.print(f"gold {name}: {made.n_rows} pairs of {made.n_topics} topics from {source}, "
              f"mixed into round {round} at rate {rnd.gold_rate:g} (K = {rnd.redundancy}); "
              f"{left:,} gold pair(s) outside the queue", highlight=False)


@crowd_app.command("simulate")
def simulate(
    store: StoreArg,
    round: RoundOpt,
    truth: Annotated[str, typer.Option(
        help="The qrels version the simulated workers' answers are drawn from.")],
    workers: Annotated[int, typer.Option(help="How many workers.")] = 30,
    sloppy: Annotated[float, typer.Option(
        help="Share of sloppy workers (right 55% of the time).")] = 0.3,
    spammers: Annotated[float, typer.Option(
        help="Share of spammers (answers that ignore the document).")] = 0.1,
    unjudgeable: Annotated[float, typer.Option(
        help="Chance of a 'cannot judge' answer, for every worker.")] = 0.0,
    task_size: Annotated[int, typer.Option(help="Pairs of one topic per task.")] = 5,
    prefix: Annotated[str, typer.Option(help="Worker ids: PREFIX-01, PREFIX-02, ...")] = "worker",
    seed: Annotated[int, typer.Option(help="Seed of the crowd and of its answers.")] = 0,
    matrices: Annotated[Path | None, typer.Option(
        "--matrices", help="Write every worker's true confusion matrix here (CSV), to set "
        "against what `pooling qrels workers` recovers.")] = None,
) -> None:
    """Let a simulated crowd judge a round through the people's queue until it has nothing
    left to hand them: reliable workers (right 85% of the time), sloppy ones and spammers,
    each with a known confusion matrix, answers drawn from --truth. For trying a design
    (redundancy, gold rate, rule, bar) before a real crowd costs money."""
    from pooling.crowds.simulation import play_round, simulated_crowd, truth_grades
    from pooling.judging.rounds import get_round
    from pooling.output_files import write_bytes
    from pooling.store import Store
    from pooling.terminal.progress import terminal_progress

    with Store(store) as s:
        rnd = get_round(s, round)
        crowd = simulated_crowd(workers, rnd.grades, sloppy=sloppy, spammers=spammers,
                                unjudgeable=unjudgeable, seed=seed, prefix=prefix)
        answers = truth_grades(s, truth)
        with terminal_progress() as bar:
            play = play_round(s, round, answers, crowd, task_size=task_size, seed=seed,
                              progress=bar)
    kinds = {k: sum(w.kind == k for w in crowd) for k in ("reliable", "sloppy", "spammer")}
    out.print(f"round {round}: {play.answers} answers ({play.unjudgeable} unjudgeable) in "
              f"{play.tasks} tasks by {len(crowd)} simulated workers ({kinds['reliable']} "
              f"reliable, {kinds['sloppy']} sloppy, {kinds['spammer']} spammers)", highlight=False)
    if matrices is not None:
        import io

        import pyarrow.csv as pacsv

        buf = io.BytesIO()
        pacsv.write_csv(play.confusion_table(), buf)
        write_bytes(matrices, buf.getvalue())
        out.print(f"wrote {matrices}", highlight=False)
