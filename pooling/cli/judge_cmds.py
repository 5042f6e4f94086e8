"""Automatic judges: `pooling judges add|list|price|usage`, `pooling judge` (one judge or a
jury) and `pooling jury report`."""

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.engine_options import EngineArg, EngineOpt, RayAddress
from pooling.cli.store_cmds import StoreArg
from pooling.errors import StoreError
from pooling.terminal.console import Console

out = Console()
err = Console(stderr=True)

judges_app = typer.Typer(help="Automatic judges (models) that judge beside people.",
                         no_args_is_help=True)
app.add_typer(judges_app, name="judges")
jury_app = typer.Typer(help="Juries of automatic judges: how they agree, and whether they beat "
                       "their best member.", no_args_is_help=True)
app.add_typer(jury_app, name="jury")


@judges_app.command("add")
def judges_add(
    store: StoreArg,
    name: Annotated[str, typer.Argument(help="The judge's name (its id is made from it).")],
    backend: Annotated[str, typer.Option(help="openai, command, learned or lexical (see `pooling judges "
                                         "backends`).")],
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="A backend parameter as key=value (repeat it).")] = None,
    prompt: Annotated[Path | None, typer.Option(
        help="A prompt template replacing the default UMBRELA-style one (openai).",
        readable=False)] = None,
    price_in: Annotated[float | None, typer.Option(
        help="Price per million prompt tokens, for `pooling judges usage` (with --price-out).")] = None,
    price_out: Annotated[float | None, typer.Option(
        help="Price per million completion tokens (with --price-in).")] = None,
) -> None:
    """Add an automatic judge: its backend, model, prompt and parameters are its identity.

    API keys are never stored: name the environment variable that holds one
    (--param api_key_env=NAME).
    """
    if (price_in is None) != (price_out is None):
        raise StoreError("give both --price-in and --price-out (per million tokens), or neither")
    from pooling.formats.source import check_file
    from pooling.judges.backends.prompt import read_prompt
    from pooling.judges.model_judges import add_judge
    from pooling.store import Store
    from pooling.strategies.params import parse_key_values

    if prompt is not None:
        check_file(prompt)  # a directory, device or pipe: one plain sentence
    text = read_prompt(prompt) if prompt is not None else None
    with Store(store) as s:
        judge = add_judge(s, name, backend, parse_key_values(param or [], StoreError), prompt=text)
        if price_in is not None and price_out is not None:
            from pooling.judges.usage import set_price

            set_price(s, judge.judge_id, price_in, price_out)
    shown = f", prompt sha256 {judge.prompt_sha256[:12]}" if judge.prompt_sha256 else ""
    out.print(f"judge {judge.judge_id}: backend {judge.backend}"
              f"{', model ' + judge.model if judge.model else ''}{shown}", highlight=False)


@judges_app.command("list")
def judges_list(store: StoreArg) -> None:
    """List the automatic judges with what they have judged."""
    from pooling.judges.model_judges import list_judges
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        judges = list_judges(s)
        counts = dict(s.con.execute(
            "SELECT assessor_id, count(*) FROM judgments WHERE assessor_id IN "
            "(SELECT assessor_id FROM assessors WHERE kind = 'model') GROUP BY 1").fetchall())
    if not judges:
        out.print("no judges yet; add one with `pooling judges add`")
        return
    table = Table("judge_id", "backend", "model", "prompt sha256", "judgments")
    for j in judges:
        table.add_row(j.judge_id, j.backend, j.model or "", (j.prompt_sha256 or "")[:12],
                      f"{counts.get(j.judge_id, 0):,}")
    out.print(table)


@judges_app.command("backends")
def judges_backends() -> None:
    """List the judge backends and the parameters each takes."""
    from pooling.judges.backends import BACKENDS

    for spec in BACKENDS.values():
        out.print(f"[bold]{escape(spec.name)}[/bold]: {escape(spec.description)}", markup=True)
        for p in spec.params:
            default = "" if p.default is None else f" (default {p.default})"
            out.print(f"  {p.name}: {p.help}{default}", highlight=False)


@judges_app.command("price")
def judges_price(
    store: StoreArg,
    name: Annotated[str, typer.Argument(help="The judge.")],
    price_in: Annotated[float, typer.Option(help="Price per million prompt tokens.")],
    price_out: Annotated[float, typer.Option(help="Price per million completion tokens.")],
) -> None:
    """Set a judge's price (the latest one holds; its sample jurors cost the same)."""
    from pooling.judges.usage import set_price
    from pooling.store import Store

    with Store(store) as s:
        set_price(s, name, price_in, price_out)
    out.print(f"judge {name}: {price_in:g} per million prompt tokens, {price_out:g} per million "
              "completion tokens", highlight=False)


@judges_app.command("usage")
def judges_usage(
    store: StoreArg,
    round: Annotated[str | None, typer.Option(
        "--round", help="Only the calls made for this round.")] = None,
    price: Annotated[list[str] | None, typer.Option(
        "--price", help="A price as JUDGE=IN/OUT per million prompt/completion tokens, over "
        "the stored one (repeat it).")] = None,
    format: Annotated[str, typer.Option(help="table, csv or json.")] = "table",
) -> None:
    """Calls, failures, tokens, seconds and cost per juror, and per judge over its samples
    (calls made: answers taken from the cache cost nothing and are not counted). csv: one row
    per juror; json: {"judges": [...], "jurors": [...]}."""
    import csv
    import io
    import json

    from pooling.formats.csv_cells import safe_cell
    from pooling.judges.usage import judge_usage, usage_by_judge
    from pooling.store import Store

    if format not in ("table", "csv", "json"):
        raise StoreError(f"--format must be table, csv or json, not {format!r}")
    prices = dict(_price(p) for p in price or [])
    with Store(store, read_only=True) as s:
        rows = judge_usage(s, round, prices)
    totals = usage_by_judge(rows)
    if format == "json":
        out.print(json.dumps({"judges": [u.as_dict() for u in totals],
                              "jurors": [u.as_dict() for u in rows]}, indent=2),
                  highlight=False, markup=False, soft_wrap=True)
        return
    names = ("judge", "juror", "sample", "calls", "failed", "prompt_tokens", "completion_tokens",
             "seconds", "cost")
    if format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(names)
        for u in rows:
            d = u.as_dict()
            writer.writerow([safe_cell(str(d[n])) if isinstance(d[n], str) else
                             ("" if d[n] is None else d[n]) for n in names])
        out.print(buffer.getvalue(), end="", highlight=False, markup=False, soft_wrap=True)
        return
    if not rows:
        out.print("no calls to any judge yet" + (f" in round {round}" if round else ""))
        return
    table = Table(*names)
    for total in totals:
        jurors = [u for u in rows if u.judge == total.judge]
        for u in jurors + ([total] if len(jurors) > 1 else []):
            table.add_row(u.judge, u.juror, str(u.sample) if u.sample else "", f"{u.calls:,}",
                          f"{u.failed:,}", f"{u.prompt_tokens:,}", f"{u.completion_tokens:,}",
                          f"{u.seconds:.1f}", "" if u.cost is None else f"{u.cost:.4f}")
    out.print(table)
    unpriced = sorted({u.judge for u in rows if u.cost is None})
    if unpriced:
        out.print(f"no price for {', '.join(unpriced)}: set one with `pooling judges price` or "
                  "--price JUDGE=IN/OUT", highlight=False)


def _price(text: str) -> tuple[str, tuple[float, float]]:
    """JUDGE=IN/OUT as (judge, (in, out))."""
    name, _, prices = text.partition("=")
    price_in, _, price_out = prices.partition("/")
    try:
        return name.strip(), (float(price_in), float(price_out))
    except ValueError:
        raise StoreError(f"--price {text!r}: give it as JUDGE=IN/OUT, prices per million "
                         "tokens, e.g. umbrela=0.15/0.60") from None


@app.command("judge")
def judge_command(
    store: StoreArg,
    judge: Annotated[list[str], typer.Option(
        help="The judge (see `pooling judges list`); repeat it for a jury of judges.")],
    round: Annotated[str | None, typer.Option(
        "--round", help="Judge this round as an assessor would: its pool, or an adaptive "
        "round's documents as its strategy chooses them from the grades so far.")] = None,
    pairs: Annotated[Path | None, typer.Option(
        help="Judge the pairs of this file: 'query_id doc_id' lines, or qrels or run lines.",
        readable=False)] = None,
    qrels: Annotated[str | None, typer.Option(
        help="Judge the pairs of this qrels version (to set the judge against it).")] = None,
    limit: Annotated[int | None, typer.Option(help="Judge at most N pairs now.")] = None,
    concurrency: Annotated[int | None, typer.Option(
        help="Requests in flight at once (openai).")] = None,
    samples: Annotated[int, typer.Option(
        help="Ask each judge N times per pair: each sample is a juror of its own "
        "(JUDGE-sample-N); openai samples at its temperature, a command program gets the "
        "sample's number.")] = 1,
    batch: Annotated[int, typer.Option(
        "--batch", min=1, max=100_000, help="Pairs stored per commit: a kill loses at most "
        "one batch's answers (they are asked again); larger batches cost less per pair for a "
        "fast judge (lexical, a local program).")] = 32,
    engine: EngineArg = EngineOpt.local,
    ray_address: RayAddress = None,
) -> None:
    """Let an automatic judge judge pairs, a batch per commit, with a progress bar on a terminal.

    An adaptive round (e.g. the default mixfuse) is judged a topic's document at a time: the
    strategy chooses each next document after the grade of the one before, learning from the
    people's judgments of the round and, where no person has judged, the judge's; up to the
    round's budget or --limit. Interrupted (even by kill -9), it resumes where it stopped: a
    pair already judged is not judged again, and an answer already received is not asked for
    again.

    A jury: several --judge, or --samples N, and every juror judges every pair, one juror
    after the other, each resumable on its own (see docs/judging.md, "Juries").
    """
    from pooling.judges.model_judges import judge_pairs, judge_round, qrels_pairs, read_pairs
    from pooling.store import Store
    from pooling.terminal.progress import terminal_progress

    chosen = [x for x in (round, pairs, qrels) if x is not None]
    if len(chosen) != 1:
        raise StoreError("name what to judge with exactly one of --round, --pairs or --qrels")
    options = {"limit": limit, "overrides": {"concurrency": concurrency}, "batch": batch,
               "engine": engine.value, "ray_address": ray_address}
    if len(judge) > 1 or samples != 1:
        from pooling.judges.juries import judge_jury

        with Store(store) as s, terminal_progress() as bar:
            todo = (None if round is not None else
                    read_pairs(pairs) if pairs is not None else qrels_pairs(s, qrels))
            reports = judge_jury(s, judge, samples=samples, round_id=round, pairs=todo,
                                 progress=bar, **options)
        for report in reports:
            _print_report(report)
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in reports)
        out.print(f"jury of {len(reports)} juror(s): {sum(r.judged for r in reports):,} judged "
                  f"now, {sum(r.failed for r in reports):,} failed, {tokens:,} tokens; calls "
                  "and cost per juror with `pooling judges usage`", highlight=False)
        _fail_on_failures(reports)
        return
    with Store(store) as s, terminal_progress() as bar:
        if round is not None:
            report = judge_round(s, judge[0], round, progress=bar, **options)
        else:
            todo = read_pairs(pairs) if pairs is not None else qrels_pairs(s, qrels)
            report = judge_pairs(s, judge[0], todo, progress=bar, **options)
    _print_report(report)
    _fail_on_failures([report])


def _fail_on_failures(reports) -> None:
    """A job where calls failed ends with exit code 1 and their count: what was judged is
    stored, and a run again asks only for the pairs without a grade."""
    failed = [r for r in reports if r.failed]
    if failed:
        from pooling.judges.backends import JudgeError

        who = ", ".join(f"{r.judge_id} {r.failed:,}" for r in failed)
        raise JudgeError(
            f"{sum(r.failed for r in failed):,} call(s) gave no grade ({who}); the reasons are "
            "above and every one is in the store's judge_calls table. Fix the cause and run the "
            "command again: pairs already judged are not asked again")


def _print_report(report) -> None:
    """What one judge's (or juror's) job did, its failures on stderr."""
    tokens = report.prompt_tokens + report.completion_tokens
    of = f"of {report.pairs:,} pairs"
    if report.adaptive:
        r = report.round
        of = (f"of {report.pairs:,} pairs chosen so far by adaptive round {r.round_id} "
              f"({r.strategy}), each after the grade of the one before")
    out.print(
        f"{report.judge_id}: {report.judged:,} judged now ({report.cached:,} from cached answers), "
        f"{report.already:,} judged before, {report.failed:,} failed, {of}; "
        f"{tokens:,} tokens ({report.prompt_tokens:,} prompt, {report.completion_tokens:,} "
        f"completion); {report.seconds:.1f} s", highlight=False)
    if report.adaptive:
        out.print(_adaptive_status(report), highlight=False)
    for reason in report.failures:
        err.print(f"failed: {reason}", highlight=False, markup=False)
    if report.failed > len(report.failures):
        err.print(f"... and {report.failed - len(report.failures):,} more failures; every one is "
                  "in the store's judge_calls table", highlight=False)


def _adaptive_status(report) -> str:
    """Where an adaptive round stands for the judge after a job: what is left and why."""
    r = report.round
    n = len(r.topics)
    parts = []
    if report.open_topics:
        parts.append(f"{report.open_topics:,} of {n:,} topic(s) have more to judge (--limit "
                     "stopped here); run it again to go on")
    if report.stuck_topics:
        parts.append(f"{report.stuck_topics:,} of {n:,} topic(s) wait for a document that failed "
                     "now (the strategy needs its grade to go on); fix the cause and run it again")
    if parts:
        return "; ".join(parts)
    return (f"every topic of round {r.round_id} is done: its budget is spent, its stopping "
            "rule ended it or no candidate is left")


@jury_app.command("report")
def jury_report_command(
    store: StoreArg,
    round: Annotated[str, typer.Option("--round", help="The round the jury judged.")],
    gold: Annotated[str, typer.Option(help="A qrels version of known answers among the pairs "
                                      "the jury judged.")],
    jurors: Annotated[str | None, typer.Option(
        help="The jurors, comma-separated (a judge brings its samples); default: every judge "
        "that judged the round.")] = None,
    folds: Annotated[int, typer.Option(help="Folds of the cross-validation over the gold.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the folds.")] = 0,
    relevance_level: Annotated[int, typer.Option(
        "-l", "--relevance-level", help="Lowest relevant grade, for binary accuracy.")] = 1,
    format: Annotated[str, typer.Option(help="table or json.")] = "table",
) -> None:
    """A jury measured: agreement among its jurors, each against the round's people and the
    gold, and majority, Wawa, Dawid-Skene and the gold-weighted rule scored under k-fold
    cross-validation over the gold (never on the gold they were fitted on): does the jury beat
    its best member?"""
    from pooling.judges.jury_report import jury_report
    from pooling.store import Store

    if format not in ("table", "json"):
        raise StoreError(f"--format must be table or json, not {format!r}")
    names = [n.strip() for n in jurors.split(",") if n.strip()] if jurors else None
    with Store(store, read_only=True) as s:
        report = jury_report(s, round, gold, jurors=names, folds=folds, seed=seed,
                             relevance_level=relevance_level)
    if format == "json":
        out.print(report.to_json(), highlight=False, markup=False, soft_wrap=True)
        return
    _print_jury(report)


def _num(value: float, digits: int = 3) -> str:
    return "-" if value != value else f"{value:.{digits}f}"  # nan: not measurable


def _print_jury(report) -> None:
    """The jury report as plain tables, ending with its verdict."""
    out.print(f"jury of round {report.round_id}: {len(report.jurors)} juror(s), gold "
              f"{report.gold} ({report.gold_pairs:,} gold pairs judged)", highlight=False)
    table = Table("juror", "pairs", "gold pairs", "gold accuracy", "binary", "kappa (gold)",
                  "pairs with people", "accuracy (people)", "kappa (people)", "weight")
    for j in report.jurors:
        table.add_row(j.juror, f"{j.pairs:,}", f"{j.gold_pairs:,}", _num(j.gold_accuracy),
                      _num(j.gold_binary_accuracy), _num(j.gold_kappa), f"{j.people_pairs:,}",
                      _num(j.people_accuracy), _num(j.people_kappa), _num(j.weight, 2))
    out.print(table)
    out.print(f"agreement among jurors: Krippendorff's alpha {_num(report.alpha_nominal)} "
              f"(nominal), {_num(report.alpha_ordinal)} (ordinal)", highlight=False)
    if report.pairwise:
        pairs = Table("juror", "juror", "shared pairs", "Cohen's kappa")
        for a, b, n, kappa in report.pairwise:
            pairs.add_row(a, b, f"{n:,}", _num(kappa))
        out.print(pairs)
    rules = Table(f"rule ({report.folds}-fold CV over gold)", "accuracy", "binary accuracy")
    best = report.best_juror
    rules.add_row(f"best juror ({best.juror})", _num(best.gold_accuracy),
                  _num(best.gold_binary_accuracy))
    for r in report.rules:
        rules.add_row(r.rule, _num(r.accuracy), _num(r.binary_accuracy))
    out.print(rules)
    out.print(report.verdict, highlight=False)
