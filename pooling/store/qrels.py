"""Qrels versions in the store: immutable, named, with their grade scale and how they were made."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem, StoreError
from pooling.formats.ids import check_id
from pooling.formats.source import display_name, read_file_bytes
from pooling.formats.topic_map import TopicMap, details_json
from pooling.formats.trec_qrels import check_unique_judgments, write_trec_qrels
from pooling.formats.trec_web import recorded_subtopics
from pooling.output_files import write_text
from pooling.store import faults
from pooling.store.database import Database, utcnow
from pooling.store.imports import already_imported, prior_imports, same_content_refusal


@dataclass
class QrelsImport:
    """Outcome of importing qrels: the version name and whether it was new; for a file, the
    format it was read as and the SMART grade mapping used (None for other formats)."""

    name: str
    status: str  # "imported" | "already imported"
    n_rows: int = 0
    n_topics: int = 0
    grades: tuple[int, ...] = ()
    format: str | None = None
    grade_mapping: str | None = None

@dataclass(frozen=True)
class QrelsFile:
    """A qrels file about to be imported: its bytes as on disk, their SHA-256, its shown name."""

    raw: bytes
    sha256: str
    source: str


def new_qrels_file(store: Database, path: str | Path, name: str | None,
                   allow_copy: bool) -> QrelsFile | QrelsImport:
    """Read a qrels file to import, whatever its format: the file, or the version that already
    holds its content ("already imported"). Content imported under another name is refused,
    naming that version, unless `allow_copy` stores it again."""
    raw = read_file_bytes(path)
    sha = hashlib.sha256(raw).hexdigest()
    source = display_name(path)
    prior = prior_imports(store, "qrels", sha)
    if (same := already_imported(prior, name)) is not None:
        return QrelsImport(name or same.target, "already imported")
    if prior and not allow_copy:
        raise StoreError(same_content_refusal(source, "qrels version", prior[0], str(name)))
    return QrelsFile(raw, sha, source)



def import_qrels_file(
    store: Database, path: str | Path, *, name: str | None = None, format: str | None = None,
    grades: str | None = None, topic_map: TopicMap | None = None, allow_copy: bool = False,
) -> QrelsImport:
    """Import a qrels file as a new version (default name: the file name without suffixes).

    format: 'trec' (query_id iter doc_id relevance), 'smart' (a SMART relevance file, with
    `grades` mapping: cranfield by default, binary or as-is) or 'letor'; None tells it from
    the content (`pooling.formats.read_qrels`). A topic map is applied and recorded.

    The same content again is "already imported", unless `name` asks for a version it was
    not imported as: that is refused, naming the version that holds it, or with `allow_copy`
    stored again under `name`.
    """
    from pooling.formats import read_qrels  # the readers load with a qrels file to read

    file = new_qrels_file(store, path, name, allow_copy)
    if isinstance(file, QrelsImport):
        return file
    sha, source = file.sha256, file.source
    reading = read_qrels(path, format, grades)
    table = reading.table
    used: dict[str, str] = {}
    if topic_map is not None:
        table, used = topic_map.apply(table)
    version = name if name is not None else Path(path).name.split(".")[0]
    details = details_json(format=reading.format if reading.format != "trec" else None,
                           grades=reading.grades,
                           topic_map=topic_map.record(used) if topic_map and used else None)
    result = save_qrels(store, table, version, method="imported", source=source, sha256=sha,
                        details=details)
    result.format, result.grade_mapping = reading.format, reading.grades
    return result


def save_qrels(
    store: Database,
    table: pa.Table,
    name: str,
    *,
    method: str,
    source: str | None = None,
    sha256: str | None = None,
    grades: list[int] | None = None,
    relevance_level: int = 1,
    params: dict[str, Any] | None = None,
    details: str | None = None,
    judges: list[str] | None = None,
) -> QrelsImport:
    """Store a qrels table as a new immutable version; the name must be new. judges: the
    automatic judges whose grades it holds (recorded with the version)."""
    check_id(name, "qrels version name (--name)", names_file=True)
    if store.one("find qrels", "SELECT 1 FROM qrels_versions WHERE name = ?", [name]):
        raise StoreError(
            f"qrels version {name!r} already exists and versions are immutable; "
            "choose another name with --name"
        )
    if "line" not in table.column_names:
        table = table.append_column("line", pa.array(range(1, table.num_rows + 1), pa.int64()))
    check_unique_judgments(table, source or "<table>")
    seen = sorted(set(table["relevance"].to_pylist()))
    scale = sorted(set(grades)) if grades is not None else seen
    unknown = [g for g in seen if g not in scale]
    if unknown:
        raise StoreError(f"grades {unknown} are not on the declared grade scale {scale}")
    sha256 = sha256 or hashlib.sha256(repr(table.to_pydict()).encode()).hexdigest()
    n_topics = len(set(table["query_id"].to_pylist()))
    with store.transaction():
        store.con.register("_qrels", table)
        try:
            store.sql(
                "insert qrels",
                "INSERT INTO qrels SELECT ?, query_id, doc_id, relevance FROM _qrels",
                [name],
            )
        finally:
            store.con.unregister("_qrels")
        faults.rows_written(table.num_rows)
        store.sql(
            "record qrels version",
            "INSERT INTO qrels_versions (name, created_at, method, source, sha256, grades, "
            "relevance_level, n_rows, n_topics, params, judges) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [name, utcnow(), method, source, sha256, scale, relevance_level, table.num_rows,
             n_topics, json.dumps(params) if params else None, judges or None],
        )
        store.sql("record import",
                  "INSERT INTO imports (sha256, kind, source, target, imported_at, details) "
                  "VALUES (?, 'qrels', ?, ?, ?, ?)", [sha256, source, name, utcnow(), details])
        store.sql("first version is the default",
                  "INSERT OR IGNORE INTO store_meta VALUES ('default_qrels', ?)", [name])
    return QrelsImport(name, "imported", table.num_rows, n_topics, tuple(scale))


def set_default_qrels(store: Database, version: str) -> str:
    """Make `version` the qrels every command uses when none is named; returns its name.

    The default is the first version stored until this changes it, so deriving a version
    (say a majority vote) never moves leaderboards off the official qrels unasked.
    """
    name = store.resolve_qrels(version)
    with store.transaction():
        store.sql("set default qrels",
                  "INSERT OR REPLACE INTO store_meta VALUES ('default_qrels', ?)", [name])
    return name


def export_qrels(store: Database, out, version: str | None = None, *, header: bool = False) -> str:
    """Write a qrels version (default: the store's default) as plain TREC qrels, the text every
    peer reads (trec_eval, pytrec_eval, ir_measures, ranx, trectools); returns its name.

    Written to a path, the version's provenance goes beside it as `PATH.meta.json`
    (`sidecar_path`). header=True also puts it in the file as one `#` comment line, which
    trec_eval skips but pytrec_eval and others refuse.
    """
    info = store.qrels_info(version)
    provenance = qrels_provenance(info)
    lines = [_header_line(provenance)] if header else None
    write_trec_qrels(store.qrels_table(info["name"]), out, header=lines)
    if not hasattr(out, "write"):
        write_text(sidecar_path(out), json.dumps(provenance, indent=1, ensure_ascii=False) + "\n")
    return info["name"]


def sidecar_path(path: str | Path) -> Path:
    """Where the provenance of an exported file goes: beside it, as `NAME.meta.json`."""
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


def qrels_provenance(info: dict[str, Any]) -> dict[str, Any]:
    """What a qrels version is and where it came from (a row of `qrels_versions`), as JSON
    values: the content of an export's sidecar file."""
    return {
        "qrels_version": info["name"],
        "method": info["method"],
        "created_at": f"{info['created_at']:%Y-%m-%dT%H:%M:%S}Z",
        "source": info["source"],
        "grades": list(info["grades"]),
        "relevance_level": info["relevance_level"],
        "rows": info["n_rows"],
        "topics": info["n_topics"],
        "params": json.loads(info["params"]) if info.get("params") else None,
        "judges": list(info["judges"]) if info.get("judges") else None,
        "format": "TREC qrels: query_id iter doc_id relevance",
    }


def _header_line(p: dict[str, Any]) -> str:
    # One comment line only: trec_eval skips a single comment line before each data line.
    return (f"pooling qrels version {p['qrels_version']}; method: {p['method']}; "
            f"created_at: {p['created_at']}; source: {p['source'] or '-'}; "
            f"grades: {','.join(str(g) for g in p['grades'])}; "
            f"relevance_level: {p['relevance_level']}; rows: {p['rows']}; topics: {p['topics']}")


# -- subtopic qrels versions ----------------------------------------------------------------

PLAIN_FROM_SUBTOPICS = "max over subtopics"  # the stated rule, recorded with the versions


def plain_from_subtopics(table: pa.Table) -> pa.Table:
    """Plain qrels from subtopic qrels (query_id, subtopic, doc_id, relevance) by the stated
    rule, `pooling.formats.subtopic_qrels.plain_qrels`: a document's grade is its maximum over
    the topic's subtopics, so it is relevant when it is relevant to any subtopic."""
    from pooling.formats.subtopic_qrels import plain_qrels

    return plain_qrels(table)


def check_known_topics(store: Database, table: pa.Table, source: str, *,
                       subtopics: bool = False) -> None:
    """Refuse, at file:line, judgments of topics the store lacks and (`subtopics`) of subtopics
    a topic's stored subtopics lack. A store without topics, or a topic stored without
    subtopics, has nothing to check against: its rows are taken as they are.

    table: query_id[, subtopic], line."""
    (known,) = store.one("count topics", "SELECT count(*) FROM topics")
    if known == 0:
        return
    ids = pc.unique(table["query_id"]).to_pylist()
    extras = dict(store.sql("topics of the judgments", "SELECT query_id, extra FROM topics "
                            "WHERE query_id IN (SELECT UNNEST(?))", [ids]).fetchall())
    recorded = {q: {n for n, _ in recorded_subtopics(e)} for q, e in extras.items()}
    problems: list[Problem] = []
    seen: set[tuple[str, str | None]] = set()
    columns = ["query_id", "subtopic", "line"] if subtopics else ["query_id", "line"]
    for row in table.select(columns).to_pylist():
        q, sub = row["query_id"], row.get("subtopic")
        if q not in extras:
            if (q, None) not in seen:
                seen.add((q, None))
                problems.append(Problem(source, row["line"], f"topic {q!r} is not in the store"))
        elif subtopics and recorded[q] and sub not in recorded[q] and (q, sub) not in seen:
            seen.add((q, sub))
            problems.append(Problem(source, row["line"], f"topic {q!r} has no subtopic {sub!r}; "
                                    f"its subtopics are {', '.join(sorted(recorded[q]))}"))
        if len(problems) >= 20:
            break
    if problems:
        raise FormatError(problems, hint="Import the topics (with their subtopics) first, or fix "
                          "the ids of these lines (a --topic-map maps ids written otherwise).")


def save_subtopic_qrels(store: Database, table: pa.Table, name: str, **version: Any) -> QrelsImport:
    """Store subtopic qrels (query_id, subtopic, doc_id, relevance) as a new immutable version,
    in one transaction. Its subtopic rows go to `subtopic_qrels`; its plain rows, which every
    reader of a qrels version sees (evaluation, leaderboards, exports), are the maximum over
    subtopics (`plain_from_subtopics`). version: as `save_qrels` takes; the params record
    that the version has subtopics and the rule of its plain rows."""
    keys = list(zip(*(table[c].to_pylist() for c in ("query_id", "subtopic", "doc_id")),
                    strict=True))
    if len(set(keys)) != len(keys):
        raise StoreError("a subtopic qrels version grades each (topic, subtopic, document) once; "
                         "these rows repeat one")
    params = {**(version.pop("params", None) or {}), "subtopics": True,
              "plain_rule": PLAIN_FROM_SUBTOPICS}
    with store.transaction():
        result = save_qrels(store, plain_from_subtopics(table), name, params=params, **version)
        store.con.register("_subtopic_qrels", table)
        try:
            store.sql("insert subtopic qrels",
                      "INSERT INTO subtopic_qrels SELECT ?, query_id, subtopic, doc_id, relevance "
                      "FROM _subtopic_qrels", [name])
        finally:
            store.con.unregister("_subtopic_qrels")
    return result


def subtopic_qrels_table(store: Database, version: str | None = None) -> pa.Table:
    """A subtopic qrels version's rows: query_id, subtopic, doc_id, relevance, in that order;
    a version without subtopics is refused, naming those that have them."""
    name = store.resolve_qrels(version)
    table = store.arrow("read subtopic qrels",
                        "SELECT query_id, subtopic, doc_id, relevance FROM subtopic_qrels "
                        "WHERE version = ? ORDER BY query_id, subtopic, doc_id", [name])
    if table.num_rows == 0:
        having = [r[0] for r in store.con.execute(
            "SELECT DISTINCT version FROM subtopic_qrels ORDER BY 1").fetchall()]
        raise StoreError(f"qrels version {name!r} has no subtopics; versions with subtopics: "
                         f"{', '.join(having) or 'none yet'} (derive one from a subtopic round "
                         "with `pooling qrels derive --round R`)")
    return table


def derive_plain_qrels(store: Database, version: str, name: str) -> QrelsImport:
    """A new plain qrels version from a subtopic one by the stated rule: a document's grade is
    its maximum over the topic's subtopics (relevant to any subtopic)."""
    info = store.qrels_info(version)
    table = subtopic_qrels_table(store, info["name"])
    return save_qrels(store, plain_from_subtopics(table), name, method="derived:max-subtopic",
                      source=info["name"], grades=list(info["grades"]),
                      relevance_level=info["relevance_level"],
                      params={"rule": PLAIN_FROM_SUBTOPICS, "from": info["name"]})


def import_subtopic_qrels_file(store: Database, path: str | Path, *, name: str | None = None,
                               allow_copy: bool = False, grades: str | None = None,
                               topic_map: TopicMap | None = None) -> QrelsImport:
    """Import ndeval's subtopic qrels (`query_id subtopic doc_id relevance`) as a new subtopic
    qrels version (`save_subtopic_qrels`; default name: the file name without suffixes). The
    same content again is "already imported", as for `import_qrels_file`; a topic map is
    applied and recorded. grades (SMART's mapping) is refused: the grades are as written."""
    from pooling.formats.subtopic_qrels import parse_subtopic_qrels

    if grades is not None:
        raise StoreError("--grades maps a SMART file's grades; a subtopic qrels file's grades "
                         "are read as written, so leave --grades out")
    file = new_qrels_file(store, path, name, allow_copy)
    if isinstance(file, QrelsImport):
        return file
    raw, sha, source = file.raw, file.sha256, file.source
    table = parse_subtopic_qrels(raw, source)
    used: dict[str, str] = {}
    if topic_map is not None:
        table, used = topic_map.apply(table)
    check_known_topics(store, table, source, subtopics=True)
    table = table.select(["query_id", "subtopic", "doc_id", "relevance"])
    version = name if name is not None else Path(path).name.split(".")[0]
    result = save_subtopic_qrels(
        store, table, version, method="imported", source=source, sha256=sha,
        details=details_json(format="subtopic",
                             topic_map=topic_map.record(used) if topic_map and used else None))
    result.format = "subtopic"
    return result


def export_subtopic_qrels(store: Database, out, version: str | None = None) -> str:
    """Write a subtopic qrels version as ndeval reads it (`query_id subtopic doc_id relevance`,
    by topic, subtopic and document); written to a path, its provenance goes beside it as
    `PATH.meta.json`. Returns the version's name."""
    from pooling.formats.subtopic_qrels import write_subtopic_qrels

    info = store.qrels_info(version)
    write_subtopic_qrels(subtopic_qrels_table(store, info["name"]), out)
    if not hasattr(out, "write"):
        provenance = {**qrels_provenance(info),
                      "format": "subtopic qrels (ndeval): query_id subtopic doc_id relevance"}
        write_text(sidecar_path(out), json.dumps(provenance, indent=1, ensure_ascii=False) + "\n")
    return info["name"]
