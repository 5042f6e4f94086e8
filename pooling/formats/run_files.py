"""Reading run files the same way in every command: naming, duplicates, tags and topic ids.

`eval`, `curve`, `simulate` and `import runs` read runs through `read_runs` with one set of
options (`RunReading`): how repeated documents are handled (`--dedupe`), how runs are named
(by tag, by file name, or by a `--meta` table), whether a file with several tags is several
runs (`--split-by-tag`) and which topic ids mean the same topic (`--topic-map`). Two runs
with one name are refused, or, where names only label output (`eval`, `curve`), runs whose
tags collide are named by their files instead (`distinct_run_names`). The parse
itself has two dialects: `trec_eval` (its lenient reading, for the evaluation commands) and
`strict` (every line checked, for the store and replays).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, PoolingError, Problem
from pooling.formats.source import (
    PathLike,
    display_name,
    open_decompressed,
    open_file,
    strip_compression_suffix,
)
from pooling.formats.topic_map import MappedCount, TopicMap
from pooling.formats.trec_eval_text import parse_run_rows
from pooling.formats.trec_run import Dedupe, ParsedRun, apply_dedupe, parse_trec_run

RunNames = Literal["tag", "file"]
Dialect = Literal["strict", "trec_eval"]
# Two runs with one name: refuse them, or name runs whose tags collide by their files.
SameNames = Literal["error", "by_file"]
# File name endings of run files, dropped (one, in any case) when runs are named by file; the
# --run-names row of docs/store.md lists them (tests/formats/test_run_reading.py checks it).
RUN_SUFFIXES = (".run", ".runs", ".txt", ".trec", ".res", ".result", ".results", ".out", ".exp",
                ".tsv")


class RunNameError(PoolingError):
    """Two runs would get the same name, or a file is missing from the --meta table."""


@dataclass(frozen=True)
class RunMeta:
    """What a campaign knows about a run beyond its file: name, team, description, pooled."""

    run_id: str | None = None
    team: str | None = None
    description: str | None = None
    pooled: bool | None = None


@dataclass(frozen=True)
class RunReading:
    """How run files are read; the same options in every command that reads them.

    dedupe: 'error' refuses a repeated (query_id, doc_id); 'first' keeps its first line.
    run_names: 'tag' (the run tag; trec_eval's choice) or 'file' (the file name without
    `.gz` and a run suffix). A `meta` table's run_id wins over both.
    split_by_tag: a file with several tags is one run per tag (else: trec_eval takes it as
    one run named by the last tag; the strict dialect refuses it).
    topic_map: ids as written -> canonical ids, applied before the duplicate check.
    """

    dedupe: Dedupe = "error"
    run_names: RunNames = "tag"
    meta: dict[str, RunMeta] | None = None
    split_by_tag: bool = False
    topic_map: TopicMap | None = None

    def __post_init__(self) -> None:
        if self.dedupe not in ("error", "first"):
            raise PoolingError(f"--dedupe takes 'error' or 'first', got {self.dedupe!r}")
        if self.run_names not in ("tag", "file"):
            raise PoolingError(f"--run-names takes 'tag' or 'file', got {self.run_names!r}")

    @property
    def is_plain(self) -> bool:
        """True when every option has its default (trec_eval's own reading)."""
        return self == RunReading()

    def meta_for(self, path: PathLike) -> RunMeta | None:
        """The --meta row of a file (by its resolved path, else by its bare name)."""
        if self.meta is None or str(path) == "-":
            return None
        p = Path(path)
        return self.meta.get(str(p.resolve())) or self.meta.get(p.name)


@dataclass(frozen=True)
class NamedRun:
    """One run read from a file: its name, tag, source and rows in file order.

    table: query_id, doc_id, score, tag, line (+ rank in the strict dialect).
    """

    run_id: str
    tag: str
    source: str
    table: pa.Table
    duplicates_dropped: int = 0
    topics_mapped: dict[str, str] = field(default_factory=dict)
    meta: RunMeta = RunMeta()


@dataclass
class RunSet:
    """The runs of one call and what the options did to them (for notes on the terminal)."""

    runs: list[NamedRun]
    mapped: MappedCount = field(default_factory=MappedCount)
    renamed: list[str] = field(default_factory=list)  # notes from distinct_run_names

    def notes(self, reading: RunReading, *, trec_eval: bool = False) -> list[str]:
        """One line per thing the options changed, worth showing beside the results."""
        out = []
        if reading.dedupe == "first":
            dropped = [(r.run_id, r.duplicates_dropped) for r in self.runs if r.duplicates_dropped]
            refuses = " (trec_eval refuses repeated documents)" if trec_eval else ""
            if dropped:
                out += [f"--dedupe first{refuses}: run {run_id} kept the first of repeated "
                        f"documents, {n} line(s) dropped" for run_id, n in dropped]
            else:
                out.append(f"--dedupe first{refuses}: no run had repeated documents")
        out += self.mapped.notes()
        out += self.renamed
        return out


def file_run_name(path: PathLike) -> str:
    """A run's name from its file: the file name without a compression ending (`.gz`,
    `.bz2`, `.xz`, `.zst`) and one run suffix (RUN_SUFFIXES, in any case)."""
    name = strip_compression_suffix(Path(str(path)).name)
    for suffix in RUN_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def run_name(path: PathLike, tag: str, reading: RunReading, *, several_tags: bool = False) -> str:
    """The name a run read from `path` with `tag` gets under `reading` (see RunReading)."""
    meta = reading.meta_for(path)
    if meta is not None and meta.run_id and not several_tags:
        return meta.run_id
    if reading.run_names == "file":
        base = file_run_name(path) if str(path) != "-" else "stdin"
        return f"{base}:{tag}" if several_tags else base
    return tag


def distinct_run_names(
    runs: Sequence[tuple[PathLike, str, bool]], reading: RunReading
) -> tuple[list[str], list[str]]:
    """(names, notes) for runs given as (path, tag, several_tags): each run's name under
    `reading`, except that runs of different files whose names collide are named by file as
    `run_names="file"` names them (a --meta run_id still wins; one file given twice is one
    run and keeps its name). One note per shared name says what happened."""
    names = [run_name(path, tag, reading, several_tags=several) for path, tag, several in runs]
    counts = Counter(name for name, _ in dict.fromkeys(
        (name, same_file_key(path)) for name, (path, _, _) in zip(names, runs, strict=True)))
    by_file = replace(reading, run_names="file")
    out = [
        run_name(path, tag, by_file, several_tags=several) if counts[name] > 1 else name
        for (path, tag, several), name in zip(runs, names, strict=True)
    ]
    notes = []
    for shared in (name for name, n in counts.items() if n > 1):
        renamed = list(dict.fromkeys(new for old, new in zip(names, out, strict=True) if old == shared))
        notes.append(f"{len(renamed)} runs share the name {shared!r}; they are named after "
                     f"their files instead: {', '.join(renamed)}")
    return out, notes


def same_file_key(path: PathLike) -> str:
    """What tells files apart: the resolved path (stdin is `-`)."""
    return "-" if str(path) == "-" else str(Path(path).resolve())


def check_meta_listed(paths: Sequence[PathLike], reading: RunReading) -> None:
    """Every file must have a row in the --meta table when one is given."""
    if reading.meta is None:
        return
    missing = [display_name(p) for p in paths if reading.meta_for(p) is None]
    if missing:
        raise RunNameError(
            "\n".join(f"{m}: not listed in the --meta file (add a line for it)" for m in missing)
        )


def check_unique_names(runs: Sequence[tuple[str, str]]) -> None:
    """(run_id, source) pairs: refuse two runs with one name, naming both files."""
    first: dict[str, str] = {}
    problems = []
    for run_id, source in runs:
        if run_id in first:
            problems.append(f"{first[run_id]} and {source} would both be run {run_id!r}")
        else:
            first[run_id] = source
    if problems:
        raise RunNameError(
            "\n".join(problems)
            + "\nName runs after their files with --run-names file, or give each file a "
            "run_id in a --meta table."
        )


def check_distinct_files(runs: Sequence[tuple[str, str, PathLike]]) -> None:
    """(run_id, source, path) triples: refuse two files with one name; one file given twice
    is one run and may keep its name."""
    first: dict[tuple[str, str], str] = {}
    for run_id, source, path in runs:
        first.setdefault((run_id, same_file_key(path)), source)
    check_unique_names([(run_id, source) for (run_id, _), source in first.items()])


def read_runs(paths: Sequence[PathLike], reading: RunReading = RunReading(),
              dialect: Dialect = "strict", *, same_names: SameNames = "error") -> RunSet:
    """Read run files under `reading`: every command's one way in (see the module docstring).

    same_names: two runs with one name are an error ("error"), or runs whose names collide
    are named by their files first ("by_file", see `distinct_run_names`).
    """
    check_meta_listed(paths, reading)
    result = RunSet([])
    origins: list[tuple[PathLike, str, bool]] = []
    for path in paths:
        runs = read_run_file(path, reading, dialect)
        for run in runs:
            result.runs.append(run)
            result.mapped.add(run.source, run.topics_mapped)
            origins.append((path, run.tag, len(runs) > 1))
    if same_names == "by_file":
        names, result.renamed = distinct_run_names(origins, reading)
        result.runs = [replace(r, run_id=n) for r, n in zip(result.runs, names, strict=True)]
        check_distinct_files([(r.run_id, r.source, path)
                              for r, (path, _, _) in zip(result.runs, origins, strict=True)])
        return result
    check_unique_names([(r.run_id, r.source) for r in result.runs])
    return result


def read_run_file(path: PathLike, reading: RunReading, dialect: Dialect = "strict") -> list[NamedRun]:
    """One file's runs (one, or one per tag with split_by_tag), options applied."""
    source = display_name(path)
    if dialect == "trec_eval":
        parsed = _trec_eval_runs(path, source, reading)
    else:
        parsed = parse_trec_run(
            path, source, split_by_tag=reading.split_by_tag, dedupe=reading.dedupe,
            topic_map=reading.topic_map,
        )
    several = len(parsed) > 1
    meta = reading.meta_for(path) or RunMeta()
    return [
        NamedRun(run_name(path, p.tag, reading, several_tags=several), p.tag, source, p.table,
                 p.duplicates_dropped, p.topics_mapped, meta)
        for p in parsed
    ]


def _trec_eval_runs(data: PathLike, source: str, reading: RunReading) -> list[ParsedRun]:
    """trec_eval's lenient parse, then the options: one run (tag of the last line), or per tag."""
    table = parse_run_rows(data, source)
    used: dict[str, str] = {}
    if reading.topic_map is not None:
        table, used = reading.topic_map.apply(table)
    if reading.split_by_tag:
        tags = pc.unique(table["tag"]).to_pylist()
        parts = [(t, table.filter(pc.equal(table["tag"], t))) for t in tags]
    else:
        parts = [(table["tag"][-1].as_py(), table)]
    out = []
    for tag, part in parts:
        kept, dropped = part, 0
        if reading.dedupe == "first":
            kept, dropped = apply_dedupe(part, source, "first")
        out.append(ParsedRun(tag, kept, source, dropped, used))
    return out


def read_run_meta(path: PathLike) -> dict[str, RunMeta]:
    """Read a runs.tsv (columns: file, run_id, team, description, optional pooled yes/no)."""
    source = display_name(path)
    problems: list[Problem] = []
    out: dict[str, RunMeta] = {}
    try:
        with io.TextIOWrapper(open_decompressed(open_file(path), source), encoding="utf-8",
                              newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t")
            if not reader.fieldnames or "file" not in reader.fieldnames:
                raise FormatError(
                    [Problem(source, 1, "header must name the columns: file, run_id, team, "
                             "description, and optionally pooled")]
                )
            for number, row in enumerate(reader, start=2):
                pooled_text = (row.get("pooled") or "").strip().lower()
                if pooled_text not in ("", "yes", "no", "true", "false", "1", "0"):
                    problems.append(Problem(source, number, f"pooled must be yes or no, found {pooled_text!r}"))
                    continue
                file_name = (row.get("file") or "").strip()
                if not file_name:
                    problems.append(Problem(source, number, "the file column is empty"))
                    continue
                if file_name in out:
                    problems.append(Problem(source, number, f"file {file_name!r} is listed twice"))
                    continue
                out[file_name] = RunMeta(
                    run_id=(row.get("run_id") or "").strip() or None,
                    team=(row.get("team") or "").strip() or None,
                    description=(row.get("description") or "").strip() or None,
                    pooled=None if not pooled_text else pooled_text in ("yes", "true", "1"),
                )
    except UnicodeDecodeError as exc:
        raise FormatError([Problem(source, None, f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); "
                                   "save the table as UTF-8 TSV")]) from None
    if problems:
        raise FormatError(problems)
    # Files are named relative to the meta file; a bare name also matches by file name.
    base = Path(path).resolve().parent
    keyed = {str((base / name).resolve()): m for name, m in out.items()}
    names = [Path(name).name for name in out]
    keyed.update({Path(n).name: m for n, m in out.items() if names.count(Path(n).name) == 1})
    return keyed
