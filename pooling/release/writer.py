"""`pooling release STORE OUT/`: write a store's collection as a directory others can load.

Everything is written into a work directory beside OUT and renamed to OUT at the very end,
so an interrupted release leaves nothing under OUT; a work directory left by a release that
was killed is removed by the next one (`pooling.release.partial`). An existing OUT is
refused unless `force`.
Tables are streamed batch by batch, and runs one at a time, so memory stays flat.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pooling.errors import PoolingError
from pooling.release import layout, tables
from pooling.release.checksums import write_checksums
from pooling.release.options import DocsMode, ReleaseOptions, RunsMode
from pooling.release.partial import work_dir
from pooling.release.pseudonyms import released_names
from pooling.release.sinks import ParquetSink, TextSink, jsonl_sink, pump, tsv_sink
from pooling.release.topic_files import beir_query, irds_query, jsonl_topic, trec_topic
from pooling.store import faults
from pooling.store.core import Store
from pooling.terminal.progress import NoProgress, Progress

FORMAT = "pooling release"
FORMAT_VERSION = 1


class ReleaseError(PoolingError):
    """A release that cannot be written or read as asked."""


@dataclass(frozen=True)
class ReleaseSummary:
    """What a release holds: its directory, qrels versions, runs, topics and files."""

    path: Path
    qrels_versions: tuple[str, ...]
    default_qrels: str | None
    runs: tuple[str, ...]
    topics: int
    documents: int
    judgments: int
    files: int


def write_release(store: Store, out: str | os.PathLike[str], options: ReleaseOptions | None = None,
                  progress: Progress | None = None) -> ReleaseSummary:
    """Write the release of `store` to the directory `out` (see the module's docstring)."""
    options = options or ReleaseOptions()
    progress = progress or NoProgress()
    out = Path(out)
    if out.exists() and not options.force:
        raise ReleaseError(f"{out} exists; choose a new directory, or replace it with --force")
    versions = _chosen_versions(store, options.qrels)
    runs = _chosen_runs(store, options.runs)
    rounds = chosen_rounds(store, options.rounds, options.exclude_rounds)
    with work_dir(out) as work, tables.released_rounds(store, rounds):
        bundle = work / "release"
        bundle.mkdir(0o777)  # the mode any new directory gets (0755 under umask 022)
        summary = _write(store, bundle, versions, runs, options, progress)
        _move_into_place(bundle, out, work)
    return ReleaseSummary(out, *summary)


def chosen_rounds(store: Store, wanted: tuple[str, ...] | None, excluded: tuple[str, ...]
                  ) -> list[str]:
    """The rounds a release holds: `wanted` (None: every round) less `excluded`; a name that
    is not a round of the store is refused, listing the rounds."""
    every = [r for (r,) in store.sql("rounds", "SELECT round_id FROM rounds "
                                     "ORDER BY created_at, round_id").fetchall()]
    unknown = [r for r in (*(wanted or ()), *excluded) if r not in every]
    if unknown:
        raise ReleaseError(f"no round {unknown[0]!r} in the store; its rounds are "
                           f"{', '.join(every) or 'none'}")
    return [r for r in every if (wanted is None or r in wanted) and r not in excluded]


def _chosen_versions(store: Store, wanted: tuple[str, ...] | None) -> list[str]:
    every = store.qrels_versions()
    if wanted is None:
        return every
    for name in wanted:
        store.resolve_qrels(name)  # an unknown name is refused, listing the versions
    return [v for v in every if v in wanted]


def _chosen_runs(store: Store, mode: RunsMode) -> list[str]:
    if mode is RunsMode.none:
        return []
    rows = store.sql("runs", "SELECT run_id, pooled FROM runs ORDER BY run_id").fetchall()
    return [r for r, pooled in rows if mode is RunsMode.all or pooled]


def _unique_stems(names: list[str], kind: str) -> dict[str, str]:
    stems = {n: layout.file_stem(n) for n in names}
    seen: dict[str, str] = {}
    for name, stem in stems.items():
        if stem.lower() in seen:
            raise ReleaseError(f"{kind}s {seen[stem.lower()]!r} and {name!r} would share the file "
                               f"name {stem!r}; rename one before releasing")
        seen[stem.lower()] = name
    return stems


def _write(store: Store, root: Path, versions: list[str], runs: list[str],
           options: ReleaseOptions, progress: Progress) -> tuple[Any, ...]:
    from pooling.release.card import write_card
    from pooling.release.citation import write_citation
    from pooling.release.datasheet import write_datasheet

    qrels_stems = _unique_stems(versions, "qrels version")
    run_stems = _unique_stems(runs, "run")
    default = store.default_qrels() if store.default_qrels() in versions else None
    n_topics = _write_topics(store, root)
    sampled = _write_qrels(store, root, versions, qrels_stems)
    subtopics = _write_subtopic_qrels(store, root, versions, qrels_stems)
    n_docs = _write_documents(store, root, versions, options.documents)
    _write_runs(store, root, runs, run_stems, progress)
    faults.reached("release:pool")
    rounds = _write_pool(store, root)
    names = released_names(store)
    n_judgments, assessors = (_write_judgments(store, root, names) if options.judgments
                              else (0, []))
    manifest = _manifest(store, root, options, versions, qrels_stems, sampled, subtopics,
                         default, runs, run_stems, rounds, assessors, names, n_topics, n_docs)
    (root / layout.MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    progress.start("datasheet")
    write_datasheet(store, root, manifest, names, pool_bias=options.pool_bias,
                    process=options.process)
    write_citation(root, manifest)
    write_card(root, manifest)
    progress.finish()
    files = write_checksums(root)
    return (tuple(versions), default, tuple(runs), n_topics, n_docs, n_judgments, files)


def _write_topics(store: Store, root: Path) -> int:
    return pump(tables.with_source_names(tables.batches(store, "read topics", tables.TOPICS)),
                TextSink(root / layout.TOPICS_TREC, trec_topic),
                jsonl_sink(root / layout.TOPICS_JSONL, jsonl_topic),
                jsonl_sink(root / layout.BEIR_QUERIES, beir_query),
                TextSink(root / layout.IRDS_QUERIES, irds_query),
                ParquetSink(root / layout.PARQUET["topics"], tables.TOPICS_SCHEMA))


def _write_qrels(store: Store, root: Path, versions: list[str], stems: dict[str, str]
                 ) -> set[str]:
    """Each version as plain TREC qrels (no comment line: every peer reads it), as BEIR's
    TSV, and sampled versions also as sample_eval.pl's five columns; all versions in one
    Parquet file. Returns the sampled versions."""
    from pooling.store.sampled_qrels import export_sampled_qrels, is_sampled

    sampled = set()
    for version in versions:
        stem = stems[version]
        trec = root / layout.qrels_path(stem)
        trec.parent.mkdir(parents=True, exist_ok=True)
        query = ("SELECT query_id, doc_id, relevance FROM qrels WHERE version = ? "
                 "ORDER BY query_id, doc_id")
        pump(tables.batches(store, "read qrels", query, [version]),
             TextSink(trec, lambda r: f"{r['query_id']} 0 {r['doc_id']} {r['relevance']}\n"),
             TextSink(root / layout.beir_qrels_path(stem),
                      lambda r: f"{r['query_id']}\t{r['doc_id']}\t{r['relevance']}\n",
                      head="query-id\tcorpus-id\tscore\n"))
        if is_sampled(store, version):
            sampled.add(version)
            with open(root / layout.sampled_qrels_path(stem), "w", encoding="utf-8") as fh:
                export_sampled_qrels(store, fh, version)
    pump(tables.batches(store, "read qrels", tables.QRELS, [versions]),
         ParquetSink(root / layout.PARQUET["qrels"], tables.QRELS_SCHEMA))
    if sampled:
        pump(tables.batches(store, "read strata", tables.QRELS_STRATA, [sorted(sampled)]),
             ParquetSink(root / layout.PARQUET["qrels_strata"], tables.QRELS_STRATA_SCHEMA))
    return sampled


def _write_subtopic_qrels(store: Store, root: Path, versions: list[str],
                          stems: dict[str, str]) -> set[str]:
    """Each version with subtopic rows also as ndeval's four columns (query_id subtopic
    doc_id relevance, by topic, subtopic and document), the file `pooling import release`
    restores them from. Returns those versions."""
    from pooling.formats.subtopic_qrels import write_subtopic_qrels
    from pooling.store.qrels import subtopic_qrels_table

    having = {r[0] for r in store.sql("subtopic versions",
                                      "SELECT DISTINCT version FROM subtopic_qrels").fetchall()}
    chosen = [v for v in versions if v in having]
    for version in chosen:
        with open(root / layout.subtopic_qrels_path(stems[version]), "w",
                  encoding="utf-8") as fh:
            write_subtopic_qrels(subtopic_qrels_table(store, version), fh)
    return set(chosen)


def _write_documents(store: Store, root: Path, versions: list[str], mode: DocsMode) -> int:
    """The documents (ids, or with `text` their texts) as Parquet and as a corpus for BEIR
    and ir_datasets, all three listing the same ids: the store's documents, then judged
    documents the store has no row for (a store of qrels and runs only has no rows at all).
    Returns how many documents that is."""
    if mode is DocsMode.none:
        return 0

    def corpus_sinks() -> list[Any]:
        return [jsonl_sink(root / layout.BEIR_CORPUS,
                           lambda r: {"_id": r["doc_id"], "title": r["title"] or "",
                                      "text": r["text"] or ""}),
                TextSink(root / layout.IRDS_DOCS,
                         lambda r: f"{r['doc_id']}\t{' '.join((r['text'] or '').split())}\n")]

    query = tables.DOCUMENT_TEXTS if mode is DocsMode.text else tables.DOCUMENT_IDS
    every = [*corpus_sinks(), ParquetSink(root / layout.PARQUET["documents"],
                                          tables.DOCUMENTS_SCHEMA)]
    n = pump(tables.batches(store, "read documents", query), *_Holding(every).sinks())
    return n + pump(tables.batches(store, "judged documents", tables.JUDGED_WITHOUT_ROW,
                                   [versions]), *every)


class _Holding:
    """Sinks passed to a first `pump` without being closed by it (a second pump adds more)."""

    def __init__(self, sinks: list[Any]):
        self._sinks = sinks

    def sinks(self) -> list[Any]:
        return [_Unclosed(s) for s in self._sinks]


class _Unclosed:
    def __init__(self, sink: Any):
        self._sink = sink

    def write(self, batch: pa.RecordBatch) -> None:
        self._sink.write(batch)

    def close(self) -> None:
        pass


def _write_runs(store: Store, root: Path, runs: list[str], stems: dict[str, str],
                progress: Progress) -> None:
    """Each run as a TREC run file and all of them in one Parquet file, one run at a time."""
    from pooling.formats.trec_run import write_trec_run

    if not runs:
        return
    parquet = ParquetSink(root / layout.PARQUET["runs"], tables.RUNS_SCHEMA)
    tags = dict(store.sql("run tags", "SELECT run_id, tag FROM runs").fetchall())
    progress.start("runs", total=len(runs))
    try:
        for run_id in runs:
            table = pa.Table.from_batches(list(tables.run_batches(store, run_id)),
                                          schema=tables.RUNS_SCHEMA)
            for batch in table.to_batches():
                parquet.write(batch)
            path = root / layout.run_path(stems[run_id])
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                write_trec_run(table.drop_columns(["run_id"]), fh, tag=tags[run_id])
            progress.advance()
    finally:
        parquet.close()
        progress.finish()


def _write_pool(store: Store, root: Path) -> list[dict[str, Any]]:
    """The rounds (strategy, parameters, seed, pooled runs), the pool entries, strata and
    which run contributed which entry at which rank. Returns the rounds."""
    rounds = _rows(store, "SELECT round_id, strategy, params, seed, grades, pooled_runs, "
                   "created_at, adaptive, candidate_depth, topics FROM rounds "
                   f"WHERE round_id IN (SELECT round_id FROM {tables.ROUNDS_TABLE}) "
                   "ORDER BY created_at, round_id")
    for r in rounds:
        r["params"] = json.loads(r["params"]) if r["params"] else None
    if not rounds:
        return rounds
    (root / layout.POOL_DIR).mkdir(parents=True, exist_ok=True)
    (root / layout.POOL_ROUNDS).write_text(json.dumps(rounds, indent=1, default=_json) + "\n",
                                           encoding="utf-8")
    pump(tables.batches(store, "read pool", tables.POOL),
         tsv_sink(root / layout.POOL_ENTRIES, tables.POOL_SCHEMA.names),
         ParquetSink(root / layout.PARQUET["pool"], tables.POOL_SCHEMA))
    if store.one("strata?", "SELECT 1 FROM pool_strata WHERE round_id IN (SELECT round_id "
                 f"FROM {tables.ROUNDS_TABLE}) LIMIT 1"):
        pump(tables.batches(store, "read pool strata", tables.POOL_STRATA),
             ParquetSink(root / layout.PARQUET["pool_strata"], tables.POOL_STRATA_SCHEMA))
    pump(tables.batches(store, "pool contributions", tables.CONTRIBUTIONS),
         tsv_sink(root / layout.POOL_CONTRIBUTIONS, tables.CONTRIBUTIONS_SCHEMA.names),
         ParquetSink(root / layout.PARQUET["contributions"], tables.CONTRIBUTIONS_SCHEMA))
    return rounds


def _write_judgments(store: Store, root: Path, names: dict[str, str]
                     ) -> tuple[int, list[dict[str, Any]]]:
    """The judgment history, people under their pseudonyms, and who judged: people by
    pseudonym only, automatic judges by backend, model and prompt hash."""
    if not store.one("judgments?", f"SELECT 1 FROM judgments WHERE {tables.RELEASED_JUDGMENT} "
                     "LIMIT 1"):
        return 0, []
    mapping = pa.table({"assessor_id": list(names), "name": list(names.values())})
    store.con.register(tables.NAMES_TABLE, mapping)
    try:
        n = pump(tables.batches(store, "read judgments", tables.JUDGMENTS),
                 tsv_sink(root / layout.JUDGMENTS, tables.JUDGMENTS_SCHEMA.names),
                 ParquetSink(root / layout.PARQUET["judgments"], tables.JUDGMENTS_SCHEMA))
    finally:
        store.con.unregister(tables.NAMES_TABLE)
    judged = (f"SELECT DISTINCT assessor_id FROM judgments WHERE {tables.RELEASED_JUDGMENT}")
    rows = _rows(store, "SELECT assessor_id, coalesce(kind, 'person') AS kind, backend, model, "
                 f"prompt_sha256 FROM assessors WHERE assessor_id IN ({judged})")
    known = {r["assessor_id"] for r in rows}
    rows += [{"assessor_id": a, "kind": "person", "backend": None, "model": None,
              "prompt_sha256": None} for a in sorted(
                  {r[0] for r in store.sql("judging ids", judged).fetchall()} - known)]
    assessors = sorted(({"name": names[r["assessor_id"]], "kind": r["kind"],
                         "backend": r["backend"], "model": r["model"],
                         "prompt_sha256": r["prompt_sha256"]} for r in rows),
                       key=lambda r: (r["kind"], r["name"]))
    with open(root / layout.JUDGES, "w", encoding="utf-8") as fh:
        fh.write("name\tkind\tbackend\tmodel\tprompt_sha256\n")
        fh.writelines("\t".join(r[k] or "" for k in ("name", "kind", "backend", "model",
                                                       "prompt_sha256")) + "\n"
                      for r in assessors)
    return n, assessors


def _manifest(store: Store, root: Path, options: ReleaseOptions, versions: list[str], qrels_stems: dict,
              sampled: set[str], subtopics: set[str], default: str | None, runs: list[str], run_stems: dict,
              rounds: list[dict], assessors: list[dict], names: dict[str, str], n_topics: int,
              n_docs: int) -> dict[str, Any]:
    qrels = []
    for version in versions:
        info = store.qrels_info(version)
        info["judges"] = [names.get(j, j) for j in info.get("judges") or []] or None
        info["params"] = json.loads(info["params"]) if info.get("params") else None
        info["grades"] = list(info["grades"])
        info["source"] = layout.source_name(info["source"])
        info["default"] = version == default
        info["file"] = layout.qrels_path(qrels_stems[version])
        info["beir_file"] = layout.beir_qrels_path(qrels_stems[version])
        info["sampled_file"] = (layout.sampled_qrels_path(qrels_stems[version])
                                if version in sampled else None)
        info["subtopic_file"] = (layout.subtopic_qrels_path(qrels_stems[version])
                                 if version in subtopics else None)
        qrels.append(info)
    run_rows = _rows(store, "SELECT run_id, tag, team, description, sha256, imported_at, n_rows, "
                     "n_topics, pooled, dedupe, duplicates_dropped FROM runs "
                     "WHERE run_id IN (SELECT UNNEST(?::VARCHAR[])) ORDER BY run_id", [runs])
    for r in run_rows:
        r["file"] = layout.run_path(run_stems[r["run_id"]])
    subsets: dict[str, list[str]] = {}
    for name, query_id in store.sql("subsets", "SELECT name, query_id FROM topic_subsets "
                                    "ORDER BY name, query_id").fetchall():
        subsets.setdefault(name, []).append(query_id)
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "title": options.title or store.path.name.split(".")[0],
        "version": options.version,
        "authors": list(options.authors),
        "license": options.license,
        "released_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "store_schema": store.schema_version(),
        "topics": n_topics,
        "documents": {"mode": options.documents.value, "rows": n_docs},
        "runs_mode": options.runs.value,
        "judgments": options.judgments,
        "default_qrels": default,
        "qrels_versions": qrels,
        "runs": run_rows,
        "rounds": rounds,
        "assessors": assessors,
        "topic_subsets": subsets,
        "files": {"topics": [layout.TOPICS_TREC, layout.TOPICS_JSONL],
                  "parquet": {k: v for k, v in layout.PARQUET.items() if (root / v).exists()}},
    }
    manifest["parquet_rows"] = {k: pq.ParquetFile(root / v).metadata.num_rows
                                for k, v in manifest["files"]["parquet"].items()}
    return json.loads(json.dumps(manifest, default=_json))


def _rows(store: Store, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = store.sql("read rows", query, params)
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]


def _json(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _move_into_place(bundle: Path, out: Path, work: Path) -> None:
    """Rename the finished directory to `out`; an existing `out` (with force) is moved into
    the work directory first, which is removed (or swept by a later run) once the new one is
    in place."""
    if out.exists() or out.is_symlink():
        os.replace(out, work / "replaced")
    os.replace(bundle, out)
