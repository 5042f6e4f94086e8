"""Qrels versions made from judgments: derive one by a rule or an aggregation model, a plain
version from a subtopic one, each worker's estimated confusion, the adjudication queue, the
default version, and a subtopic version written as ndeval reads it."""

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg
from pooling.errors import StoreError
from pooling.terminal.console import Console

out = Console()
err = Console(stderr=True)

qrels_app = typer.Typer(help="Qrels versions: derive them from judgments, choose the default.",
                         no_args_is_help=True)
app.add_typer(qrels_app, name="qrels")


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

    from pooling.crowds.model_rules import worker_confusion
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
