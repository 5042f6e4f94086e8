"""`pooling import release STORE DIR`: rebuild a store from a release.

The checksums are checked first, every file, before anything is read: a changed file is
refused, naming it, and nothing is written. Only the regular files SHA256SUMS lists are ever
read (`CheckedRelease`): the manifest names files, never paths or patterns, and Parquet is
read by Arrow from the checked file itself. The Parquet tables must agree with the TREC
files (`pooling.release.forms`). The store is built in a work directory beside STORE
(`pooling.release.partial`) and linked to STORE only once it is complete, so a failure, even
a SIGKILL, leaves no store behind. What
comes back is what the release holds: topics, documents (ids or texts), runs with their
exact scores, every qrels version with its name, rule, grades, date and default mark, sampled
versions' strata, subtopic versions' rows (read from their ndeval files), rounds with their
pools, and the judgment history under pseudonyms (people come back as revoked assessors: they
can log in to nothing).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from pooling.errors import StoreError
from pooling.judging.item_types import recorded_item_type
from pooling.release import layout
from pooling.release.checksums import CheckedRelease, check_release, file_sha256
from pooling.release.forms import check_forms_agree
from pooling.release.partial import work_dir
from pooling.release.writer import FORMAT, FORMAT_VERSION, ReleaseError
from pooling.store import faults
from pooling.store.core import Store, utcnow


@dataclass(frozen=True)
class ReleaseImport:
    """What a rebuilt store holds."""

    store: Path
    title: str
    qrels_versions: tuple[str, ...]
    default_qrels: str | None
    runs: int
    topics: int
    judgments: int
    files_checked: int


def import_release(release: str | os.PathLike[str], store_path: str | os.PathLike[str]
                   ) -> ReleaseImport:
    """Check the release at `release` and rebuild its store as the new file `store_path`."""
    root = Path(release)
    target = Path(store_path)
    if not root.is_dir():
        raise ReleaseError(f"{root} is not a directory; give the directory `pooling release` "
                           "wrote")
    if target.exists():
        raise StoreError(f"{target} already exists; a release is imported into a new store, "
                         "give a new file name")
    checked = check_release(root)
    manifest = _manifest(checked)
    with work_dir(target) as work:
        with Store.create(work / "store.duckdb") as store:
            counts = _fill(store, checked, manifest)
            store.sql("checkpoint", "CHECKPOINT")
        _keep(work / "store.duckdb", target)
    return ReleaseImport(target, manifest["title"],
                         tuple(v["name"] for v in manifest["qrels_versions"]),
                         manifest["default_qrels"], len(manifest["runs"]), counts["topics"],
                         counts["judgments"], len(checked.files))


def _keep(built: Path, target: Path) -> None:
    """Put the finished store at `target`: a hard link, which never replaces a store made
    meanwhile; where the file system has no hard links, a rename after one more check."""
    try:
        os.link(built, target)
    except FileExistsError:
        raise StoreError(f"{target} was created while the release was imported; nothing was "
                         "replaced, give a new file name") from None
    except OSError:
        if target.exists():
            raise StoreError(f"{target} was created while the release was imported; nothing "
                             "was replaced, give a new file name") from None
        os.replace(built, target)


def _manifest(checked: CheckedRelease) -> dict[str, Any]:
    root = checked.root
    try:
        manifest = json.loads(checked.path(layout.MANIFEST, "the manifest")
                              .read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"{root / layout.MANIFEST} cannot be read ({exc}); release the "
                           "store again") from exc
    if manifest.get("format") != FORMAT:
        raise ReleaseError(f"{root} is not a pooling release ({layout.MANIFEST} says "
                           f"format {manifest.get('format')!r})")
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise ReleaseError(f"{root} was written by a newer pooling (release format "
                           f"{manifest['format_version']}); upgrade pooling to import it")
    for name, relative in manifest["files"]["parquet"].items():
        if layout.PARQUET.get(name) != relative:
            raise ReleaseError(f"{root / layout.MANIFEST}: the Parquet table {name!r} is given as "
                               f"{relative!r}; a release names its tables' files as "
                               f"`pooling release` writes them ({layout.PARQUET.get(name)!r}), "
                               "never paths or patterns; fetch the release again")
    return manifest


@contextmanager
def _parquet(store: Store, checked: CheckedRelease, m: dict[str, Any], name: str
             ) -> Iterator[str | None]:
    """A released Parquet table registered as a view for the duration (its name), None when
    it was not released. Read by Arrow from the checked file itself: no glob, no path
    outside the release."""
    import pyarrow.dataset as ds

    relative = m["files"]["parquet"].get(name)
    if relative is None:
        yield None
        return
    view = f"_released_{name}"
    store.con.register(view, ds.dataset(str(checked.path(relative, f"table {name}")),
                                        format="parquet"))
    try:
        yield view
    finally:
        store.con.unregister(view)


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _append_history(store: Store, path: Path) -> None:
    """The released judgment history, in its order, through the one judgment writer
    (`pooling.judging.judgments.insert`): each stretch of judgments made at one instant is
    one call at that instant, so every judgment keeps its time and its place in the order
    (the store numbers them anew from its own sequence)."""
    import pyarrow.parquet as pq

    from pooling.judging.history import Judgment
    from pooling.judging.judgments import insert

    stretch: list[Judgment] = []
    at = None
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1 << 16):
        for row in batch.to_pylist():
            if stretch and row["judged_at"] != at:
                insert(store.con, stretch, at)
                stretch = []
            at = row["judged_at"]
            stretch.append(Judgment(
                round_id=row["round_id"], assessor_id=row["assessor"], query_id=row["query_id"],
                doc_id=row["doc_id"], grade=row["grade"], kind=row["kind"],
                seconds=row["seconds"], submission_id=row["submission_id"],
                probability=row["probability"], rationale=row["rationale"],
                part=row.get("subtopic")))  # absent from releases before subtopics
    if stretch:
        insert(store.con, stretch, at)


def _insert_subtopic_rows(store: Store, path: Path, version: str) -> None:
    """A version's subtopic rows, read back from its ndeval file (its plain rows come with
    the other qrels)."""
    from pooling.formats.subtopic_qrels import read_subtopic_qrels

    table = read_subtopic_qrels(path).select(["query_id", "subtopic", "doc_id", "relevance"])
    store.con.register("_subtopic_rows", table)
    try:
        store.sql("subtopic qrels", "INSERT INTO subtopic_qrels SELECT ?, query_id, subtopic, "
                  "doc_id, relevance FROM _subtopic_rows", [version])
    finally:
        store.con.unregister("_subtopic_rows")


def _fill(store: Store, checked: CheckedRelease, m: dict[str, Any]) -> dict[str, int]:
    now = utcnow()
    root = checked.root
    with store.transaction():
        with _parquet(store, checked, m, "topics") as p:
            if p is not None:
                store.sql("topics", "INSERT INTO topics SELECT query_id, title, description, "
                          f"narrative, extra, source FROM {p}")
        with _parquet(store, checked, m, "documents") as p:
            if p is not None:
                store.sql("documents", "INSERT INTO documents SELECT doc_id, title, text, url, "
                          f"NULL, 'release' FROM {p}")
        for r in m["runs"]:
            store.sql("run", "INSERT INTO runs (run_id, tag, team, description, source, sha256, "
                      "imported_at, n_rows, n_topics, pooled, dedupe, duplicates_dropped) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [r["run_id"], r["tag"], r["team"], r["description"],
                       f"release:{r['file']}", r["sha256"], _time(r["imported_at"]),
                       r["n_rows"], r["n_topics"], r["pooled"], r["dedupe"],
                       r["duplicates_dropped"]])
        with _parquet(store, checked, m, "runs") as p:
            if p is not None:
                store.sql("run results", "INSERT INTO run_results SELECT run_id, query_id, "
                          f"doc_id, rank, score FROM {p}")
        for v in m["qrels_versions"]:
            store.sql("qrels version", "INSERT INTO qrels_versions (name, created_at, method, "
                      "source, sha256, grades, relevance_level, n_rows, n_topics, params, "
                      "judges) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [v["name"], _time(v["created_at"]), v["method"], v["source"], v["sha256"],
                       v["grades"], v["relevance_level"], v["n_rows"], v["n_topics"],
                       json.dumps(v["params"]) if v["params"] is not None else None,
                       v["judges"]])
        for table, name in (("qrels", "qrels"), ("qrels_strata", "qrels_strata"),
                            ("pool_entries", "pool"), ("pool_strata", "pool_strata")):
            with _parquet(store, checked, m, name) as p:
                if p is not None:
                    store.sql(table, f"INSERT INTO {table} SELECT * FROM {p}")
        for v in m["qrels_versions"]:
            if v.get("subtopic_file"):
                _insert_subtopic_rows(store, checked.path(v["subtopic_file"],
                                                          f"qrels version {v['name']!r}"),
                                      v["name"])
        if m["default_qrels"]:
            store.sql("default qrels", "INSERT OR REPLACE INTO store_meta VALUES "
                      "('default_qrels', ?)", [m["default_qrels"]])
        for r in m["rounds"]:
            store.sql("round", "INSERT INTO rounds (round_id, strategy, params, seed, grades, "
                      "pooled_runs, created_at, adaptive, candidate_depth, topics, item_type) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [r["round_id"], r["strategy"],
                       json.dumps(r["params"]) if r["params"] is not None else None, r["seed"],
                       r["grades"], r["pooled_runs"], _time(r["created_at"]), r["adaptive"],
                       r["candidate_depth"], r["topics"],
                       r.get("item_type") or recorded_item_type(r["params"] or {})])
        for a in m["assessors"]:
            store.sql("assessor", "INSERT INTO assessors (assessor_id, name, role, token_sha256, "
                      "created_at, kind, backend, model, prompt_sha256, revoked_at) "
                      "VALUES (?, ?, 'assessor', '', ?, ?, ?, ?, ?, ?)",
                      [a["name"], a["name"], now, a["kind"], a["backend"], a["model"],
                       a["prompt_sha256"], now])
        faults.reached("import-release:judgments")
        if (relative := m["files"]["parquet"].get("judgments")) is not None:
            _append_history(store, checked.path(relative, "table judgments"))
        subsets = m.get("topic_subsets") or {}
        if subsets:
            rows = [(name, q) for name, ids in subsets.items() for q in ids]
            store.con.register("_subsets", pa.table({"name": [r[0] for r in rows],
                                                     "query_id": [r[1] for r in rows]}))
            try:
                store.sql("topic subsets", "INSERT INTO topic_subsets SELECT * FROM _subsets")
            finally:
                store.con.unregister("_subsets")
        store.sql("record import", "INSERT INTO imports (sha256, kind, source, target, "
                  "imported_at, details) VALUES (?, 'release', ?, ?, ?, ?)",
                  [file_sha256(root / layout.CHECKSUMS), str(root), m["title"], now,
                   json.dumps({"release_version": m["version"]})])
        check_forms_agree(store, checked, m)
    topics = store.one("count topics", "SELECT count(*) FROM topics")
    judgments = store.one("count judgments", "SELECT count(*) FROM judgments")
    return {"topics": int(topics[0]) if topics else 0,
            "judgments": int(judgments[0]) if judgments else 0}
