"""Store commands: `init`, `import topics|docs|runs|qrels|letor|ir-datasets`, `info`, `export run|qrels`."""

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from pooling.cli.app import app
from pooling.cli.run_options import (
    Dedupe,
    DedupeOpt,
    Meta,
    RunNames,
    RunNamesOpt,
    SplitByTag,
    TopicMapOpt,
    print_notes,
    run_reading,
)
from pooling.errors import PoolingError, StoreError
from pooling.terminal.console import Console
from pooling.terminal.progress import terminal_progress

if TYPE_CHECKING:  # the store loads with the command that opens one, not with the CLI
    from pooling.store.ir_datasets import IrDatasetImport

import_app = typer.Typer(help="Import topics, documents, runs or qrels into a store.", no_args_is_help=True)
export_app = typer.Typer(help="Export runs or qrels from a store as TREC files.", no_args_is_help=True)
app.add_typer(import_app, name="import")
app.add_typer(export_app, name="export")

AllowCopy = Annotated[bool, typer.Option(
    "--allow-copy", help="Store a file again under a new --name (or --meta run_id) though the "
    "store holds its content already (else that is refused).")]
# readable=False: the library says which file cannot be read, and why, in one sentence.
StoreArg = Annotated[Path, typer.Argument(help="The collection's store file (DuckDB).", readable=False)]
FilesArg = Annotated[list[Path], typer.Argument(help="Files to import (.gz read transparently).",
                                                readable=False)]
err = Console(stderr=True)
out = Console()


class DocsOpt(StrEnum):
    """`import ir-datasets --docs`: the library's DocsMode values."""

    pooled = "pooled"
    all = "all"
    none = "none"


def _warn(messages: list[str]) -> None:
    for m in messages:
        err.print(f"[yellow]warning:[/yellow] {escape(m)}", highlight=False, markup=True)


@app.command()
def init(store: StoreArg) -> None:
    """Create a new, empty store file for a test collection."""
    from pooling.store import Store

    Store.create(store).close()
    out.print(f"created {store}", highlight=False)


@import_app.command("topics")
def import_topics(
    store: StoreArg,
    files: FilesArg,
    format: Annotated[str | None, typer.Option(
        help="trec, clef, ntcir, trec-web, smart, jsonl or tsv (default: guessed from the file).")] = None,
    language: Annotated[str | None, typer.Option(
        help="CLEF topics: the language of the title (default en, else the topic's first).")] = None,
    field: Annotated[list[str], typer.Option(
        help="JSONL topics: canonical=key, e.g. query_id=qid or title=query (repeatable).")] = [],  # noqa: B006
) -> None:
    """Import topics: TREC SGML, CLEF XML, NTCIR XML, TREC Web XML, SMART queries, JSONL or TSV
    query_id<TAB>text. SMART queries are numbered 1..N as SMART relevance files count them."""
    from pooling.store import Store

    fields = None
    if field:
        fields = {}
        for item in field:
            column, eq, key = item.partition("=")
            if not eq or not column.strip() or not key.strip():
                raise StoreError(f"--field takes canonical=key (e.g. query_id=qid), got {item!r}")
            fields[column.strip()] = key.strip()
    with Store(store) as s:
        for f in files:
            r = s.import_topics(f, format=format, language=language, fields=fields)
            out.print(f"{r.source}: {r.status}, {r.added} new topic(s), {r.unchanged} unchanged",
                      highlight=False)


@import_app.command("docs")
def import_docs(
    store: StoreArg,
    files: FilesArg,
    format: Annotated[str | None, typer.Option(help="jsonl, tsv or trec (default: guessed).")] = None,
) -> None:
    """Import documents (JSONL, TSV, or TREC SGML <DOC>)."""
    from pooling.store import Store

    with Store(store) as s, terminal_progress() as bar:
        for f in files:
            r = s.import_documents(f, format=format, progress=bar)
            out.print(f"{r.source}: {r.status}, {r.added} new document(s), {r.unchanged} unchanged",
                      highlight=False)


@import_app.command("runs")
def import_runs(
    store: StoreArg,
    files: FilesArg,
    name: Annotated[str | None, typer.Option(help="run_id for a single file (default: its tag).")] = None,
    strict: Annotated[bool, typer.Option(help="Refuse runs naming topics the store lacks.")] = False,
    dedupe: Dedupe = DedupeOpt.error,
    run_names: RunNames = RunNamesOpt.tag,
    meta: Meta = None,
    split_by_tag: SplitByTag = False,
    topic_map: TopicMapOpt = None,
    allow_copy: AllowCopy = False,
) -> None:
    """Import TREC run files (query_id Q0 doc_id rank score tag), all or nothing."""
    from pooling.store import Store

    reading = run_reading(dedupe, run_names, meta, split_by_tag, topic_map)
    with Store(store) as s, terminal_progress() as bar:
        report = s.import_runs(
            files, name=name, meta=reading.meta, dedupe=reading.dedupe, strict=strict,
            split_by_tag=split_by_tag, run_names=reading.run_names, topic_map=reading.topic_map,
            allow_copy=allow_copy, progress=bar,
        )
    for item in report.items:
        if item.status == "imported":
            extra = f", {item.duplicates_dropped} repeated line(s) dropped" if item.duplicates_dropped else ""
            out.print(f"{item.source}: imported run {item.run_id} ({item.n_topics} topics, "
                      f"{item.n_rows} rows{extra})", highlight=False)
        else:
            out.print(f"{item.source}: already imported as run {item.run_id}", highlight=False)
    print_notes(report.notes)
    _warn(report.warnings)


@import_app.command("qrels")
def import_qrels(
    store: StoreArg,
    file: Annotated[Path, typer.Argument(help="TREC qrels file: query_id iter doc_id relevance.",
                                         readable=False)],
    name: Annotated[str | None, typer.Option(help="Name of the new qrels version.")] = None,
    format: Annotated[str | None, typer.Option(
        help="trec, smart (a SMART relevance file: query doc grade, as Cranfield's cranqrel), "
             "letor or sampled (sample_eval.pl's five columns: query_id iter doc_id stratum "
             "relevance, -1 pooled but not sampled) (default: told from the file's lines).")] = None,
    grades: Annotated[str | None, typer.Option(
        help="SMART grades: cranfield (the default: 1..4 best first become 4..1, -1 becomes 0), "
             "binary (every listed pair relevant) or as-is.", show_default=False)] = None,
    topic_map: TopicMapOpt = None,
    allow_copy: AllowCopy = False,
) -> None:
    """Import a qrels file as a new, immutable qrels version."""
    from pooling.formats.topic_map import read_topic_map
    from pooling.store import Store

    mapping = read_topic_map(topic_map) if topic_map is not None else None
    with Store(store) as s:
        r = s.import_qrels(file, name=name, format=format, grades=grades, topic_map=mapping,
                           allow_copy=allow_copy)
    if r.status == "imported":
        read_as = (f"; read as a SMART relevance file, --grades {r.grade_mapping}"
                   if r.format == "smart" else "")
        if r.format == "sampled":
            read_as = "; sampled qrels: every pooled pair's stratum is kept"
        out.print(f"{file}: imported qrels version {r.name} ({r.n_topics} topics, {r.n_rows} "
                  f"judgments, grades {', '.join(map(str, r.grades))}{read_as})", highlight=False)
    else:
        out.print(f"{file}: already imported as qrels version {r.name}", highlight=False)


@import_app.command("letor")
def import_letor(
    store: StoreArg,
    file: Annotated[Path, typer.Argument(help="LETOR/SVMlight file: label qid:Q 1:v ... # docid",
                                         readable=False)],
    name: Annotated[str | None, typer.Option(help="Name of the qrels version made from labels.")] = None,
    feature_runs: Annotated[
        str | None,
        typer.Option(help="Feature ids to import as runs ranking by that feature ('all' or 1,5,9)."),
    ] = None,
) -> None:
    """Import LETOR labels as a qrels version, and optionally feature columns as runs."""
    from pooling.store import Store
    from pooling.store.letor import import_letor as do_import

    with Store(store) as s:
        result = do_import(s, file, name=name, feature_runs=feature_runs)
    out.print(f"{file}: qrels version {result.qrels.name} ({result.qrels.status})", highlight=False)
    for item in result.runs:
        out.print(f"  run {item.run_id}: {item.status}", highlight=False)


@import_app.command("ir-datasets")
def import_ir_datasets(
    store: StoreArg,
    dataset_id: Annotated[str, typer.Argument(help="An ir_datasets id, e.g. msmarco-passage/trec-dl-2019/judged.")],
    docs: Annotated[
        DocsOpt,
        typer.Option(help="Documents: 'pooled' (those in runs, pools and judgments), 'all', or 'none'."),
    ] = DocsOpt.pooled,
    name: Annotated[str | None, typer.Option(help="Name of the qrels version (default: irds:DATASET_ID).")] = None,
) -> None:
    """Import a dataset of ir_datasets: its topics, its qrels as a new version, and documents."""
    from pooling.store import Store

    with Store(store) as s, terminal_progress() as bar:
        report = s.import_ir_dataset(dataset_id, docs=docs.value, qrels_name=name, progress=bar)
    for line in _ir_dataset_summary(report):
        out.print(line, highlight=False, soft_wrap=True)
    print_notes(report.notes)


def _ir_dataset_summary(r: "IrDatasetImport") -> list[str]:
    """One line per table: what the import added, or that it was there already."""
    lines = []
    if (t := r.topics) is not None:
        counts = f", {t.added} new topic(s), {t.unchanged} unchanged" if t.status == "imported" else ""
        lines.append(f"{r.source} topics: {t.status}{counts}")
    if (q := r.qrels) is not None and q.status == "imported":
        lines.append(f"{r.source} qrels: imported qrels version {q.name} ({q.n_topics} topics, "
                     f"{q.n_rows} judgments, grades {', '.join(map(str, q.grades))})")
    elif q is not None:
        lines.append(f"{r.source} qrels: already imported as qrels version {q.name}")
    if (d := r.documents) is not None:
        counts = (f", {d.added} new document(s), {d.unchanged} unchanged"
                  if d.status == "imported" else "")
        lines.append(f"{r.source} documents ({r.docs}): {d.status}{counts}")
    elif r.docs == DocsOpt.none:
        lines.append(f"{r.source} documents: skipped (--docs none)")
    return lines


@app.command()
def info(store: StoreArg) -> None:
    """Counts per table, the runs with their topics and rows, and the qrels versions."""
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        data = s.info()
        sources = {q["name"]: s.qrels_info(q["name"])["source"] for q in data["qrels_versions"]}
    out.print(f"[bold]{escape(str(data['path']))}[/bold] (schema {data['schema_version']})",
              highlight=False, markup=True)
    counts = Table("table", "rows", title="contents")
    for name, n in data["counts"].items():
        counts.add_row(name, f"{n:,}")
    out.print(counts)
    if data["runs"]:
        runs = Table("run_id", "team", "topics", "rows", "pooled", "source", title="runs")
        for r in data["runs"]:
            pooled = "" if r["pooled"] is None else ("yes" if r["pooled"] else "no")
            runs.add_row(r["run_id"], r["team"] or "", str(r["n_topics"]), f"{r['n_rows']:,}",
                         pooled, r["source"] or "")
        out.print(runs)
    if data["qrels_versions"]:
        q = Table("version", "method", "topics", "judgments", "grades", "source",
                  title="qrels versions (* the default)")
        for r in data["qrels_versions"]:
            q.add_row(r["name"] + (" *" if r["name"] == data["default_qrels"] else ""), r["method"], str(r["n_topics"]), f"{r['n_rows']:,}",
                      ",".join(map(str, r["grades"])), sources[r["name"]] or "")
        out.print(q)


@export_app.command("run")
def export_run(
    store: StoreArg,
    run_id: Annotated[str, typer.Argument(help="The run to export.")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File to write (default: stdout).")] = None,
) -> None:
    """Write a stored run as a TREC run file, in trec_eval order."""
    from pooling.store import Store

    with Store(store, read_only=True) as s:
        s.export_run(run_id, output if output else sys.stdout)
    if output:
        err.print(f"wrote {output}", highlight=False)


@export_app.command("qrels")
def export_qrels(
    store: StoreArg,
    qrels: Annotated[str | None, typer.Option("--qrels", help="Qrels version (default: the store's default, see `pooling qrels default`).")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File to write (default: stdout).")] = None,
    with_header: Annotated[bool, typer.Option(
        "--with-header", help="Also put the provenance in the file as a first `#` line "
        "(trec_eval skips it; pytrec_eval, ir_measures, ranx and trectools do not read it).")] = False,
    format: Annotated[str, typer.Option(
        help="trec (judged pairs: query_id iter doc_id relevance) or sampled (a sampled "
             "version's five columns as sample_eval.pl reads them: query_id iter doc_id "
             "stratum relevance, -1 for pooled pairs not sampled).")] = "trec",
) -> None:
    """Write a qrels version as a plain TREC qrels file, as every evaluation tool reads it;
    with -o its provenance (method, source, grades, dates) goes beside it in FILE.meta.json."""
    from pooling.store import Store
    from pooling.store.qrels import sidecar_path

    if format not in ("trec", "sampled"):
        raise PoolingError(f"--format must be trec or sampled, not {format!r}")
    if format == "sampled" and with_header:
        raise PoolingError("--with-header is for --format trec; sample_eval.pl reads no comment "
                           "line, so the provenance goes beside the file only")
    with Store(store, read_only=True) as s:
        if format == "sampled":
            name = s.export_sampled_qrels(output if output else sys.stdout, qrels)
        else:
            name = s.export_qrels(output if output else sys.stdout, qrels, header=with_header)
    if output:
        err.print(f"wrote qrels version {name} to {output} (provenance in {sidecar_path(output)})",
                  highlight=False)
