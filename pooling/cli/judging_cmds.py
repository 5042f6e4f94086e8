"""Pooling and judging commands: pool, assessors, assign, batch, qrels derive, exports."""

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.leaderboard_options import PrimaryOpt, analysed_measure
from pooling.cli.store_cmds import StoreArg, export_app
from pooling.errors import StoreError
from pooling.terminal.console import Console

out = Console()
err = Console(stderr=True)

assessors_app = typer.Typer(help="Add assessors (who judge); revoke anyone's access, issue new tokens.",
                            no_args_is_help=True)
organisers_app = typer.Typer(help="Add organisers (who run the campaign).", no_args_is_help=True)
batch_app = typer.Typer(help="Offline judging: export an assessor's batch, import it back.",
                        no_args_is_help=True)
qrels_app = typer.Typer(help="Qrels versions: derive them from judgments, choose the default.",
                         no_args_is_help=True)
app.add_typer(assessors_app, name="assessors")
app.add_typer(organisers_app, name="organisers")
app.add_typer(batch_app, name="batch")
app.add_typer(qrels_app, name="qrels")

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


def _add_person(store: Path, name: str, contact: str | None, role: str) -> None:
    from pooling.judging.assessors import add_assessor
    from pooling.store import Store

    with Store(store) as s:
        new = add_assessor(s, name, contact=contact, role=role)
    out.print(f"added {role} {new.assessor_id} ({new.name})", highlight=False)
    out.print(f"token (shown once, keep it secret): {new.token}", highlight=False)


@assessors_app.command("add")
def assessors_add(store: StoreArg, name: str,
                  contact: Annotated[str | None, typer.Option(help="E-mail or other contact.")] = None) -> None:
    """Add an assessor; prints their secret token once."""
    _add_person(store, name, contact, "assessor")


@organisers_app.command("add")
def organisers_add(store: StoreArg, name: str,
                   contact: Annotated[str | None, typer.Option(help="E-mail or other contact.")] = None) -> None:
    """Add an organiser; prints their secret token once."""
    _add_person(store, name, contact, "organiser")


@assessors_app.command("revoke")
def assessors_revoke(store: StoreArg, name: Annotated[str, typer.Argument(
        help="The person's id (or the name they were added with).")]) -> None:
    """Revoke a person's access (assessor or organiser): their token stops working and their
    web sessions end, at once on a running server. Their judgments stay."""
    from pooling.judging.assessors import revoke
    from pooling.store import Store

    with Store(store) as s:
        assessor_id = revoke(s, name)
    out.print(f"revoked {assessor_id}: their token no longer logs in and their sessions have ended",
              highlight=False)
    out.print(f"to let them back: pooling assessors token {store} {assessor_id}", highlight=False)


@assessors_app.command("token")
def assessors_token(store: StoreArg, name: Annotated[str, typer.Argument(
        help="The person's id (or the name they were added with).")]) -> None:
    """Issue a person a new token; prints it once. Their old token stops working and the
    sessions begun with it end."""
    from pooling.judging.assessors import issue_token
    from pooling.store import Store

    with Store(store) as s:
        new = issue_token(s, name)
    out.print(f"new token for {new.role} {new.assessor_id} ({new.name})", highlight=False)
    out.print(f"token (shown once, keep it secret): {new.token}", highlight=False)


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


@batch_app.command("export")
def batch_export(
    store: StoreArg, round: RoundOpt,
    assessor: Annotated[str, typer.Option(help="The assessor's id.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="File (.csv or .jsonl).")],
) -> None:
    """Export an assessor's unjudged items with topic and document text."""
    from pooling.judging.batches import export_batch
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        n = export_batch(s, round, assessor, output)
    out.print(f"wrote {n} item(s) to {output}", highlight=False)


@batch_app.command("import")
def batch_import(
    store: StoreArg, round: RoundOpt,
    assessor: Annotated[str, typer.Option(help="The assessor's id.")],
    file: Annotated[Path, typer.Argument(help="The judged batch (.csv or .jsonl).", readable=False)],
) -> None:
    """Import a judged batch: all rows or none; blank grades are skipped."""
    from pooling.judging.batches import import_batch
    from pooling.store import Store

    with Store(store) as s:
        stored, dup = import_batch(s, round, assessor, file)
    out.print(f"{file}: {stored} judgment(s) stored, {dup} already stored", highlight=False)


@qrels_app.command("derive")
def qrels_derive(
    store: StoreArg,
    rule: Annotated[str, typer.Option(help="latest, primary, majority, adjudicated, mean (people's "
                                      "judgments), human-first or judge-only (with --judge), "
                                      "or an aggregation model: wawa, dawid-skene, "
                                      "gold-weighted (with --gold).")],
    name: Annotated[str, typer.Option(help="Name of the new qrels version.")],
    round: Annotated[str | None, typer.Option("--round", help="Only this round's judgments.")] = None,
    tie: Annotated[str, typer.Option(help="Majority ties go to the 'lower' or 'higher' grade.")] = "lower",
    relevance_level: Annotated[int, typer.Option("-l", "--relevance-level", help="Lowest relevant grade.")] = 1,
    judge: Annotated[str | None, typer.Option(help="The automatic judge of human-first and "
                                              "judge-only.")] = None,
    judge_grades: Annotated[str | None, typer.Option(
        "--judge-grades", help="Map the judge's grades onto the people's scale, e.g. "
        "0=0,1=0,2=1,3=2 (unmapped grades are kept).")] = None,
    gold: Annotated[str | None, typer.Option(
        help="wawa, dawid-skene, gold-weighted: a qrels version whose grades seed the model "
             "(gold-weighted needs it); its pairs stay out of the new version.")] = None,
    jurors: Annotated[str | None, typer.Option(
        help="Aggregate a jury of automatic judges' labels in --round instead of people's: "
             "judges comma-separated (a judge brings its samples), or 'all'; with --rule "
             "majority, wawa, dawid-skene or gold-weighted.")] = None,
) -> None:
    """Derive a new qrels version from the judgments by an explicit rule.

    The aggregation rules (wawa, dawid-skene, gold-weighted) also store each pair's posterior
    probability and each assessor's estimated confusion matrix (`pooling qrels workers`).
    """
    from pooling.judging.rules import derive_qrels
    from pooling.store import Store
    from pooling.store.sampled_qrels import derived_sample_note

    mapping = _grade_map(judge_grades) if judge_grades else None
    if jurors is not None:
        from pooling.judges.juries import derive_jury_qrels

        if round is None or judge is not None:
            raise StoreError("--jurors aggregates a jury's labels in one round: give --round, "
                             "and leave --judge out")
        names = [n.strip() for n in jurors.split(",") if n.strip()]
        with Store(store) as s:
            r = derive_jury_qrels(s, rule, name, round_id=round, jurors=names, gold=gold, tie=tie,
                                  relevance_level=relevance_level, judge_grades=mapping)
        by = f", jurors {jurors}" + (f", gold {gold}" if gold else "")
        out.print(f"qrels version {r.name}: {r.n_rows:,} judgments on {r.n_topics:,} topics "
                  f"(rule {rule}{by})", highlight=False)
        return
    with Store(store) as s:
        r = derive_qrels(s, rule, name, round_id=round, tie=tie, relevance_level=relevance_level,
                         judge=judge, judge_grades=mapping, gold=gold)
    by = f", judge {judge}" if judge else ""
    by += f", gold {gold}" if gold else ""
    with Store(store, read_only=True) as s:
        n_sub = s.one("subtopic rows", "SELECT count(*) FROM subtopic_qrels WHERE version = ?",
                      [r.name])[0]
        sampled = derived_sample_note(s, r.name)
    subs = (f"; {n_sub:,} subtopic judgments, its plain rows each document's maximum over its "
            "subtopics" if n_sub else "")
    out.print(f"qrels version {r.name}: {r.n_rows:,} judgments on {r.n_topics:,} topics "
              f"(rule {rule}{by}){subs}{sampled}", highlight=False)



@qrels_app.command("export-subtopics")
def qrels_export_subtopics(
    store: StoreArg,
    qrels: Annotated[str | None, typer.Option(
        "--qrels", help="A qrels version with subtopics (default: the store's default).")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File to write (default: stdout).")] = None,
) -> None:
    """Write a subtopic qrels version as ndeval reads it (query_id subtopic doc_id relevance);
    with -o its provenance goes beside it in FILE.meta.json. Import one with `pooling import
    qrels FILE --format subtopic`."""
    from pooling.store import Store
    from pooling.store.qrels import export_subtopic_qrels, sidecar_path

    with Store(store, read_only=True) as s:
        name = export_subtopic_qrels(s, output if output else sys.stdout, qrels)
    if output:
        err.print(f"wrote subtopic qrels version {name} to {output} (provenance in "
                  f"{sidecar_path(output)})", highlight=False)


@qrels_app.command("plain")
def qrels_plain(
    store: StoreArg,
    version: Annotated[str, typer.Option("--from", help="A qrels version with subtopics.")],
    name: Annotated[str, typer.Option(help="Name of the new plain qrels version.")],
) -> None:
    """Derive a plain qrels version from a subtopic one: a document's grade is its maximum
    over the topic's subtopics (relevant to any subtopic)."""
    from pooling.store import Store
    from pooling.store.qrels import derive_plain_qrels

    with Store(store) as s:
        r = derive_plain_qrels(s, version, name)
    out.print(f"qrels version {r.name}: {r.n_rows:,} judgments on {r.n_topics:,} topics "
              f"(each document's maximum over the subtopics of {version})", highlight=False)


def _grade_map(text: str) -> dict[int, int]:
    """'0=0,1=0,2=1' as {0: 0, 1: 0, 2: 1}."""
    mapping = {}
    for item in text.split(","):
        left, _, right = item.partition("=")
        try:
            mapping[int(left)] = int(right)
        except ValueError:  # no '=' leaves right empty: refused here too
            raise StoreError(f"--judge-grades takes from=to grade pairs like 0=0,1=0,2=1,3=2; "
                             f"got {item.strip()!r}") from None
    return mapping


@qrels_app.command("workers")
def qrels_workers(
    store: StoreArg,
    version: Annotated[str | None, typer.Argument(
        help="A version derived with an aggregation rule (default: the default version).")] = None,
) -> None:
    """Each assessor's estimated confusion matrix in a version an aggregation rule made: how
    likely they answer each grade when the truth is each grade, as the model had it."""
    import json

    from pooling.judging.model_rules import worker_confusion
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        table = worker_confusion(s, version)
        info = s.qrels_info(version)
    rule = json.loads(info["params"] or "{}").get("rule")
    grades = sorted(set(table["grade"].to_pylist()))
    matrix: dict[str, dict[tuple[int, int], float]] = {}
    for r in table.to_pylist():
        matrix.setdefault(r["assessor_id"], {})[(r["true_grade"], r["grade"])] = r["probability"]
    out.print(f"qrels version {info['name']} (rule {rule}): P(grade | true grade) per assessor",
              highlight=False)
    view = Table("assessor", "true grade", *(f"grade {g}" for g in grades))
    for worker, cells in matrix.items():
        for i, true in enumerate(grades):
            view.add_row(worker if i == 0 else "", str(true),
                         *(f"{cells.get((true, g), 0.0):.3f}" for g in grades))
    out.print(view)


@qrels_app.command("adjudication")
def qrels_adjudication(
    store: StoreArg,
    round: Annotated[str | None, typer.Option("--round", help="Only this round.")] = None,
) -> None:
    """List the pairs on which assessors disagree (the adjudication queue)."""
    from pooling.judging.rounds import get_round
    from pooling.judging.rules import adjudication_queue, shared_pairs
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        queue = adjudication_queue(s, round)
        shared = shared_pairs(s, round) if queue.num_rows == 0 else 0
        adaptive = round is not None and get_round(s, round).adaptive
    if queue.num_rows == 0:
        where = f"round {round}" if round else "any round"
        how = (f"round {round} is adaptive, so each document it chooses goes to one assessor; "
               "assign a static round with --overlap to have documents judged twice"
               if adaptive else "assign with --overlap to have documents judged twice")
        why = (f"the assessors agree on all {shared:,} pair(s) judged by two or more of them"
               if shared else f"no pair is judged by two or more assessors yet ({how})")
        out.print(f"no disagreements in {where}: {why}", highlight=False)
        return
    table = Table("query_id", "doc_id", "grades", "adjudicated")
    for r in queue.to_pylist():
        table.add_row(r["query_id"], r["doc_id"], r["grades"], "yes" if r["adjudicated"] else "no")
    out.print(table)


@qrels_app.command("default")
def qrels_default(
    store: StoreArg,
    version: Annotated[str | None, typer.Argument(help="Version to make the default (omit to print the default).")] = None,
) -> None:
    """Print or set the qrels version every command uses when --qrels is not given.

    The default is the first version stored until set here; deriving or importing another
    version does not change it.
    """
    from pooling.store import Store
    from pooling.store.qrels import set_default_qrels

    if version is None:
        with Store(store, read_only=True) as s:
            typer.echo(s.resolve_qrels(None))
        return
    with Store(store) as s:
        before = s.resolve_qrels(None)
        name = set_default_qrels(s, version)
    out.print(f"default qrels: {name}" + (f" (was {before})" if before != name else " (unchanged)"),
              highlight=False)


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


@export_app.command("judgments")
def export_judgments(
    store: StoreArg,
    output: Annotated[Path, typer.Option("-o", "--output", help="File (.csv or .parquet).")],
) -> None:
    """Write the full judgment history (every judgment and retraction, in order)."""
    from pooling.judging.judgments import export_history
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        n = export_history(s, output)
    err.print(f"wrote {n} judgment(s) to {output}", highlight=False)


@app.command()
def agreement(
    store: StoreArg,
    round: Annotated[str | None, typer.Option(
        "--round", help="The judging round: alone, agreement among its assessors; with --judge, "
        "only that round's judgments.")] = None,
    qrels: Annotated[list[str], typer.Option(
        "--qrels", help="A qrels version; give two to compare B (the second) against A.")] = [],  # noqa: B006
    judge: Annotated[str | None, typer.Option(
        help="An automatic judge (B) to compare against --against (A).")] = None,
    against: Annotated[str, typer.Option(
        help="With --judge: 'people' (their grade per pair; the majority, ties lower, where "
             "several judged it) or a qrels version (qrels:NAME if it is called people).")] = "people",
    threshold: Annotated[int, typer.Option(
        help="Lowest grade counted relevant (overlap; precision, recall and the rest; the "
             "leaderboard's relevance level).")] = 1,
    measure: Annotated[list[str], typer.Option(
        "-m", "--measure", help="The measure runs are ranked by for the leaderboard correlation "
        "(repeatable: the primary one is used; default map).")] = [],  # noqa: B006
    primary: PrimaryOpt = None,
    top: Annotated[int, typer.Option(help="How many of the largest rank changes to show.")] = 5,
    unjudged: Annotated[int | None, typer.Option(
        help="With --qrels or --judge: the grade a pair graded on one side only counts as on "
             "the other (0: not relevant, as trec_eval counts unjudged documents; for qrels "
             "that list mostly relevant pairs). Default: such pairs are left out.",
        show_default=False)] = None,
    topics: Annotated[str | None, typer.Option(
        help="Topics to compare on: ids and ranges (601-650,303) or a stored subset's name. "
             "Both sides' runs are always scored on the same topics.")] = None,
    format: Annotated[str, typer.Option(
        help="table, csv, json or html (with --qrels or --judge).")] = "table",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File (default: stdout).")] = None,
) -> None:
    """Agreement between assessors, or between two label sets.

    --round R alone: agreement on the round's overlap items (Fleiss' kappa, Krippendorff's
    alpha, each assessor against the others; Cohen's kappa per pair up to 10 assessors). --qrels A --qrels B, or --judge NAME [--round R] [--against
    people|QRELS]: B against A pair by pair (confusion matrix, kappa over the grades and
    binary at --threshold, alpha, precision, recall, F1, accuracy, fallout; ROC-AUC, PR-AUC
    and log loss from the judge's probabilities) and on the leaderboard (every stored run
    ranked by --measure under each: Kendall tau, tau_ap with A and with B as reference and
    their mean, Spearman, the largest rank changes). Pairs graded by one side only are left
    out and counted, unless --unjudged gives the grade they count as.
    """
    from pooling.store import Store

    if judge is None and not qrels:
        if round is None:
            raise StoreError("name what to compare: --round R (a round's assessors), --qrels A "
                             "--qrels B (two qrels versions) or --judge NAME (a judge)")
        if unjudged is not None:
            raise StoreError("--unjudged goes with --qrels or --judge; --round alone compares "
                             "only the pairs two assessors judged")
        _round_agreement(store, round, threshold, format, topics)
        return
    if judge is not None and qrels:
        raise StoreError("--judge and --qrels compare different things; to set a judge against "
                         "a qrels version use --judge NAME --against VERSION")
    if qrels and len(qrels) != 2:
        raise StoreError(f"--qrels compares two qrels versions; give it twice (got {len(qrels)})")
    if qrels and round is not None:
        raise StoreError("--round goes with --judge or alone; qrels versions span rounds")
    if format not in ("table", "csv", "json", "html"):
        raise StoreError(f"--format must be table, csv, json or html, not {format!r}")
    if format == "table" and output is not None:
        raise StoreError("--format table prints to the terminal; use csv, json or html with -o")
    from pooling.agreement.label_agreement import judge_agreement, qrels_agreement

    ranked_by = analysed_measure(measure, primary)
    # Writable: scoring runs on a qrels version fills the store's evaluation cache.
    with Store(store) as s:
        if qrels:
            result = qrels_agreement(s, qrels[0], qrels[1], threshold=threshold,
                                     measure=ranked_by, top=top, unjudged=unjudged, topics=topics)
        else:
            result = judge_agreement(s, judge, round_id=round, against=against,
                                     threshold=threshold, measure=ranked_by, top=top,
                                     unjudged=unjudged, topics=topics)
    if format == "table":
        _print_label_agreement(result)
        return
    if format == "html":
        from pooling.leaderboard.report import agreement_html

        text = agreement_html(result)
    else:
        text = result.to_csv() if format == "csv" else result.to_json()
    if output is None:
        sys.stdout.write(text)
        return
    from pooling.formats.source import write_lines

    write_lines([text], output)
    err.print(f"wrote {output}", highlight=False)


def _round_agreement(store: Path, round: str, threshold: int, format: str,
                     topics: str | None) -> None:
    from pooling.agreement.report import (
        ASSESSOR_STATISTICS,
        PAIR_STATISTICS,
        PAIRWISE_MAX_ASSESSORS,
    )
    from pooling.judging.rounds import get_round
    from pooling.judging.rules import round_agreement, subtopic_agreement
    from pooling.store import Store

    if format != "table":
        raise StoreError("--round alone prints a table; --format goes with --qrels or --judge")
    with Store(store, read_only=True) as s:
        report = round_agreement(s, round, threshold=threshold, topics=topics)
    out.print(f"round {round}: {report.n_shared} pair(s) judged by two or more assessors, "
              f"{report.n_single} by one", highlight=False)
    if report.pairwise:
        table = Table("assessors", "pairs", *(term for _, term, _ in PAIR_STATISTICS))
        for p in report.pairs:
            table.add_row(f"{p.assessor_a} / {p.assessor_b}", str(p.n),
                          *(f"{getattr(p, field):.3f}" for field, _, _ in PAIR_STATISTICS))
    else:
        out.print(f"{len(report.assessors):,} assessors: each against the others (Cohen's kappa "
                  f"per pair is shown up to {PAIRWISE_MAX_ASSESSORS})", highlight=False)
        table = Table("assessor", "pairs", "others' answers",
                      *(term for _, term, _ in ASSESSOR_STATISTICS))
        for a in report.per_assessor:
            table.add_row(a.assessor, str(a.n), str(a.answers),
                          *(f"{getattr(a, field):.3f}" for field, _, _ in ASSESSOR_STATISTICS))
    out.print(table)
    out.print(f"Fleiss' kappa {report.fleiss_kappa:.3f} · Krippendorff's alpha nominal "
              f"{report.alpha_nominal:.3f}, ordinal {report.alpha_ordinal:.3f} · overlap "
              f"{report.overlap:.3f}", highlight=False)
    with Store(store, read_only=True) as s:
        if not get_round(s, round).item.has_parts:
            return
        per_subtopic = subtopic_agreement(s, round, threshold=threshold, topics=topics)
    out.print(f"round {round} per subtopic (the table above is on documents, each graded by "
              "its maximum over its subtopics):", highlight=False)
    table = Table("topic", "subtopic", "pairs", "Fleiss' kappa", "alpha nominal", "overlap",
                  "note")
    for a in per_subtopic:
        r = a.report
        cells = ([str(r.n_shared), f"{r.fleiss_kappa:.3f}", f"{r.alpha_nominal:.3f}",
                  f"{r.overlap:.3f}", ""] if r is not None else ["0", "-", "-", "-", a.problem or ""])
        table.add_row(a.query_id, a.subtopic, *cells)
    out.print(table)


def _print_label_agreement(result) -> None:
    """The table form of a `LabelAgreement`: pairs, confusion matrix, statistics, leaderboard."""
    from pooling.agreement.statistics import statistic_values, term
    from pooling.leaderboard.render import fmt

    def num(value: float, digits: int = 3) -> str:
        return "n/a" if value != value else f"{value:.{digits}f}"  # nan: undefined

    c, a, b = result.labels, result.a, result.b
    out.print(f"B = {b} against A = {a}: {c.n_shared:,} pair(s) graded by both, {c.only_a:,} "
              f"only by A, {c.only_b:,} only by B; {c.n_compared:,} compared", highlight=False)
    note = c.note()
    if note:
        out.print(f"note: {note}", style="bold", highlight=False)
    if c.n_compared:
        matrix = Table(title="confusion matrix (rows: A's grade, columns: B's)")
        matrix.add_column("A \\ B")
        for g in c.grades:
            matrix.add_column(str(g), justify="right")
        for g, row in zip(c.grades, c.confusion.tolist(), strict=True):
            matrix.add_row(str(g), *(f"{n:,}" for n in row))
        out.print(matrix)
    values = statistic_values(c)

    def terms(section: str) -> str:
        return ", ".join(f"{term(stat, c)} {num(value, stat.digits)}"
                         for stat, value in values if stat.section == section)

    s, p = c.scores, c.probability
    out.print(f"{terms('kappa')} · {terms('alpha')}", highlight=False)
    out.print(f"relevant at grade >= {c.threshold}: {terms('classification')} (TP {s.tp:,}, "
              f"FP {s.fp:,}, FN {s.fn:,}, TN {s.tn:,})", highlight=False)
    if p is not None:
        out.print(f"B's probabilities on {p.n:,} pair(s): {terms('probability')}",
                  highlight=False)
    sys_ = result.systems
    if sys_ is None:
        why = "no stored run to rank" if c.n_compared else "no pair graded by both to score runs on"
        out.print(f"leaderboard ({result.measure}): {why}", highlight=False)
    else:
        out.print(f"leaderboard ({result.measure}, {sys_.n_runs} runs; {result.scored_on}): "
                  f"Kendall tau {num(sys_.kendall_tau)}, tau_ap {num(sys_.tau_ap_a)} "
                  f"(A as reference) / {num(sys_.tau_ap_b)} (B as reference) / "
                  f"{num(sys_.tau_ap_symmetric)} (symmetric), Spearman "
                  f"{num(sys_.spearman_rho)}", highlight=False)
        if sys_.changes:
            moved = Table("run", "rank A", "rank B", "change", f"{result.measure} A",
                          f"{result.measure} B", title="largest rank changes")
            for ch in sys_.changes:
                moved.add_row(ch.run_id, str(ch.rank_a), str(ch.rank_b), f"{ch.change:+d}",
                              fmt(ch.score_a), fmt(ch.score_b))
            out.print(moved)
        else:
            out.print("no run changes rank", highlight=False)
    shown = [value for _, value in values]
    shown += [sys_.kendall_tau, sys_.tau_ap_a, sys_.spearman_rho] if sys_ is not None else []
    if any(v != v for v in shown):  # nan
        out.print("(n/a: undefined here: no pair in common, or only one grade or one class "
                  "used)", highlight=False)
