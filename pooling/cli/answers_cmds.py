"""Answer-run commands: `import answers`, `export answers`, `answers list`."""

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.store_cmds import FilesArg, StoreArg, err, export_app, import_app, out

answers_app = typer.Typer(help="Generated answers in a store: list them.", no_args_is_help=True)
app.add_typer(answers_app, name="answers")

FormatOpt = Annotated[str | None, typer.Option(
    "--format", help="rag24 (JSONL, citations index `references`), rag25 (citations are segment "
    "ids), json ({topic: {run: text}}) or tsv (topic<TAB>run<TAB>text); default: read from the "
    "file.")]


@import_app.command("answers")
def import_answers(
    store: StoreArg,
    files: FilesArg,
    format: FormatOpt = None,
    add_topics: Annotated[bool, typer.Option(
        "--add-topics", help="Add topics the store lacks from the file (its question text, or "
        "the id alone where it has none); else they are refused.")] = False,
    references_run: Annotated[bool, typer.Option(
        "--references-run/--no-references-run", help="Also store each answer run's references "
        "as a ranked run of the same run_id, so strategies can pool the cited segments.")] = True,
    team: Annotated[str | None, typer.Option(help="Team that submitted the runs.")] = None,
    description: Annotated[str | None, typer.Option(help="What the runs are.")] = None,
) -> None:
    """Import answer runs (TREC RAG JSONL, or plain responses as JSON or TSV), all or nothing:
    each answer as given, its sentences and their citations."""
    from pooling.store import Store
    from pooling.store.answers import import_answers as run_import

    with Store(store) as s:
        report = run_import(s, files, format=format, add_topics=add_topics,
                            references_as_run=references_run, team=team, description=description)
    for item in report.items:
        if item.status != "imported":
            out.print(f"{item.source}: already imported as answer run {item.run_id}", highlight=False)
            continue
        ranked = ", references stored as a ranked run" if item.ranked_run else ""
        out.print(f"{item.source}: imported answer run {item.run_id} ({item.format}: "
                  f"{item.n_answers} answers over {item.n_topics} topics, {item.n_sentences} "
                  f"sentences, {item.n_citations} citations{ranked})", highlight=False)
    if report.topics_added:
        out.print(f"added {len(report.topics_added)} topic(s) from the file(s)", highlight=False)


@export_app.command("answers")
def export_answers(
    store: StoreArg,
    run_id: Annotated[str, typer.Argument(help="The answer run to export.")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File to write (default: stdout).")] = None,
    format: FormatOpt = None,
) -> None:
    """Write an answer run back in the form it came in, each answer as given."""
    from pooling.output_files import write_text
    from pooling.store import Store
    from pooling.store.answers import export_answers as run_export

    with Store(store, read_only=True) as s:
        text = run_export(s, run_id, format=format)
    if output:
        write_text(output, text)
        err.print(f"wrote {output}", highlight=False)
    else:
        sys.stdout.write(text)


@answers_app.command("list")
def list_answers(store: StoreArg) -> None:
    """The stored answer runs: form, answers, topics, sentences and citations."""
    from pooling.store import Store
    from pooling.store.answers import answer_runs_summary

    with Store(store, read_only=True) as s:
        rows = answer_runs_summary(s)
    table = Table("run_id", "format", "answers", "topics", "sentences", "citations", "source")
    for r in rows:
        table.add_row(*(str(v) if v is not None else "-" for v in r))
    out.print(table)
