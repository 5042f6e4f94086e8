"""`pooling release STORE OUT/` and `pooling import release STORE DIR`: publish a collection
as a checked bundle, and rebuild a store from one."""

from pathlib import Path
from typing import Annotated

import typer

from pooling.cli.app import app
from pooling.cli.store_cmds import StoreArg, import_app
from pooling.terminal.console import Console
from pooling.terminal.progress import terminal_progress

out = Console()


@app.command("release")
def release_cmd(
    store: StoreArg,
    directory: Annotated[Path, typer.Argument(help="The directory to write (must not exist, "
                                              "unless --force).")],
    qrels: Annotated[list[str], typer.Option("--qrels", help="A qrels version to release "
                                             "(repeatable; default: all, the default marked).")] = [],  # noqa: B006
    runs: Annotated[str, typer.Option(help="Runs to release: all, pooled (those that built "
                                      "the pool) or none.")] = "all",
    documents: Annotated[str, typer.Option(help="Documents: ids, text (only when their licence "
                                           "allows passing them on) or none.")] = "ids",
    title: Annotated[str | None, typer.Option(help="The collection's name (default: the store "
                                              "file's name).", show_default=False)] = None,
    author: Annotated[list[str], typer.Option("--author", help="An author for CITATION.cff "
                                              "(repeatable; default: the organisers).")] = [],  # noqa: B006
    license: Annotated[str, typer.Option("--license", help="SPDX licence id of the release "
                                         "(e.g. CC-BY-4.0), for the card and citation.")] = "unknown",
    version: Annotated[str, typer.Option(help="The release's version.")] = "1.0",
    pool_bias: Annotated[bool, typer.Option("--pool-bias/--no-pool-bias", help="Compute the "
                                            "leave-one-run-out pool bias for the datasheet.")] = True,
    force: Annotated[bool, typer.Option("--force", help="Replace DIRECTORY if it exists.")] = False,
    round: Annotated[list[str], typer.Option("--round", help="A judging round to release "
                                             "(repeatable; default: every round).")] = [],  # noqa: B006
    exclude_round: Annotated[list[str], typer.Option(
        "--exclude-round", help="A round to leave out: its pool, judgments and model calls "
        "(repeatable).")] = [],  # noqa: B006
    judgments: Annotated[bool, typer.Option("--judgments/--no-judgments", help="Release the "
                                            "judgment history and who judged.")] = True,
    process: Annotated[Path | None, typer.Option(
        "--process", help="A Markdown file telling how the collection was really pooled and "
        "judged, included in DATASHEET.md (its HTML escaped).", show_default=False)] = None,
) -> None:
    """Write a release: topics, qrels, runs, the pool and its provenance, the judgment history
    (people pseudonymised), DATASHEET.md, CITATION.cff, Parquet copies with a dataset card,
    BEIR and ir_datasets files, and SHA256SUMS over all of them."""
    from pooling.errors import PoolingError
    from pooling.release import DocsMode, ReleaseOptions, RunsMode, write_release
    from pooling.release.options import read_process
    from pooling.store import Store

    try:
        runs_mode, docs_mode = RunsMode(runs), DocsMode(documents)
    except ValueError as exc:
        raise PoolingError(f"{exc}; --runs takes all, pooled or none and --documents ids, "
                           "text or none") from exc
    options = ReleaseOptions(qrels=tuple(qrels) or None, runs=runs_mode, documents=docs_mode,
                             title=title, authors=tuple(author), license=license,
                             version=version, pool_bias=pool_bias, force=force,
                             rounds=tuple(round) or None, exclude_rounds=tuple(exclude_round),
                             judgments=judgments,
                             process=read_process(process) if process is not None else None)
    with Store(store) as s, terminal_progress() as bar:
        summary = write_release(s, directory, options, progress=bar)
    default = f" (default {summary.default_qrels})" if summary.default_qrels else ""
    out.print(f"wrote release {summary.path}: {summary.topics} topics, qrels "
              f"{', '.join(summary.qrels_versions) or 'none'}{default}, {len(summary.runs)} runs, "
              f"{summary.judgments} judgments, {summary.files} files in SHA256SUMS",
              highlight=False, soft_wrap=True)


@import_app.command("release")
def import_release_cmd(
    store: Annotated[Path, typer.Argument(help="The new store file to build (must not exist).")],
    directory: Annotated[Path, typer.Argument(help="A directory written by `pooling release`.")],
) -> None:
    """Rebuild a store from a release, after checking every file against its SHA256SUMS (a
    changed file is refused, naming it, and nothing is imported)."""
    from pooling.release import import_release

    result = import_release(directory, store)
    out.print(f"{directory}: checked {result.files_checked} files; built {result.store} "
              f"({result.topics} topics, {result.runs} runs, qrels "
              f"{', '.join(result.qrels_versions) or 'none'}, {result.judgments} judgments)",
              highlight=False, soft_wrap=True)
