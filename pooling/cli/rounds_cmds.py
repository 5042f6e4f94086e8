"""Judging rounds: pool one with a strategy (`strategies` lists them, `plan-sample` plans a
sampled round within a budget), give its topics to assessors, follow its progress, export its
pool. `RoundOpt` is the option every command on one round shares."""

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg, export_app
from pooling.errors import StoreError
from pooling.terminal.console import Console

out = Console()
err = Console(stderr=True)

RoundOpt = Annotated[str, typer.Option("--round", help="The judging round's name.")]


@app.command()
def pool(
    store: StoreArg,
    round: RoundOpt,
    strategy: Annotated[str | None, typer.Option(
        help="Pooling strategy (see `pooling strategies`; default: the one marked there).")] = None,
    depth: Annotated[int | None, typer.Option(help="Documents per run (candidates; depth's k).")] = None,
    budget: Annotated[int | None, typer.Option(help="Judgments per topic.")] = None,
    total_budget: Annotated[int | None, typer.Option(help="Judgments in the whole round.")] = None,
    floor: Annotated[int | None, typer.Option(help="Every run's top f documents first (fairness).")] = None,
    stop_after: Annotated[int | None, typer.Option(help="Stop a topic after s non-relevant in a row.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for randomised strategies.")] = 0,
    runs: Annotated[str, typer.Option(help="'pooled', 'all' or a comma-separated list of run_ids.")] = "pooled",
    topics: Annotated[str | None, typer.Option(help="Comma-separated query_ids (default: all).")] = None,
    grades: Annotated[str, typer.Option(help="The round's grade scale.")] = "0,1,2",
    exclude_judged: Annotated[bool, typer.Option(help="Skip pairs judged in earlier rounds.")] = False,
    param: Annotated[list[str], typer.Option(help="Strategy parameter key=value (repeatable).")] = [],  # noqa: B006
    order: Annotated[str, typer.Option(
        help="Run order pooled from: score (trec_eval's: score desc, doc_id desc; as NIST pools) "
             "or rank (the submitted rank column, ties by score desc, doc_id desc; as CLEF "
             "pools).")] = "score",
    judge: Annotated[list[str], typer.Option(
        help="--strategy uncertain: the automatic judge whose least sure pairs people judge; "
             "twice for the pairs two judges disagree on most.")] = [],  # noqa: B006
    subtopics: Annotated[bool, typer.Option(
        "--subtopics", help="A subtopic (diversity) round: each document is graded on each of "
        "its topic's subtopics (TREC Web topics' <subtopic>); a topic without any is refused.")] = False,
    redundancy: Annotated[int, typer.Option(
        help="A crowd round: distinct people's answers each pair asks for (docs/crowds.md).")] = 1,
    gold: Annotated[str | None, typer.Option(
        help="A crowd round: the qrels version whose pairs are mixed into every worker's queue "
             "as known answers (never in derived qrels).")] = None,
    gold_rate: Annotated[float | None, typer.Option(
        help="About what share of each worker's pairs is gold (default 0.1 with --gold).")] = None,
) -> None:
    """Create a judging round: pool the runs with a strategy and store its queue."""
    from pooling.judging.rounds import create_round
    from pooling.store import Store
    from pooling.strategies import DEFAULT_STRATEGY
    from pooling.strategies.params import parse_key_values

    strategy = strategy or DEFAULT_STRATEGY
    strategy_params = parse_key_values(param, StoreError)
    if depth is not None and strategy == "depth":
        strategy_params["depth"] = str(depth)
    if judge:
        if strategy != "uncertain":
            raise StoreError(f"--judge is for --strategy uncertain, not {strategy}; leave it out "
                             "or triage with --strategy uncertain")
        strategy_params["judges"] = ",".join(judge)
    with Store(store) as s:
        summary = create_round(
            s, round, strategy, strategy_params=strategy_params, seed=seed,
            runs=runs if runs in ("pooled", "all") else [r.strip() for r in runs.split(",")],
            depth=depth, budget=budget, total_budget=total_budget, floor=floor,
            stop_after=stop_after, exclude_judged=exclude_judged,
            topics=[t.strip() for t in topics.split(",")] if topics else None,
            grades=tuple(int(g) for g in grades.split(",")), order=order, subtopics=subtopics,
            redundancy=redundancy, gold=gold, gold_rate=gold_rate,
        )
    r = summary.round
    kind = "adaptive (served live)" if r.adaptive else f"{summary.entries:,} documents queued"
    judges = r.params["strategy"].get("judges")
    by = f", triaging judge(s) {judges}" if judges else ""
    over = (f"{len(r.pooled_runs)} runs (by {r.order}) and" if r.pooled_runs else
            "its judges' pairs in")  # triage needs no runs
    on = (f", graded on {sum(len(v) for v in (r.parts or {}).values()):,} subtopics"
          if r.parts else "")
    crowd = ""
    if r.crowd:
        crowd = f"; a crowd round: {r.redundancy} answer(s) per pair"
        if r.gold is not None:
            crowd += (f", gold from {r.gold} at {r.gold_rate:g} of each worker's pairs "
                      f"({summary.gold_pairs or 0:,} gold pair(s) outside the queue)")
    out.print(f"round {r.round_id}: {r.strategy} over {over} {len(r.topics)} topics{by}, "
              f"{kind}{on}{crowd}", highlight=False)
    for warning in summary.warnings:
        err.print(f"warning: {warning}", highlight=False)


@app.command("progress")
def progress_cmd(
    store: StoreArg,
    round: Annotated[str | None, typer.Option("--round", help="Only this round.")] = None,
) -> None:
    """Each round's progress: pairs queued and judged, topics done; in a crowd round, the
    pairs that reached K answers (gold pairs not counted)."""
    from pooling.judging.rounds import get_round
    from pooling.store import Store
    from pooling.web.round_progress import organiser_rounds

    with Store(store, read_only=True) as s:
        rounds = organiser_rounds(s, round)
        if round is not None and not rounds:
            get_round(s, round)  # an unknown round is refused, naming the rounds there are
        kinds = {r.round_id: get_round(s, r.round_id) for r in rounds}
    table = Table("round", "kind", "topics", "queued", "judged", "topics done")
    for r in rounds:
        rnd = kinds[r.round_id]
        kind = ("adaptive" if r.adaptive else
                f"crowd, {rnd.redundancy} answer(s) per pair" + (f", gold {rnd.gold}" if rnd.gold
                                                                  else "")
                if rnd.crowd else "static")
        judged = f"{r.judged:,}" + (f" at {rnd.redundancy}" if rnd.crowd else "")
        table.add_row(r.round_id, kind, str(len(r.topics)), f"{r.assigned:,}", judged,
                      str(sum(t.done for t in r.topics)))
    out.print(table)


@app.command("plan-sample")
def plan_sample_cmd(
    store: StoreArg,
    budget: Annotated[int | None, typer.Option(help="Judgments per topic (on average).")] = None,
    total_budget: Annotated[int | None, typer.Option(help="Judgments in all.")] = None,
    depth: Annotated[int, typer.Option(help="Documents per run in the pool sampled from.")] = 100,
    runs: Annotated[str, typer.Option(help="'pooled', 'all' or a comma-separated list of run_ids.")] = "pooled",
    topics: Annotated[str | None, typer.Option(help="Comma-separated query_ids (default: all).")] = None,
) -> None:
    """Propose strata and rates for sampled judging within a budget (docs/sampling.md).

    The top ranks are judged whole (at most half the budget), the rest of the pool sampled at
    a rate; prints each stratum's ranks, pooled documents, rate and expected judgments, and
    the `pooling pool --strategy sample` line that carries the plan out.
    """
    from pooling.judging.sample_planning import plan_store_sample
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        plan = plan_store_sample(
            s, budget=budget, total_budget=total_budget, depth=depth,
            runs=runs if runs in ("pooled", "all") else [r.strip() for r in runs.split(",")],
            topics=[t.strip() for t in topics.split(",")] if topics else None)
    table = Table("stratum", "ranks", "pooled", "rate", "expected judgments",
                  title=f"sampling plan: {plan.topics} topics, depth {plan.depth}, budget "
                  f"{plan.budget:,}")
    for st in plan.strata:
        table.add_row(st.label, st.ranks, f"{st.pooled:,}", f"{st.rate:.4g}", f"{st.expected:,}")
    table.add_row("all", f"1-{plan.depth}", f"{plan.pooled:,}", "", f"{plan.expected:,}")
    out.print(table)
    params = " ".join(f"--param {k}={v}" for k, v in plan.strategy_params().items())
    out.print(f"pool it with: pooling pool {store} --round NAME --strategy sample --depth "
              f"{plan.depth} --runs {runs} {params}", highlight=False, soft_wrap=True)


@app.command("strategies")
def strategies() -> None:
    """List the pooling strategies and their parameters."""
    from pooling.strategies import DEFAULT_STRATEGY, DEFAULT_WHY, REGISTRY

    table = Table("strategy", "kind", "parameters", "what")
    for name, cls in sorted(REGISTRY.items()):
        params = ", ".join(f"{p.name}={p.default}" for p in cls.params)
        label = f"{name} (default)" if name == DEFAULT_STRATEGY else name
        table.add_row(label, "adaptive" if cls.adaptive else "static", params, cls.summary)
    out.print(table)
    out.print(f"(default) is what `pooling pool` uses without --strategy: {DEFAULT_WHY}",
              highlight=False, soft_wrap=True)


@app.command()
def assign(
    store: StoreArg,
    round: RoundOpt,
    assessors: Annotated[str, typer.Option(help="Comma-separated assessor ids.")],
    overlap: Annotated[float, typer.Option(help="Share of each topic's documents judged twice.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed for choosing overlap documents.")] = 0,
) -> None:
    """Give each topic of a round to an assessor, with an overlap sample for agreement."""
    from pooling.judging.assessors import Workload, workloads
    from pooling.judging.assessors import assign as do_assign
    from pooling.judging.rounds import get_round
    from pooling.store import Store

    with Store(store) as s:
        counts = do_assign(s, round, [a.strip() for a in assessors.split(",")], overlap=overlap, seed=seed)
        shares = workloads(s, round)
        adaptive = get_round(s, round).adaptive
    for a in counts:
        w = shares.get(a, Workload(a, 0, 0, 0))
        given = (f"{w.assignments:,} assignment(s): {w.topics:,} whole topic(s), "
                 f"{w.overlap:,} overlap document(s)")
        if adaptive:
            out.print(f"{a}: {given}; an adaptive round chooses its documents one at a time as "
                      "they are judged", highlight=False)
        else:
            out.print(f"{a}: {w.documents:,} document(s) to judge, from {given}", highlight=False)


@export_app.command("pool")
def export_pool(
    store: StoreArg, round: RoundOpt,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File (default: stdout).")] = None,
) -> None:
    """Write a round's pool as TSV: query_id, doc_id, position.

    An adaptive round's pool is the documents its strategy has chosen so far, position being
    the order chosen (a note on stderr says so).
    """
    from pooling.judging.rounds import export_pool as do_export
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        done = do_export(s, round, output if output else sys.stdout)
    if output:
        err.print(f"wrote {done.entries:,} pool entries to {output}", highlight=False)
    if done.note:
        err.print(done.note, highlight=False)
