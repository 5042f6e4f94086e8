"""The Store: a test collection in one DuckDB file, and the one object the rest of pooling holds.

`Database` (`pooling.store.database`) owns the connection, its transactions and the schema
version; the Store adds the entry points that import into it and export from it, each a
function of its own module (`runs`, `qrels`, `texts`, `ir_datasets`, `streams`) that takes
the Database it works in.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from pooling.errors import StoreError
from pooling.store.database import SERVER_FILE_SUFFIX, Database, utcnow

if TYPE_CHECKING:
    from pooling.evaluation.inputs import RunStream


class Store(Database):
    """A test collection held in one DuckDB file.

    Use `Store.create(path)` for a new collection and `Store(path)` to open one; use it as a
    context manager (or call `close()`). `read_only=True` lets several readers share the file.
    """

    # -- writing (each call is one transaction; see the modules for the rules) ------------
    def import_runs(self, files, **options):
        """Import TREC run files; see `pooling.store.runs.import_runs`."""
        from pooling.store.runs import import_runs

        return import_runs(self, list(files), **options)

    def import_run(self, run, run_id: str, **options):
        """Import one run given as a DataFrame, Arrow table, Parquet or CSV path."""
        from pooling.formats.frames import run_from_any
        from pooling.store.runs import import_run_table

        return import_run_table(self, run_from_any(run, default_tag=run_id), run_id, **options)

    def remove_run(self, run_id: str, **options):
        """Remove a run, recorded; see `pooling.store.run_changes.remove_run`."""
        from pooling.store.run_changes import remove_run

        return remove_run(self, run_id, **options)

    def replace_run(self, run_id: str, file, **options):
        """Put a run file in place of a run, recorded; see `pooling.store.run_changes`."""
        from pooling.store.run_changes import replace_run

        return replace_run(self, run_id, file, **options)

    def rename_run(self, run_id: str, new_run_id: str, **options):
        """Rename a run, recorded; see `pooling.store.run_changes.rename_run`."""
        from pooling.store.run_changes import rename_run

        return rename_run(self, run_id, new_run_id, **options)

    def run_changes(self, run_id: str | None = None):
        """The recorded removals, replacements and renames of runs, oldest first."""
        from pooling.store.run_changes import run_changes

        return run_changes(self, run_id)

    def import_qrels(self, qrels, name: str | None = None, **options):
        """Import qrels (TREC file, DataFrame, Arrow table, Parquet or CSV) as a new version."""
        from pooling.formats.frames import is_table_like, qrels_from_any
        from pooling.store.qrels import import_qrels_file, save_qrels

        if isinstance(qrels, (str, os.PathLike)) and not str(qrels).endswith((".parquet", ".csv")):
            if options.get("format") == "subtopic":  # ndeval's: query_id subtopic doc_id grade
                from pooling.store.qrels import import_subtopic_qrels_file

                options.pop("format")
                return import_subtopic_qrels_file(self, qrels, name=name, **options)
            if _sampled_file(qrels, options):
                from pooling.store.sampled_qrels import import_sampled_qrels_file

                options.pop("format", None)
                return import_sampled_qrels_file(self, qrels, name=name, **options)
            return import_qrels_file(self, qrels, name=name, **options)
        if name is None:
            if is_table_like(qrels):
                raise StoreError("give a name for a qrels version made from a table")
            name = Path(str(qrels)).name.split(".")[0]
        source = None if is_table_like(qrels) else str(qrels)
        return save_qrels(self, qrels_from_any(qrels), name, method="imported", source=source,
                          **options)

    def import_topics(self, path, format: str | None = None, **options):
        """Import topics (format sniffed unless given); options as `pooling.formats.read_topics`."""
        from pooling.store.texts import import_topics

        return import_topics(self, path, format=format, **options)

    def import_documents(self, path, format: str | None = None, progress=None):
        from pooling.store.texts import import_documents

        return import_documents(self, path, format=format, progress=progress)

    def import_ir_dataset(self, dataset_id: str, docs: str = "pooled", progress=None, **options):
        """Import an ir_datasets dataset; see `pooling.store.ir_datasets.import_ir_dataset`."""
        from pooling.store.ir_datasets import import_ir_dataset

        return import_ir_dataset(self, dataset_id, docs=docs, progress=progress, **options)

    def export_run(self, run_id: str, out) -> None:
        """Write a stored run as a TREC run file (same ranking, rank and scores as imported)."""
        from pooling.formats.trec_run import write_trec_run

        tag = self.one("run tag", "SELECT tag FROM runs WHERE run_id = ?", [run_id])
        table = self.run_table(run_id)
        write_trec_run(table, out, tag=tag[0] if tag else run_id)

    def export_qrels(self, out, version: str | None = None, *, header: bool = False) -> str:
        """Write a qrels version as plain TREC qrels (provenance in `PATH.meta.json` beside a
        file; header=True also as a `#` line); see `pooling.store.qrels.export_qrels`."""
        from pooling.store.qrels import export_qrels

        return export_qrels(self, out, version, header=header)

    def export_sampled_qrels(self, out, version: str | None = None) -> str:
        """Write a sampled qrels version as the five-column file sample_eval.pl reads; see
        `pooling.store.sampled_qrels.export_sampled_qrels`."""
        from pooling.store.sampled_qrels import export_sampled_qrels

        return export_sampled_qrels(self, out, version)

    def run_stream(self, run_id: str) -> RunStream:
        """A stored run for evaluation: (query_id, doc_id, score) batches in stored order.

        No ORDER BY: the evaluator puts rows in trec_eval's order itself, and sorting 7M
        rows here would cost more than the whole evaluation.
        """
        from pooling.evaluation.inputs import RunStream

        found = self.one("count run", "SELECT n_rows FROM runs WHERE run_id = ?", [run_id])
        if found is None:
            self.require_run(run_id)  # says which runs there are
            raise StoreError(f"no run {run_id!r} in {self.path}")
        (rows,) = found

        def batches() -> Iterator[pa.RecordBatch]:
            from pooling.store.streams import read_run

            return read_run(self.con, run_id)

        # Import refuses a doc_id twice in a topic (or drops the later lines, --dedupe).
        return RunStream(batches, int(rows), run_id, run_id, unique=True)

    def set_default_qrels(self, version: str) -> str:
        """Make a version the default; see `pooling.store.qrels.set_default_qrels`."""
        from pooling.store.qrels import set_default_qrels

        return set_default_qrels(self, version)

    def __enter__(self) -> Store:
        return self


def _sampled_file(path: str | os.PathLike[str], options: dict) -> bool:
    """Whether a qrels file is imported as sampled qrels: `format="sampled"`, or no format
    named and five fields on its first data line (plain qrels have four)."""
    from pooling.formats.sampled_qrels import looks_sampled

    fmt = options.get("format")
    if fmt == "sampled":
        for option in ("grades", "topic_map"):
            if options.get(option) is not None:
                raise StoreError(f"{option.replace('_', '-')} does not apply to sampled qrels; "
                                 "leave it out")
        options.pop("grades", None)
        options.pop("topic_map", None)
        return True
    if fmt is not None or options.get("grades") is not None or options.get("topic_map"):
        return False
    try:
        sampled = looks_sampled(path)
    except OSError:
        return False  # the plain reader says what is wrong with the file
    if sampled:
        options.pop("grades", None)
        options.pop("topic_map", None)
    return sampled


__all__ = ["SERVER_FILE_SUFFIX", "Store", "utcnow"]
