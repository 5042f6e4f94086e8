"""Nugget-bank commands: `nuggets import|export|list|versions|history|freeze` and the edits
`nuggets add|reword|grade|merge|delete|move`, each kept in the bank's history."""

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg, err, out

nuggets_app = typer.Typer(help="Nugget banks: each topic's nuggets, edited with every change "
                          "kept, frozen into versions that rounds judge.", no_args_is_help=True)
app.add_typer(nuggets_app, name="nuggets")

BankOpt = Annotated[str, typer.Option("--bank", help="The nugget bank (e.g. people, gpt4).")]
TopicArg = Annotated[str, typer.Argument(help="The topic (query_id).")]
NuggetArg = Annotated[str, typer.Argument(help="The nugget's id within its topic.")]
ByOpt = Annotated[str | None, typer.Option("--by", help="Who made the change (an assessor id or "
                                           "a name); kept in the history.")]
NoteOpt = Annotated[str | None, typer.Option("--note", help="Why, kept in the history.")]


@nuggets_app.command("import")
def import_nuggets(
    store: StoreArg,
    file: Annotated[Path, typer.Argument(help="nuggetizer's nuggets JSONL, or iKAT's nugget JSON.",
                                         readable=False)],
    bank: BankOpt,
    format: Annotated[str | None, typer.Option(
        "--format", help="nuggetizer (JSONL: qid, query, nuggets [{text, importance}]) or ikat "
        "({topic: {\"[i]\": {text, relevance}}}); default: ikat for .json, else nuggetizer.")] = None,
    version: Annotated[str | None, typer.Option(
        "--version", help="Name of the version the import is frozen as (default BANK-vN).")] = None,
    vital_from: Annotated[int, typer.Option(
        "--vital-from", help="iKAT: a nugget is vital when the grade of its passage is at least "
        "this (the others okay).")] = 3,
    replace: Annotated[bool, typer.Option(
        "--replace", help="Replace the bank's nuggets of the file's topics (their deletion is "
        "recorded); else a topic the bank has nuggets for is refused.")] = False,
) -> None:
    """Import a nugget file into a bank and freeze it as a version, all or nothing."""
    from pooling.store import Store
    from pooling.store.nugget_banks import import_nuggets as run_import

    with Store(store) as s:
        r = run_import(s, file, bank, format=format, version=version, vital_from=vital_from,
                       replace=replace)
    if r.status != "imported":
        out.print(f"{file}: already imported into bank {r.bank} as version {r.version}", highlight=False)
        return
    out.print(f"{file}: imported {r.n_nuggets} nuggets ({r.n_vital} vital) over {r.n_topics} "
              f"topics into bank {r.bank}, version {r.version}", highlight=False)


@nuggets_app.command("export")
def export_nuggets(
    store: StoreArg,
    version: Annotated[str, typer.Argument(help="The nugget version to write.")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File to write (default: stdout).")] = None,
) -> None:
    """Write a nugget version as nuggetizer's nuggets JSONL (qid, query, nuggets)."""
    import sys

    from pooling.output_files import write_text
    from pooling.store import Store
    from pooling.store.nugget_banks import export_nuggets as run_export

    with Store(store, read_only=True) as s:
        text = run_export(s, version)
    if output:
        write_text(output, text)
        err.print(f"wrote {output}", highlight=False)
    else:
        sys.stdout.write(text)


@nuggets_app.command("list")
def list_nuggets(
    store: StoreArg,
    bank: BankOpt,
    topic: Annotated[str | None, typer.Option("--topic", help="Only this topic.")] = None,
    version: Annotated[str | None, typer.Option(
        "--version", help="A frozen version instead of the bank as it is now.")] = None,
) -> None:
    """A bank's nuggets (as they are now, or as a version froze them), in their order."""
    from pooling.store import Store
    from pooling.store.nugget_banks import current_nuggets, version_nuggets

    with Store(store, read_only=True) as s:
        table = version_nuggets(s, version) if version else current_nuggets(s, bank, topic)
    rows = [r for r in table.to_pylist() if topic is None or r["query_id"] == topic]
    grid = Table("topic", "id", "importance", "text", "by")
    for r in rows:
        grid.add_row(r["query_id"], r["nugget_id"], r["importance"], r["text"],
                     f"{r['provenance']}: {r['made_by'] or '-'}")
    out.print(grid)


@nuggets_app.command("versions")
def list_versions(
    store: StoreArg,
    bank: Annotated[str | None, typer.Option("--bank", help="Only this bank's versions.")] = None,
) -> None:
    """The frozen nugget versions: bank, when, how, from what, nuggets and topics."""
    from pooling.store import Store
    from pooling.store.nugget_banks import nugget_versions

    with Store(store, read_only=True) as s:
        rows = nugget_versions(s, bank)
    grid = Table("version", "bank", "created", "method", "source", "nuggets", "topics")
    for name, b, created, method, source, n, t in rows:
        grid.add_row(name, b, f"{created:%Y-%m-%d %H:%M}", method, source or "-", str(n), str(t))
    out.print(grid)


@nuggets_app.command("history")
def show_history(
    store: StoreArg,
    bank: BankOpt,
    topic: Annotated[str | None, typer.Option("--topic", help="Only this topic.")] = None,
) -> None:
    """Every edit of a bank, oldest first: who added, reworded, merged, deleted or re-graded
    what, and when."""
    from pooling.store import Store
    from pooling.store.nugget_banks import history

    with Store(store, read_only=True) as s:
        edits = history(s, bank, topic)
    grid = Table("when", "topic", "id", "action", "what", "by")
    for e in edits:
        what = {"add": f"{e.importance}: {e.text}", "reword": e.text or "", "grade": e.importance or "",
                "merge": f"into {e.merged_into}", "move": f"to {e.position:g}" if e.position is not None else "",
                "delete": e.note or ""}.get(e.action, "")
        grid.add_row(f"{e.made_at:%Y-%m-%d %H:%M:%S}", e.query_id, e.nugget_id, e.action, what,
                     f"{e.provenance}: {e.made_by or '-'}")
    out.print(grid)


@nuggets_app.command("freeze")
def freeze_bank(
    store: StoreArg,
    bank: BankOpt,
    name: Annotated[str | None, typer.Option("--name", help="The version's name (default BANK-vN).")] = None,
) -> None:
    """Freeze a bank as it is now into a version (an unchanged bank gives its latest one)."""
    from pooling.store import Store
    from pooling.store.nugget_banks import freeze

    with Store(store) as s:
        version = freeze(s, bank, name)
    out.print(f"bank {bank}: version {version}", highlight=False)


@nuggets_app.command("add")
def add(store: StoreArg, bank: BankOpt, topic: TopicArg,
        text: Annotated[str, typer.Argument(help="What an answer should say.")],
        importance: Annotated[str, typer.Option("--importance", help="vital or okay.")] = "okay",
        by: ByOpt = None, note: NoteOpt = None) -> None:
    """Add a nugget to a topic of a bank (last among its importance)."""
    from pooling.store import Store
    from pooling.store.nugget_banks import add_nugget

    with Store(store) as s:
        nugget_id = add_nugget(s, bank, topic, text, importance, made_by=by, note=note)
    out.print(f"bank {bank} topic {topic}: added nugget {nugget_id}", highlight=False)


@nuggets_app.command("reword")
def reword(store: StoreArg, bank: BankOpt, topic: TopicArg, nugget: NuggetArg,
           text: Annotated[str, typer.Argument(help="The nugget's new text.")],
           by: ByOpt = None, note: NoteOpt = None) -> None:
    """Give a nugget new text; the old text stays in the history."""
    from pooling.store import Store
    from pooling.store.nugget_banks import reword_nugget

    with Store(store) as s:
        reword_nugget(s, bank, topic, nugget, text, made_by=by, note=note)
    out.print(f"bank {bank} topic {topic}: reworded nugget {nugget}", highlight=False)


@nuggets_app.command("grade")
def grade(store: StoreArg, bank: BankOpt, topic: TopicArg, nugget: NuggetArg,
          importance: Annotated[str, typer.Argument(help="vital or okay.")],
          by: ByOpt = None, note: NoteOpt = None) -> None:
    """Set a nugget's importance."""
    from pooling.store import Store
    from pooling.store.nugget_banks import grade_nugget

    with Store(store) as s:
        grade_nugget(s, bank, topic, nugget, importance, made_by=by, note=note)
    out.print(f"bank {bank} topic {topic}: nugget {nugget} is {importance}", highlight=False)


@nuggets_app.command("merge")
def merge(store: StoreArg, bank: BankOpt, topic: TopicArg, nugget: NuggetArg,
          into: Annotated[str, typer.Argument(help="The nugget it is folded into.")],
          text: Annotated[str | None, typer.Option("--text", help="New text of the merged nugget.")] = None,
          by: ByOpt = None, note: NoteOpt = None) -> None:
    """Fold one nugget into another (which may take new text)."""
    from pooling.store import Store
    from pooling.store.nugget_banks import merge_nuggets

    with Store(store) as s:
        merge_nuggets(s, bank, topic, nugget, into, text=text, made_by=by, note=note)
    out.print(f"bank {bank} topic {topic}: merged nugget {nugget} into {into}", highlight=False)


@nuggets_app.command("delete")
def delete(store: StoreArg, bank: BankOpt, topic: TopicArg, nugget: NuggetArg,
           by: ByOpt = None, note: NoteOpt = None) -> None:
    """Take a nugget off a topic's list (it stays in the history)."""
    from pooling.store import Store
    from pooling.store.nugget_banks import delete_nugget

    with Store(store) as s:
        delete_nugget(s, bank, topic, nugget, made_by=by, note=note)
    out.print(f"bank {bank} topic {topic}: deleted nugget {nugget}", highlight=False)


@nuggets_app.command("move")
def move(store: StoreArg, bank: BankOpt, topic: TopicArg, nugget: NuggetArg,
         before: Annotated[str | None, typer.Option("--before", help="Place it just before this "
                                                   "nugget (default: last of its importance).")] = None,
         by: ByOpt = None) -> None:
    """Move a nugget within its importance."""
    from pooling.store import Store
    from pooling.store.nugget_banks import move_nugget

    with Store(store) as s:
        move_nugget(s, bank, topic, nugget, before, made_by=by)
    out.print(f"bank {bank} topic {topic}: moved nugget {nugget}", highlight=False)


@nuggets_app.command("round")
def create_round(
    store: StoreArg,
    round_id: Annotated[str, typer.Option("--round", help="Name of the new round.")],
    version: Annotated[str, typer.Option("--version", help="The nugget version the answers are "
                                         "graded on (frozen: later edits of the bank do not change it).")],
    runs: Annotated[list[str] | None, typer.Option("--run", help="An answer run to judge "
                                                   "(repeatable; default: every stored one).")] = None,
    topics: Annotated[list[str] | None, typer.Option("--topic", help="A topic to judge (repeatable; "
                                                     "default: the version's topics with nuggets).")] = None,
    grades: Annotated[int, typer.Option("--grades", help="3: support, partial support, none; "
                                        "2: support, none.")] = 3,
) -> None:
    """Create an assignment round: each answer graded on every nugget of its topic."""
    from pooling.nuggets.rounds import create_assignment_round
    from pooling.store import Store

    with Store(store) as s:
        summary = create_assignment_round(s, round_id, version, runs=runs, topics=topics,
                                          grades=grades)
    out.print(f"round {round_id}: {summary.entries} answers over {len(summary.per_topic)} topics "
              f"to grade on the nuggets of {version}", highlight=False)


@nuggets_app.command("derive")
def derive(
    store: StoreArg,
    round_id: Annotated[str, typer.Option("--round", help="The assignment round.")],
    name: Annotated[str, typer.Option("--name", help="Name of the new assignment version.")],
    rule: Annotated[str, typer.Option("--rule", help="latest, primary, majority, mean, "
                                      "human-first or judge-only (each answer and nugget on its own).")] = "majority",
    tie: Annotated[str, typer.Option("--tie", help="majority: a tie takes the lower or higher grade.")] = "lower",
    judge: Annotated[str | None, typer.Option("--judge", help="human-first / judge-only: the "
                                              "automatic judge.")] = None,
) -> None:
    """Derive an assignment version from an assignment round by a recorded rule."""
    from pooling.nuggets.assignments import derive_assignments
    from pooling.store import Store

    with Store(store) as s:
        v = derive_assignments(s, rule, name, round_id=round_id, tie=tie, judge=judge)
    out.print(f"assignment version {v.name}: {v.n_rows} assignments of {v.n_answers} answers over "
              f"{v.n_topics} topics, on nugget version {v.nugget_version} ({v.method})", highlight=False)


@nuggets_app.command("score")
def score(
    store: StoreArg,
    assignments: Annotated[str, typer.Option("--assignments", help="The assignment version.")],
    runs: Annotated[list[str] | None, typer.Option("--run", help="An answer run to score "
                                                   "(repeatable; default: the round's).")] = None,
    measure: Annotated[list[str] | None, typer.Option(
        "-m", "--measure", help="strict_vital, strict_all, vital, all (nuggetizer's *_score "
        "names too), or nuggets for the four; repeatable.")] = None,
    per_query: Annotated[bool, typer.Option("-q", "--per-query", help="Print per-topic values "
                                            "before `all`.")] = False,
    complete: Annotated[bool, typer.Option("-c", "--complete", help="Score topics a run did not "
                                           "answer as 0 (else a run's mean is over its answers).")] = False,
) -> None:
    """Score answer runs by nugget recall from an assignment version, in trec_eval's layout."""
    import sys

    from pooling.cli.app import state
    from pooling.cli.pandas_guard import without_pandas
    from pooling.evaluation.trec_format import format_trec_runs
    from pooling.nuggets.assignments import score_assignments
    from pooling.store import Store

    state.fast_exit = True  # a store read, text out: nothing to clean up at exit
    with without_pandas(), Store(store, read_only=True) as s:
        result = score_assignments(s, assignments, runs=runs, measures=measure or ["nuggets"],
                                   complete=complete)
    sys.stdout.write(format_trec_runs(result.runs, per_query))


@nuggets_app.command("import-assignments")
def import_assignments(
    store: StoreArg,
    files: Annotated[list[Path], typer.Argument(help="nuggetizer assignment files (JSONL).",
                                                readable=False)],
    version: Annotated[str, typer.Option("--version", help="The nugget version the files "
                                         "assign (each nugget matched by its text).")],
    name: Annotated[str, typer.Option("--name", help="Name of the new assignment version.")],
) -> None:
    """Import nuggetizer assignment files as an assignment version, all or nothing."""
    from pooling.nuggets.assignments import import_assignments as run_import
    from pooling.store import Store

    with Store(store) as s:
        v = run_import(s, [str(f) for f in files], version, name)
    out.print(f"assignment version {v.name}: {v.n_rows} assignments of {v.n_answers} answers "
              f"over {v.n_topics} topics, on nugget version {v.nugget_version}", highlight=False)


@nuggets_app.command("compare")
def compare(
    store: StoreArg,
    assignments: Annotated[list[str], typer.Option(
        "--assignments", help="Two assignment versions of one nugget version, the reference "
        "first (give it twice).")],
    measure: Annotated[str, typer.Option("-m", "--measure", help="The nugget measure ranking "
                                         "the runs: strict_vital, strict_all, vital or all.")] = "all",
    by: Annotated[str, typer.Option("--by", help="Also show agreement per topic or per run.")] = "",
) -> None:
    """Agreement of two assignment versions (share alike, kappa) and of their run rankings
    (Kendall's tau, tau_ap)."""
    from pooling.evaluation.nuggets import nugget_measure_list
    from pooling.nuggets.compare import compare_assignments
    from pooling.store import Store

    if len(assignments) != 2:
        raise typer.BadParameter("give --assignments twice: the reference, then the other")
    (canonical,) = nugget_measure_list([measure])
    with Store(store, read_only=True) as s:
        c = compare_assignments(s, *assignments, measure=canonical)
    grid = Table("pairs of", "pairs", "same", "kappa", "linear kappa")
    rows = [("all", c.overall), *((f"{k} nuggets", v) for k, v in c.by_importance.items())]
    if by in ("topic", "run"):
        rows += [(f"{by} {k}", v) for k, v in (c.by_topic if by == "topic" else c.by_run).items()]
    for name, a in rows:
        grid.add_row(name, str(a.pairs), f"{a.same:.3f}", f"{a.kappa:.3f}", f"{a.weighted_kappa:.3f}")
    out.print(grid)
    out.print(f"runs ranked by {canonical}: Kendall tau {c.tau:.3f}, tau_ap {c.tau_ap:.3f} "
              f"({len(c.scores)} runs)", highlight=False)


@nuggets_app.command("create")
def create(
    store: StoreArg,
    bank: BankOpt,
    judge: Annotated[str, typer.Option("--judge", help="The model judge (openai or command) "
                                       "that makes the nuggets.")],
    qrels: Annotated[str | None, typer.Option("--qrels", help="The qrels version whose relevant "
                                              "documents the nuggets come from (default: the "
                                              "store's default).")] = None,
    topics: Annotated[list[str] | None, typer.Option("--topic", help="A topic (repeatable; "
                                                     "default: every topic with relevant text).")] = None,
    max_nuggets: Annotated[int, typer.Option("--max-nuggets", help="Nuggets per topic at most.")] = 30,
    window: Annotated[int, typer.Option("--window", help="Documents (then nuggets) per request.")] = 10,
    relevant_from: Annotated[int, typer.Option("--relevant-from", help="The lowest grade of a "
                                               "relevant document.")] = 1,
    replace: Annotated[bool, typer.Option("--replace", help="Replace the bank's nuggets of these "
                                          "topics (their deletion is recorded).")] = False,
    version: Annotated[str | None, typer.Option("--version", help="Name of the version the "
                                                "nuggets are frozen as (default BANK-vN).")] = None,
) -> None:
    """Let a model judge make each topic's nuggets from its relevant documents, iteratively,
    then label them vital or okay; every call recorded, a rerun asks nothing twice."""
    from pooling.judges.nugget_creation import create_nuggets
    from pooling.store import Store
    from pooling.terminal.progress import terminal_progress

    with Store(store) as s, terminal_progress() as bar:
        r = create_nuggets(s, judge, bank, qrels=qrels, topics=topics, max_nuggets=max_nuggets,
                           window=window, relevant_from=relevant_from, replace=replace,
                           version=version, progress=bar)
    out.print(f"bank {r.bank}: {r.nuggets} nuggets ({r.vital} vital) over {r.topics} topics, "
              f"version {r.version}; {r.calls} calls ({r.cached} answered before), "
              f"{r.prompt_tokens} prompt and {r.completion_tokens} completion tokens", highlight=False)
    for line in r.failures:
        err.print(f"[yellow]left out:[/yellow] {line}", highlight=False)
