"""Importing runs into the store: atomic, idempotent, and fast for clean TREC files.

A clean single-space file is read by DuckDB's own CSV reader straight into the table (one
pass, both cores). That reader skips what it cannot read, so the transaction stays usable;
anything unusual (comments, tabs, several tags, a bad line, duplicates) shows as fewer rows
than lines or as repeated pairs, is undone, and the file goes through the general reader,
which explains every problem with file:line. All files of one call share one transaction: all or nothing.
A refused call names the problems of every file it was given, a few per file.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from pooling.errors import FormatError, InputFileError, Problem, StoreError
from pooling.evaluation.kernel import line_facts
from pooling.formats.ids import check_id
from pooling.formats.run_files import (  # noqa: F401  (RunMeta, read_run_meta: re-exported)
    RunMeta,
    RunNames,
    RunReading,
    read_run_meta,
    run_name,
)
from pooling.formats.source import (
    MAGIC_BYTES,
    MAX_LINE_BYTES,
    compression_of,
    display_name,
    line_blocks,
    read_file_bytes,
)
from pooling.formats.topic_map import TopicMap, details_json
from pooling.formats.topic_order import in_topic_order
from pooling.formats.trec_run import RUN_LINE, Dedupe, ParsedRun, parse_trec_run, split_checked
from pooling.store import faults
from pooling.store.database import Database, utcnow
from pooling.store.imports import (
    already_imported,
    live_run_imports,
    same_content_refusal,
)
from pooling.store.reimports import changed_options, changed_refusal
from pooling.terminal.progress import NoProgress, Progress

CHUNK_ROWS = 250_000
KEEP_BYTES = 1 << 30  # file bytes kept in memory between planning and loading
PROBLEMS_PER_FILE = 5  # shown for each bad file when several files of one call are bad


class RunFilesError(FormatError):
    """Several run files of one import have problems: the first few of each file, so every
    bad file is named (the bound is per file, not on the whole list)."""

    max_shown = sys.maxsize


@dataclass
class ImportedRun:
    """Outcome for one run: imported, or already there (same content)."""

    run_id: str
    source: str
    status: str  # "imported" | "already imported"
    n_rows: int = 0
    n_topics: int = 0
    duplicates_dropped: int = 0


@dataclass
class ImportReport:
    """What an import call did, plus warnings worth showing (e.g. unknown topics)."""

    items: list[ImportedRun] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Planned:
    path: Path
    source: str
    sha256: str
    run_id: str | None  # None when split by tag (ids come from the tags)
    meta: RunMeta
    raw: bytes | None = None  # the file's bytes, kept from planning while memory allows


def import_runs(
    store: Database,
    files: list[str | Path],
    *,
    name: str | None = None,
    meta: dict[str, RunMeta] | None = None,
    dedupe: Dedupe = "error",
    strict: bool = False,
    split_by_tag: bool = False,
    run_names: RunNames = "tag",
    topic_map: TopicMap | None = None,
    allow_copy: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Import TREC run files in one transaction; see the module docstring for the rules.

    Runs are read under the same options as in every command (`pooling.formats.run_files`);
    a topic map that changed ids is recorded with the import. A file whose content the store
    holds is "already imported", unless its run_id is named (`name`, a `meta` run_id) and the
    content was not imported as that: refused, or stored again with `allow_copy`
    (`pooling.store.imports`).
    """
    progress = progress or NoProgress()
    reading = RunReading(dedupe=dedupe, run_names=run_names, meta=meta, split_by_tag=split_by_tag,
                         topic_map=topic_map)
    if name is not None and len(files) != 1:
        raise StoreError("--name names a single run; for several files give --meta runs.tsv")
    report = ImportReport()
    failed: dict[str, FormatError] = {}  # source -> its problems; every file is still read
    planned = _plan(store, files, name, reading, report, failed, allow_copy)
    if not planned and not failed:
        return report
    new_ids: list[str] = []
    with store.transaction():
        for item in planned:
            raw = item.raw if item.raw is not None else read_file_bytes(item.path)
            item.raw = None
            try:
                if failed:  # nothing will be stored: only look for this file's problems
                    parse_trec_run(raw, item.source, split_by_tag=split_by_tag, dedupe=dedupe,
                                   topic_map=topic_map)
                    continue
                loaded, used = _load(store, item, raw, reading, progress)
            except FormatError as exc:
                failed[item.source] = exc
                continue
            for run_id, tag, rows_dropped in loaded:
                _record_run(store, item, run_id, tag, dedupe, rows_dropped)
                new_ids.append(run_id)
                report.items.append(_summary(store, run_id, item.source, rows_dropped))
            if used:
                report.notes.append(f"{item.source}: topic map changed {len(used)} topic id(s)")
            store.one(
                "record import",
                "INSERT INTO imports (sha256, kind, source, target, imported_at, details) "
                "VALUES (?, 'run', ?, ?, ?, ?)",
                [item.sha256, item.source, ",".join(r for r, _, _ in loaded), utcnow(),
                 details_json(topic_map=topic_map.record(used) if topic_map and used else None)],
            )
        if failed:
            raise _refusal(failed, len(files))
        report.warnings += _check_topics(store, new_ids, strict)
    return report


def _load(
    store: Database, item: _Planned, raw: bytes, reading: RunReading, progress: Progress
) -> tuple[list[tuple[str, str, int]], dict[str, str]]:
    """Insert one file's run(s): (run_id, tag, rows dropped) each, and the topic ids mapped.
    A compressed file is decompressed block by block by the reader, never whole."""
    plain = compression_of(raw[:MAGIC_BYTES]) is None
    if item.run_id is not None and plain and reading.topic_map is None:
        loaded = _insert_fast(store, item, raw, progress)
        if loaded is not None:
            return loaded, {}
    runs = parse_trec_run(raw, item.source, split_by_tag=reading.split_by_tag,
                          dedupe=reading.dedupe, topic_map=reading.topic_map)
    several = len(runs) > 1
    loaded = [
        _insert_parsed(store, item, run, progress,
                       item.run_id or run_name(item.path, run.tag, reading, several_tags=several))
        for run in runs
    ]
    return loaded, runs[0].topics_mapped if runs else {}


def _refusal(failed: dict[str, FormatError], n_files: int) -> FormatError:
    """One error for the bad files of an import: a lone file's own error, or the first
    PROBLEMS_PER_FILE problems of each file with a count of the rest and the file's hint."""
    if len(failed) == 1:
        return next(iter(failed.values()))
    problems: list[Problem] = []
    hints: set[str] = set()
    for source, exc in failed.items():
        # Problems of the whole file (no line: a count, a summary) are always shown.
        at_lines = [p for p in exc.problems if p.line is not None]
        problems += at_lines[:PROBLEMS_PER_FILE]
        problems += [p for p in exc.problems if p.line is None]
        more = len(at_lines) - PROBLEMS_PER_FILE
        if more > 0:
            problems.append(Problem(source, None, f"and {more} more problem(s)"))
        if exc.hint and exc.hint not in hints:  # the same advice is given once
            hints.add(exc.hint)
            problems.append(Problem(source, None, exc.hint))
    return RunFilesError(problems, hint=f"Nothing was imported: {len(failed)} of {n_files} files "
                         "have problems; fix them and import again.")


def import_run_table(
    store: Database,
    table: pa.Table,
    run_id: str,
    *,
    meta: RunMeta | None = None,
    dedupe: Dedupe = "error",
    strict: bool = False,
    source: str = "<table>",
    allow_copy: bool = False,
) -> ImportReport:
    """Import one run given as a canonical Arrow table (query_id, doc_id, rank, score, tag, line).

    Content the store holds under another run_id is refused, or stored again with `allow_copy`.
    """
    if store.has_run(run_id):
        raise StoreError(f"run {run_id!r} already exists in {store.path}; choose another run_id")
    sha = _table_sha256(table)
    report = ImportReport()
    prior = live_run_imports(store, sha)
    if prior and not allow_copy:
        raise StoreError(same_content_refusal(source, "run", prior[0], run_id))
    (run,) = split_checked(table, source, split_by_tag=False, dedupe=dedupe)
    item = _Planned(Path(source), source, sha, run_id, meta or RunMeta())
    with store.transaction():
        _, tag, dropped = _insert_parsed(store, item, run, NoProgress())
        _record_run(store, item, run_id, tag, dedupe, dropped)
        store.one("record import", "INSERT INTO imports (sha256, kind, source, target, imported_at) VALUES (?, 'run', ?, ?, ?)",
                  [sha, source, run_id, utcnow()])
        report.items.append(_summary(store, run_id, source, dropped))
        report.warnings += _check_topics(store, [run_id], strict)
    return report


def _plan(
    store: Database,
    files: list[str | Path],
    name: str | None,
    reading: RunReading,
    report: ImportReport,
    failed: dict[str, FormatError],
    allow_copy: bool = False,
) -> list[_Planned]:
    """Decide each file's run_id and refuse conflicts before anything is written; a file whose
    run tag cannot be read is left out, its problems kept in `failed`."""
    planned: list[_Planned] = []
    kept = 0
    seen_sha: dict[str, tuple[str, str]] = {}  # content -> (its run_id or file, its file)
    problems: list[str] = []
    unreadable: list[InputFileError] = []
    for f in files:
        path = Path(f)
        source = display_name(f)
        try:
            raw = read_file_bytes(path)
        except InputFileError as exc:
            unreadable.append(exc)
            problems.append(str(exc))
            continue
        sha = hashlib.sha256(raw).hexdigest()
        file_meta = reading.meta_for(path)
        asked = None if reading.split_by_tag else name or (file_meta.run_id if file_meta else None)
        prior = live_run_imports(store, sha)
        if (same := already_imported(prior, asked)) is not None:
            changed = changed_options(store, same, reading, file_meta)
            if changed:
                problems.append(changed_refusal(store, source, same, changed))
            else:
                report.items.append(ImportedRun(asked or same.target, source, "already imported"))
            continue
        if prior and not allow_copy:
            problems.append(same_content_refusal(source, "run", prior[0], str(asked)))
            continue
        earlier, earlier_source = seen_sha.get(sha, (None, None))
        if earlier is not None and (asked is None or asked == earlier):
            report.items.append(ImportedRun(earlier, source, "already imported"))
            continue
        if earlier is not None and not allow_copy:
            problems.append(
                f"{source} has the same content as {earlier_source} (run {earlier!r} of this "
                f"import); run {asked!r} was not made: drop one of them, or pass --allow-copy to "
                "store both")
            continue
        if reading.meta is not None and file_meta is None:
            problems.append(f"{source}: not listed in the --meta file (add a line for it)")
            continue
        file_meta = file_meta or RunMeta()
        run_id = None
        if not reading.split_by_tag:
            try:
                run_id = name or run_name(path, _needed_tag(raw, source), reading)
            except FormatError as exc:
                failed[source] = exc
                continue
        seen_sha.setdefault(sha, (run_id or source, source))
        kept += len(raw)
        planned.append(
            _Planned(path, source, sha, run_id, file_meta, raw if kept <= KEEP_BYTES else None)
        )
    by_id: dict[str, str] = {}
    for item in planned:
        if item.run_id is None:
            continue
        if item.run_id in by_id:
            problems.append(
                f"{by_id[item.run_id]} and {item.source} would both be run {item.run_id!r}; "
                "name runs after their files with --run-names file, or give each file its own "
                "run_id in a --meta runs.tsv"
            )
        by_id[item.run_id] = item.source
        existing = store.one(
            "find run", "SELECT source FROM runs WHERE run_id = ?", [item.run_id]
        )
        if existing:
            problems.append(
                f"{item.source}: run {item.run_id!r} already exists (imported from {existing[0]}); "
                "name this one with --name, or give run_ids in a --meta runs.tsv"
            )
    if problems:
        if len(files) == 1 and unreadable:
            raise unreadable[0]  # the one file given cannot be read: one sentence says so
        if failed:
            problems.append(str(_refusal(failed, len(files))))
        raise StoreError("nothing was imported:\n" + "\n".join(problems))
    return planned


def _first_tag(data: bytes) -> str | None:
    """The tag of the first data line, however far down the file it is; None when that line
    is malformed or there is none. Blank and `#` lines are skipped, as the reader does."""
    fields = _first_data_fields(data)
    if fields is None or len(fields) < 6:
        return None
    return fields[5].decode("utf-8", errors="replace")


def _first_data_fields(data: bytes) -> list[bytes] | None:
    """The fields of the first line that is neither blank nor a `#` comment, or None."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        fields = data[start:end].split(maxsplit=6)
        start = end + 1
        if fields and not fields[0].startswith(b"#"):
            return fields
    return None


def _needed_tag(raw: bytes, source: str) -> str:
    """The tag that names a run (raw: the file's bytes, perhaps compressed: decompressed block
    by block up to its first data line); when there is none, the reader's account of why."""
    for _, block in line_blocks(raw, source, RUN_LINE):
        if _first_data_fields(block) is not None:
            tag = _first_tag(block)
            if tag is None:
                break
            return tag
    parse_trec_run(raw, source)
    raise FormatError([Problem(source, None, "no run tag found")])


_FAST_READ = """
INSERT INTO run_results
SELECT $run_id, query_id, doc_id, rank, score
FROM read_csv($path, delim = ' ', header = false, quote = '', escape = '',
              auto_detect = false, strict_mode = true, null_padding = false,
              ignore_errors = true,
              columns = {'query_id': 'VARCHAR', 'q0': 'VARCHAR', 'doc_id': 'VARCHAR',
                         'rank': 'BIGINT', 'score': 'DOUBLE', 'tag': 'VARCHAR'})
WHERE q0 IN ('Q0', 'q0', '0') AND isfinite(score) AND tag = $tag
  AND NOT starts_with(query_id, '#') AND doc_id IS NOT NULL
"""


def _insert_fast(
    store: Database, item: _Planned, data: bytes, progress: Progress
) -> list[tuple[str, str, int]] | None:
    """DuckDB reads the file into the table; None (rows removed) if anything is irregular."""
    n_lines, too_long, odd_whitespace = line_facts(data, MAX_LINE_BYTES)
    if odd_whitespace or too_long:
        return None
    tag = _first_tag(data)
    if tag is None:
        return None
    assert item.run_id is not None
    check_id(item.run_id, f"{item.source}: run id", names_file=True)
    progress.start(f"importing {item.source}", total=n_lines)
    store.sql("fast read", _FAST_READ, {"run_id": item.run_id, "path": str(item.path.resolve()), "tag": tag})
    (written,) = store.one(
        "count rows", "SELECT count(*) FROM run_results WHERE run_id = ?", [item.run_id]
    )
    faults.rows_written(written)
    if written != n_lines or _stored_duplicates(store, item.run_id):
        _delete_rows(store, item.run_id)
        return None
    progress.advance(n_lines)
    progress.finish()
    return [(item.run_id, tag, 0)]


def _stored_duplicates(store: Database, run_id: str) -> bool:
    """Any repeated (query_id, doc_id) in a stored run? (sorted 64-bit hashes; exact on a hit)"""
    hashed = store.con.execute(
        "SELECT hash(query_id, doc_id) AS h FROM run_results WHERE run_id = ?", [run_id]
    ).fetchnumpy()
    h = np.asarray(hashed["h"])
    h.sort()
    if not (h[1:] == h[:-1]).any():
        return False
    row = store.one(
        "confirm duplicates",
        "SELECT count(*) FROM (SELECT query_id, doc_id FROM run_results WHERE run_id = ? "
        "GROUP BY query_id, doc_id HAVING count(*) > 1)",
        [run_id],
    )
    return bool(row[0])


def _delete_rows(store: Database, run_id: str) -> None:
    store.sql("undo fast read", "DELETE FROM run_results WHERE run_id = ?", [run_id])


def _insert_parsed(
    store: Database, item: _Planned, run: ParsedRun, progress: Progress, run_id: str | None = None
) -> tuple[str, str, int]:
    """Insert a parsed run in chunks (progress and crash-test hooks between chunks)."""
    run_id = run_id or item.run_id or run.tag
    check_id(run_id, f"{item.source}: run id", names_file=True)
    if item.run_id is None and store.has_run(run_id):
        raise StoreError(
            f"{item.source}: run {run_id!r} (tag {run.tag!r}) is already in {store.path}; "
            "import this file with --run-names file, or without --split-by-tag and with --name"
        )
    table = run.table.select(["query_id", "doc_id", "rank", "score"])
    progress.start(f"importing {item.source} ({run_id})", total=table.num_rows)
    written = 0
    for batch in table.to_batches(max_chunksize=CHUNK_ROWS):
        chunk = pa.Table.from_batches([batch])
        store.con.register("_chunk", chunk)
        try:
            store.con.execute(
                "INSERT INTO run_results SELECT ?, query_id, doc_id, rank, score FROM _chunk",
                [run_id],
            )
        finally:
            store.con.unregister("_chunk")
        written += chunk.num_rows
        faults.rows_written(written)
        progress.advance(chunk.num_rows)
    progress.finish()
    return run_id, run.tag, run.duplicates_dropped


def _record_run(
    store: Database, item: _Planned, run_id: str, tag: str, dedupe: str, dropped: int
) -> None:
    counts = store.one(
        "count run", "SELECT count(*), count(DISTINCT query_id) FROM run_results WHERE run_id = ?",
        [run_id],
    )
    store.one(
        "record run",
        "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            run_id, tag, item.meta.team, item.meta.description, item.source, item.sha256,
            utcnow(), counts[0], counts[1], item.meta.pooled, dedupe, dropped,
        ],
    )


def _summary(store: Database, run_id: str, source: str, dropped: int) -> ImportedRun:
    n_rows, n_topics = store.one(
        "run counts",
        "SELECT n_rows, n_topics FROM runs WHERE run_id = ?", [run_id]
    )
    return ImportedRun(run_id, source, "imported", n_rows, n_topics, dropped)


def _check_topics(store: Database, run_ids: list[str], strict: bool) -> list[str]:
    """Runs naming topics the store does not know: a warning, or an error with --strict."""
    if not run_ids:
        return []
    (known,) = store.one("count topics", "SELECT count(*) FROM topics")
    messages = []
    for run_id in run_ids:
        if known == 0:
            missing = store.con.execute(
                "SELECT DISTINCT query_id FROM run_results WHERE run_id = ? ORDER BY 1", [run_id]
            ).fetchall()
        else:
            missing = store.con.execute(
                "SELECT DISTINCT query_id FROM run_results WHERE run_id = ? AND query_id NOT IN "
                "(SELECT query_id FROM topics) ORDER BY 1",
                [run_id],
            ).fetchall()
        if missing:
            ids = in_topic_order(m[0] for m in missing)
            shown = ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")
            messages.append(f"run {run_id!r} has {len(ids)} topic(s) unknown to the store: {shown}")
    if messages and strict:
        raise StoreError(
            "nothing was imported (--strict):\n" + "\n".join(messages)
            + "\nimport the topics first with `pooling import topics`"
            + (f", or, if the runs write topic ids differently, {_MAP_HINT} and import again"
               if known else "")
        )
    if messages and known:
        messages.append(f"if a run writes topic ids differently from the store's topics, "
                        f"{_MAP_HINT} and put the run in again with `pooling runs replace "
                        "STORE RUN_ID FILE --topic-map FILE`")
    return messages


_MAP_HINT = "map them with --topic-map FILE (two columns a line: the id as written, the store's id)"


def _table_sha256(table: pa.Table) -> str:
    """Content checksum of an in-memory run (so importing the same table twice is caught)."""
    import pyarrow.ipc as ipc

    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()
