"""Answer runs in the store: imported atomically, each answer kept as given, exported back.

`import_answers` reads every file first (`pooling.formats.answers`) and refuses the call,
naming every bad file's problems at file:line, before anything is written; then all files go
in one transaction. For each answer run it stores the run, its answers as given, their
sentences and citations, and (unless asked not to) the segments each answer may cite as a
ranked run under the same run_id, so the pooling strategies pool the cited segments for
relevance judging. The same file again is "already imported"; a run_id the store already
holds (answers or a ranked run) is refused. Topics the store lacks are refused, or added
from the file with `add_topics` (its question text, or the id alone where it has none).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem, StoreError
from pooling.formats.answers import ANSWERS_SCHEMA, AnswerFile, read_answers, write_answers
from pooling.formats.source import sha256_file
from pooling.store.database import Database, utcnow
from pooling.store.imports import already_imported, prior_imports
from pooling.store.runs import import_run_table

MISSING_SHOWN = 5  # missing topics named in a refusal


@dataclass
class ImportedAnswers:
    """One answer run of an import: made, or already in the store (the same file again)."""

    run_id: str
    source: str
    status: str  # "imported" | "already imported"
    format: str = ""
    n_answers: int = 0
    n_topics: int = 0
    n_sentences: int = 0
    n_citations: int = 0
    ranked_run: bool = False


@dataclass
class AnswersImport:
    """What `import_answers` did: a line per answer run, and the topics it added."""

    items: list[ImportedAnswers] = field(default_factory=list)
    topics_added: list[str] = field(default_factory=list)


def import_answers(
    store: Database,
    files: Sequence[str | Path],
    *,
    format: str | None = None,
    add_topics: bool = False,
    references_as_run: bool = True,
    team: str | None = None,
    description: str | None = None,
) -> AnswersImport:
    """Import answer files (module doc); all or nothing."""
    read: list[tuple[AnswerFile, str]] = []
    problems: list[Problem] = []
    for path in files:
        try:
            read.append((read_answers(path, format), sha256_file(path)))
        except FormatError as exc:
            problems += exc.problems
    if problems:
        raise FormatError(problems, hint="Nothing was imported; fix the files and import again.")
    report = AnswersImport()
    with store.transaction():
        for answer_file, sha in read:
            prior = already_imported(prior_imports(store, "answers", sha), None)
            if prior is not None:
                report.items += [ImportedAnswers(r, answer_file.source, "already imported")
                                 for r in prior.targets]
                continue
            _refuse_taken(store, answer_file, references_as_run)
            report.topics_added += _topics(store, answer_file, add_topics)
            report.items += _insert(store, answer_file, sha, references_as_run, team, description)
    return report


def _refuse_taken(store: Database, answer_file: AnswerFile, references_as_run: bool) -> None:
    for run_id in answer_file.run_ids:
        if store.one("find answer run", "SELECT 1 FROM answer_runs WHERE run_id = ?", [run_id]):
            raise StoreError(f"{answer_file.source}: the store already holds answers of run "
                             f"{run_id!r}; name the run differently in the file, or remove the "
                             "stored one first")
        if references_as_run and store.has_run(run_id):
            raise StoreError(f"{answer_file.source}: the store already holds a ranked run "
                             f"{run_id!r}, and an answer run's references are stored as a ranked "
                             "run of its name; rename one, or import with --no-references-run")


def _topics(store: Database, answer_file: AnswerFile, add: bool) -> list[str]:
    """The file's topics the store lacks: added (with the file's question text) when `add`,
    else refused naming a few."""
    answers = answer_file.answers
    known = store.arrow("known topics", "SELECT DISTINCT query_id FROM topics").column(0)
    lacking = answers.filter(pc.invert(pc.is_in(answers.column("query_id"), known)))
    missing = list(dict.fromkeys(lacking.column("query_id").to_pylist()))
    if not missing:
        return []
    if not add:
        named = ", ".join(repr(q) for q in missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
        raise StoreError(f"{answer_file.source}: {len(missing)} topic(s) are not in the store "
                         f"({named}{more}); import the topics first, or pass --add-topics to add "
                         "them from the file")
    titles: dict[str, str | None] = {}
    for q, t in zip(lacking.column("query_id").to_pylist(), lacking.column("topic").to_pylist(),
                    strict=True):
        if titles.get(q) is None:
            titles[q] = t
    store.insert_arrow("add topics from answers", "topics", pa.table({
        "query_id": pa.array(list(titles), pa.string()),
        "title": pa.array(list(titles.values()), pa.string()),
        "source": pa.array([answer_file.source] * len(titles), pa.string())}))
    return missing


def _insert(store: Database, answer_file: AnswerFile, sha: str, references_as_run: bool,
            team: str | None, description: str | None) -> list[ImportedAnswers]:
    answers, sentences = answer_file.answers, answer_file.sentences
    store.insert_arrow("store answers", "answers", answers)
    store.insert_arrow("store answer sentences", "answer_sentences", sentences)
    items = []
    now = utcnow()
    for run_id in answer_file.run_ids:
        mine = answers.filter(pc.equal(answers.column("run_id"), run_id))
        said = sentences.filter(pc.equal(sentences.column("run_id"), run_id))
        n_topics = len(set(mine.column("query_id").to_pylist()))
        store.sql("record answer run", "INSERT INTO answer_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  [run_id, answer_file.format, answer_file.source, sha, now, mine.num_rows,
                   n_topics, team, description])
        ranked = references_as_run and _references_run(store, answer_file.source, run_id, mine)
        items.append(ImportedAnswers(
            run_id, answer_file.source, "imported", answer_file.format, mine.num_rows, n_topics,
            said.num_rows, int(pc.sum(pc.list_value_length(said.column("citations"))).as_py() or 0),
            ranked))
    store.sql("record import", "INSERT INTO imports (sha256, kind, source, target, imported_at) "
              "VALUES (?, 'answers', ?, ?, ?)",
              [sha, answer_file.source, ",".join(answer_file.run_ids), now])
    return items


def _references_run(store: Database, source: str, run_id: str, answers: pa.Table) -> bool:
    """Store the answers' references as a ranked run of `run_id` (rank as listed, score
    descending with it); False when no answer lists any."""
    flat = pc.list_flatten(answers.column("reference_ids"))
    if len(flat) == 0:
        return False
    lengths = pc.list_value_length(answers.column("reference_ids")).to_numpy(zero_copy_only=False)
    query_ids = [q for q, n in zip(answers.column("query_id").to_pylist(), lengths, strict=True)
                 for _ in range(n)]
    ranks = [i + 1 for n in lengths for i in range(n)]
    table = pa.table({
        "query_id": pa.array(query_ids, pa.string()),
        "doc_id": flat.cast(pa.string()),
        "rank": pa.array(ranks, pa.int64()),
        "score": pa.array([float(-r) for r in ranks], pa.float64()),
        "tag": pa.array([run_id] * len(ranks), pa.string()),
        "line": pa.array([line for line, n in zip(answers.column("line").to_pylist(), lengths,
                                                   strict=True) for _ in range(n)], pa.int64()),
    })
    import_run_table(store, table, run_id, source=source, allow_copy=True)
    return True


def answer_run_ids(store: Database) -> list[str]:
    """The stored answer runs, by name."""
    return [r[0] for r in store.sql("answer runs", "SELECT run_id FROM answer_runs ORDER BY run_id").fetchall()]


def answer_runs_summary(store: Database) -> list[tuple]:
    """(run_id, format, answers, topics, sentences, citations, source) per stored answer run."""
    return store.sql("answer runs summary", """
        SELECT r.run_id, r.format, r.n_answers, r.n_topics, count(s.sentence),
               coalesce(sum(len(s.citations)), 0), r.source
        FROM answer_runs r LEFT JOIN answer_sentences s USING (run_id)
        GROUP BY ALL ORDER BY r.run_id""").fetchall()


def require_answer_run(store: Database, run_id: str) -> str:
    """The form `run_id`'s answers came in, or `StoreError` naming the stored answer runs."""
    row = store.one("answer run", "SELECT format FROM answer_runs WHERE run_id = ?", [run_id])
    if row is None:
        known = answer_run_ids(store)
        raise StoreError(f"no answer run {run_id!r} in {store.path}; the store holds "
                         f"{', '.join(map(repr, known[:10])) or 'none'}")
    return row[0]


def answers_table(store: Database, run_id: str | None = None) -> pa.Table:
    """Stored answers (ANSWERS_SCHEMA), of one run or all, in the order they were given."""
    where, params = ("WHERE run_id = ?", [run_id]) if run_id is not None else ("", [])
    table = store.arrow("read answers", "SELECT run_id, query_id, topic, response_length, "
                        f"reference_ids, line, raw FROM answers {where} ORDER BY run_id, line",
                        params)
    return table.cast(ANSWERS_SCHEMA)


def sentences_table(store: Database, run_id: str | None = None) -> pa.Table:
    """Stored answer sentences of one run or all (SENTENCES_SCHEMA), answer by answer."""
    where, params = ("WHERE s.run_id = ?", [run_id]) if run_id is not None else ("", [])
    return store.arrow("read sentences", "SELECT s.run_id, s.query_id, s.sentence, s.text, "
                       "s.citations, s.cited FROM answer_sentences s JOIN answers a USING "
                       f"(run_id, query_id) {where} ORDER BY s.run_id, a.line, s.sentence", params)


def export_answers(store: Database, run_id: str, out: io.TextIOBase | None = None,
                   format: str | None = None) -> str:
    """Write `run_id`'s answers in the form they came in (or `format`), as given; returns the
    text when `out` is None."""
    stored = require_answer_run(store, run_id)
    answers = answers_table(store, run_id)
    buffer = out if out is not None else io.StringIO()
    fmt = format or stored
    if fmt != stored and {fmt, stored} - {"json", "tsv"}:
        raise StoreError(f"run {run_id!r} came as {stored}; its answers are written back as "
                         f"{stored}, or as json / tsv when they came as plain responses")
    write_answers(buffer, fmt, answers)
    return buffer.getvalue() if out is None else ""
