"""Automatic judges: `pooling judges add|list` and `pooling judge`."""

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


@judges_app.command("add")
def judges_add(
    store: StoreArg,
    name: Annotated[str, typer.Argument(help="The judge's name (its id is made from it).")],
    backend: Annotated[str, typer.Option(help="openai, command or learned (see `pooling judges "
                                         "backends`).")],
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="A backend parameter as key=value (repeat it).")] = None,
    prompt: Annotated[Path | None, typer.Option(
        help="A prompt template replacing the default UMBRELA-style one (openai).",
        readable=False)] = None,
) -> None:
    """Add an automatic judge: its backend, model, prompt and parameters are its identity.

    API keys are never stored: name the environment variable that holds one
    (--param api_key_env=NAME).
    """
    from pooling.formats.source import check_file
    from pooling.judging.backends.prompt import read_prompt
    from pooling.judging.judges import add_judge
    from pooling.store import Store
    from pooling.strategies.params import parse_key_values

    if prompt is not None:
        check_file(prompt)  # a directory, device or pipe: one plain sentence
    text = read_prompt(prompt) if prompt is not None else None
    with Store(store) as s:
        judge = add_judge(s, name, backend, parse_key_values(param or [], StoreError), prompt=text)
    shown = f", prompt sha256 {judge.prompt_sha256[:12]}" if judge.prompt_sha256 else ""
    out.print(f"judge {judge.judge_id}: backend {judge.backend}"
              f"{', model ' + judge.model if judge.model else ''}{shown}", highlight=False)


@judges_app.command("list")
def judges_list(store: StoreArg) -> None:
    """List the automatic judges with what they have judged."""
    from pooling.judging.judges import list_judges
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
    from pooling.judging.backends import BACKENDS

    for spec in BACKENDS.values():
        out.print(f"[bold]{escape(spec.name)}[/bold]: {escape(spec.description)}", markup=True)
        for p in spec.params:
            default = "" if p.default is None else f" (default {p.default})"
            out.print(f"  {p.name}: {p.help}{default}", highlight=False)


@app.command("judge")
def judge_command(
    store: StoreArg,
    judge: Annotated[str, typer.Option(help="The judge (see `pooling judges list`).")],
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
    """
    from pooling.judging.judges import judge_pairs, judge_round, qrels_pairs, read_pairs
    from pooling.store import Store
    from pooling.terminal.progress import terminal_progress

    chosen = [x for x in (round, pairs, qrels) if x is not None]
    if len(chosen) != 1:
        raise StoreError("name what to judge with exactly one of --round, --pairs or --qrels")
    options = {"limit": limit, "overrides": {"concurrency": concurrency},
               "engine": engine.value, "ray_address": ray_address}
    with Store(store) as s, terminal_progress() as bar:
        if round is not None:
            report = judge_round(s, judge, round, progress=bar, **options)
        else:
            todo = read_pairs(pairs) if pairs is not None else qrels_pairs(s, qrels)
            report = judge_pairs(s, judge, todo, progress=bar, **options)
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
