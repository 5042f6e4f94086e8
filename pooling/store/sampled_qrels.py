"""Sampled qrels versions: qrels versions that know the strata their judgments were drawn from.

A sampled version is a qrels version (its judged pairs are rows of `qrels`, so every command
that reads plain qrels reads it) plus, in `qrels_strata`, every pooled pair's stratum. A pair
with a stratum and no judged row was pooled but not drawn for judging: it is -1 in the
five-column file NIST's sample_eval.pl reads (`pooling.formats.sampled_qrels`), and the
inferred measures count it through its stratum's judged share.

Import and save are one transaction each: the judged rows, the strata and the version's
record are stored together or not at all.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import StoreError
from pooling.formats.ids import check_id
from pooling.formats.sampled_qrels import (
    UNSAMPLED,
    parse_sampled_qrels,
    stratum_counts,
    write_sampled_qrels,
)
from pooling.formats.source import PathLike
from pooling.output_files import write_text
from pooling.store.database import Database
from pooling.store.qrels import (
    QrelsImport,
    check_known_topics,
    new_qrels_file,
    qrels_provenance,
    save_qrels,
    sidecar_path,
)

SAMPLED_FORMAT = "sampled qrels: query_id iter doc_id stratum relevance (-1: pooled, not sampled)"


@dataclass(frozen=True)
class SampleSize:
    """How big a sampled version's sample is: judged and pooled pairs, topics, and per
    stratum (in text order) its pooled and judged pairs over all topics."""

    judged: int
    pooled: int
    topics: int
    strata: tuple[tuple[str, int, int], ...]  # (stratum, pooled, judged)

    def describe(self) -> str:
        """One phrase: `120 judged of 400 pooled pairs (30%) on 5 topics; strata 1: 50/50, ...`."""
        share = f" ({self.judged / self.pooled:.0%})" if self.pooled else ""
        strata = ", ".join(f"{s}: {j}/{p}" for s, p, j in self.strata)
        return (f"{self.judged:,} judged of {self.pooled:,} pooled pairs{share} on "
                f"{self.topics:,} topics; judged/pooled per stratum {strata}")


def is_sampled(store: Database, version: str | None = None) -> bool:
    """Whether a qrels version (default: the store's default) records strata."""
    name = store.resolve_qrels(version)
    return store.one("sampled version?", "SELECT 1 FROM qrels_strata WHERE version = ? LIMIT 1",
                     [name]) is not None


def derived_sample_note(store: Database, version: str) -> str:
    """What deriving a version must add when it is sampled: that it is, how big its sample
    is, and that its values are estimates; empty for plain qrels."""
    if not is_sampled(store, version):
        return ""
    return (f"; SAMPLED: {sample_size(store, version).describe()}. Its values are estimates: "
            "`pooling evaluate` scores it as sample_eval.pl does, `pooling leaderboard` ranks "
            "by infAP, infNDCG or statAP with their intervals")


def require_sampled(store: Database, version: str | None = None) -> str:
    """The version's name, or an error saying it has no strata and how to get a version that has."""
    name = store.resolve_qrels(version)
    if not is_sampled(store, name):
        raise StoreError(
            f"qrels version {name!r} has no strata (it is plain qrels); import a five-column "
            "sampled qrels file (`pooling import qrels FILE`), or derive one from a round pooled "
            "with strata (`pooling pool --strategy sample`, then `pooling qrels derive --round`)")
    return name


def sampled_qrels_table(store: Database, version: str | None = None) -> pa.Table:
    """The version as sampled qrels: query_id, doc_id, stratum, relevance (-1 not sampled),
    one row per pooled pair, sorted by query_id and doc_id."""
    name = require_sampled(store, version)
    return store.arrow(
        "read sampled qrels",
        "SELECT s.query_id, s.doc_id, s.stratum, coalesce(q.relevance, ?) AS relevance "
        "FROM qrels_strata s LEFT JOIN qrels q "
        "ON q.version = s.version AND q.query_id = s.query_id AND q.doc_id = s.doc_id "
        "WHERE s.version = ? ORDER BY s.query_id, s.doc_id", [UNSAMPLED, name])


def sample_size(store: Database, version: str | None = None) -> SampleSize:
    """The sample behind a sampled version: judged and pooled pairs, topics, per stratum."""
    table = sampled_qrels_table(store, version)
    counts = stratum_counts(table)
    per: dict[str, list[int]] = {}
    for s, p, j in zip(counts["stratum"].to_pylist(), counts["pooled"].to_pylist(),
                       counts["judged"].to_pylist(), strict=True):
        acc = per.setdefault(s, [0, 0])
        acc[0] += p
        acc[1] += j
    judged = int(pc.sum(pc.greater_equal(table["relevance"], 0)).as_py() or 0)
    return SampleSize(judged, table.num_rows, len(set(table["query_id"].to_pylist())),
                      tuple((s, p, j) for s, (p, j) in sorted(per.items())))


def save_sampled_qrels(
    store: Database, table: pa.Table, name: str, *, method: str, source: str | None = None,
    sha256: str | None = None, grades: list[int] | None = None, relevance_level: int = 1,
    params: dict[str, Any] | None = None, details: str | None = None,
    judges: list[str] | None = None,
) -> QrelsImport:
    """Store sampled qrels (query_id, doc_id, stratum, relevance with -1 for unsampled pairs)
    as a new immutable version, in one transaction; the result counts the judged rows."""
    check_id(name, "qrels version name (--name)", names_file=True)
    if table.num_rows == 0:
        raise StoreError("sampled qrels with no pooled pair cannot make a version; "
                         "pool some documents first")
    judged = table.filter(pc.greater_equal(table["relevance"], 0))
    keep = [c for c in ("query_id", "doc_id", "relevance", "line") if c in judged.column_names]
    strata = pa.table({"query_id": table["query_id"], "doc_id": table["doc_id"],
                       "stratum": pc.cast(table["stratum"], pa.string())})
    sha256 = sha256 or hashlib.sha256(repr(table.select(
        ["query_id", "doc_id", "stratum", "relevance"]).to_pydict()).encode()).hexdigest()
    with store.transaction():
        result = save_qrels(store, judged.select(keep), name, method=method, source=source,
                            sha256=sha256, grades=grades, relevance_level=relevance_level,
                            params=params, details=details, judges=judges)
        store.con.register("_strata", strata)
        try:
            store.sql("insert strata", "INSERT INTO qrels_strata SELECT ?, query_id, doc_id, "
                      "stratum FROM _strata", [name])
        finally:
            store.con.unregister("_strata")
    return result


def import_sampled_qrels_file(store: Database, path: str | Path, *, name: str | None = None,
                              allow_copy: bool = False) -> QrelsImport:
    """Import a five-column sampled qrels file as a new sampled version (default name: the
    file name without suffixes). The same content again is "already imported"; a malformed
    line is refused, naming the file and line, and nothing is stored."""
    file = new_qrels_file(store, path, name, allow_copy)
    if isinstance(file, QrelsImport):
        return file
    sha, source = file.sha256, file.source
    table = parse_sampled_qrels(path, source)
    check_known_topics(store, table, source)
    version = name if name is not None else Path(path).name.split(".")[0]
    result = save_sampled_qrels(store, table, version, method="imported", source=source,
                                sha256=sha, details=json.dumps({"format": "sampled"}))
    result.format = "sampled"
    return result


def export_sampled_qrels(store: Database, out: PathLike | IO[str], version: str | None = None
                         ) -> str:
    """Write a sampled version as the five-column file sample_eval.pl reads (sorted by
    query_id, doc_id); to a path, its provenance goes beside it (`PATH.meta.json`)."""
    name = require_sampled(store, version)
    write_sampled_qrels(sampled_qrels_table(store, name), out)
    if not hasattr(out, "write"):
        provenance = qrels_provenance(store.qrels_info(name))
        provenance["format"] = SAMPLED_FORMAT
        provenance["sample"] = sample_size(store, name).describe()
        write_text(sidecar_path(out), json.dumps(provenance, indent=1, ensure_ascii=False) + "\n")
    return name
