"""Assignment versions: each answer's support on each nugget, derived by a recorded rule, and
the runs they score.

`derive_assignments` applies one of the core's part rules (`pooling.judging.rules`:
majority, latest, mean, primary, or a judge's grades alone or under the people's) to each
(answer, nugget) of an assignment round, and stores the result as an immutable version
tied to the round's nugget version. `score_assignments` scores answer runs from a version:
an answer is graded on every nugget of its topic in the nugget version, a nugget nobody
assigned counting as not supported, so the denominators are the topic's nuggets as
nuggetizer's are. A run is scored on the topics of the version it answered (`complete`:
the others count 0), topics of the nugget version without a nugget included (they score 0).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from pooling.errors import StoreError
from pooling.evaluation.nuggets import score_assigned
from pooling.evaluation.results import Evaluation
from pooling.formats.ids import check_id
from pooling.judging.rounds import get_round
from pooling.judging.rules import derive_subtopic_grades
from pooling.nuggets.rounds import round_nugget_version
from pooling.store.core import Store, utcnow
from pooling.store.nugget_banks import version_topics


@dataclass(frozen=True)
class AssignmentVersion:
    """An assignment version as stored."""

    name: str
    nugget_version: str
    method: str
    source: str | None
    grades: tuple[int, ...]
    n_rows: int
    n_answers: int
    n_topics: int
    params: dict


def derive_assignments(store: Store, rule: str, name: str, *, round_id: str, tie: str = "lower",
                       judge: str | None = None,
                       judge_grades: dict[int, int] | None = None) -> AssignmentVersion:
    """Derive and store assignment version `name` from an assignment round by `rule`."""
    check_id(name, "the version name (--name)", names_file=True)
    rnd = get_round(store, round_id)
    nugget_version = round_nugget_version(rnd)
    if store.one("find version", "SELECT 1 FROM assignment_versions WHERE name = ?", [name]):
        raise StoreError(f"assignment version {name!r} exists already; versions never change: "
                         "give another --name")
    table = derive_subtopic_grades(store, rule, round_id, tie=tie, judge=judge,
                                   judge_grades=judge_grades)
    if table.num_rows == 0:
        raise StoreError(f"round {round_id!r} has no judgment to derive assignments from")
    rows = pa.table({"version": pa.array([name] * table.num_rows, pa.string()),
                     "query_id": table.column("query_id"), "run_id": table.column("doc_id"),
                     "nugget_id": table.column("subtopic"), "grade": table.column("relevance")})
    with_nuggets = {r[0] for r in store.sql("topics with nuggets", "SELECT DISTINCT query_id FROM "
                                            "nuggets WHERE version = ?", [nugget_version]).fetchall()}
    # A round of every topic with nuggets scores the version's topics without one too (their
    # answers score 0, as nuggetizer scores a record without nuggets); a round of chosen
    # topics scores those.
    empty = set(version_topics(store, nugget_version)) - with_nuggets
    topics = sorted(set(rnd.topics) | (empty if set(rnd.topics) >= with_nuggets else set()))
    params = {"rule": rule, "round": round_id, "tie": tie if rule == "majority" else None,
              "topics": topics, "answer_runs": rnd.params.get("answer_runs")}
    if judge is not None:
        params.update(judge=judge, judge_grades={str(k): v for k, v in (judge_grades or {}).items()} or None)
    n_answers = len(set(zip(rows.column("query_id").to_pylist(), rows.column("run_id").to_pylist(),
                            strict=True)))
    return _store_version(store, name, nugget_version, f"derived:{rule}", round_id,
                          list(rnd.grades), rows, n_answers, topics, params)


def _store_version(store: Store, name: str, nugget_version: str, method: str, source: str,
                   grades: list[int], rows: pa.Table, n_answers: int, topics: list[str],
                   params: dict) -> AssignmentVersion:
    """Store an assignment version and its rows (version, query_id, run_id, nugget_id,
    grade) in one transaction: the one place a version enters the store."""
    with store.transaction():
        store.insert_arrow("store assignments", "nugget_assignments", rows)
        store.sql("record assignment version", "INSERT INTO assignment_versions VALUES (?, ?, ?, ?, "
                  "?, ?, ?, ?, ?, ?)", [name, nugget_version, utcnow(), method, source, grades,
                                        rows.num_rows, n_answers, len(topics), json.dumps(params)])
    return get_assignment_version(store, name)


def get_assignment_version(store: Store, name: str) -> AssignmentVersion:
    """A stored assignment version (`StoreError` naming the stored ones)."""
    row = store.one("assignment version", "SELECT name, nugget_version, method, source, grades, "
                    "n_rows, n_answers, n_topics, params FROM assignment_versions WHERE name = ?",
                    [name])
    if row is None:
        known = [r[0] for r in store.sql("assignment versions", "SELECT name FROM "
                                         "assignment_versions ORDER BY created_at").fetchall()]
        raise StoreError(f"no assignment version {name!r} in {store.path}; the store holds "
                         f"{', '.join(map(repr, known[:10])) or 'none (derive one with `pooling nuggets derive`)'}")
    return AssignmentVersion(row[0], row[1], row[2], row[3], tuple(row[4]), row[5], row[6], row[7],
                             json.loads(row[8] or "{}"))


def assignment_versions(store: Store) -> list[AssignmentVersion]:
    """Every assignment version, oldest first."""
    names = [r[0] for r in store.sql("assignment versions", "SELECT name FROM assignment_versions "
                                     "ORDER BY created_at, name").fetchall()]
    return [get_assignment_version(store, n) for n in names]


def score_assignments(store: Store, version: str, *, runs: Sequence[str] | None = None,
                      measures: Sequence[str] = ("nuggets",), complete: bool = False) -> Evaluation:
    """Score answer runs (default: those the version's round judged) from an assignment
    version (module doc)."""
    av = get_assignment_version(store, version)
    chosen = list(runs) if runs else list(av.params.get("answer_runs") or [])
    topics = list(av.params.get("topics") or [])
    answers = store.arrow("answers scored", """
        SELECT run_id, query_id FROM answers
        WHERE list_contains(?, run_id) AND list_contains(?, query_id)
        ORDER BY run_id, query_id""", [chosen, topics])
    if answers.num_rows == 0:
        raise StoreError(f"runs {', '.join(map(repr, chosen))} answer none of the topics of "
                         f"assignment version {version!r}")
    # Every answer graded on every nugget of its topic; a nugget nobody assigned is 0.
    nuggets = store.arrow("assigned nuggets", """
        WITH scored AS (
            SELECT run_id, query_id, row_number() OVER (ORDER BY run_id, query_id) - 1 AS answer
            FROM answers WHERE list_contains(?, run_id) AND list_contains(?, query_id))
        SELECT s.answer, n.importance = 'vital' AS vital, coalesce(x.grade, 0) AS grade
        FROM scored s
        JOIN nuggets n ON n.version = ? AND n.query_id = s.query_id
        LEFT JOIN nugget_assignments x ON x.version = ? AND x.query_id = s.query_id
             AND x.run_id = s.run_id AND x.nugget_id = n.nugget_id""",
                          [chosen, topics, av.nugget_version, version])
    return score_assigned(answers, nuggets, measures, complete=complete)


def import_assignments(store: Store, files: Sequence[str], nugget_version: str, name: str) -> AssignmentVersion:
    """Import nuggetizer assignment files as assignment version `name` of `nugget_version`,
    all or nothing: each record's nuggets are the version's nuggets of its qid, matched by
    their text (as nuggetizer writes them back), and its answer must be stored."""
    from pooling.errors import FormatError, Problem
    from pooling.evaluation.nuggets import read_all_assignments

    check_id(name, "the version name (--name)", names_file=True)
    if store.one("find version", "SELECT 1 FROM assignment_versions WHERE name = ?", [name]):
        raise StoreError(f"assignment version {name!r} exists already; give another --name")
    nuggets = version_nuggets_by_text(store, nugget_version)
    read = read_all_assignments(files)
    rows: dict[str, list] = {"query_id": [], "run_id": [], "nugget_id": [], "grade": []}
    problems: list[Problem] = []
    stored = set(store.sql("stored answers", "SELECT query_id, run_id FROM answers").fetchall())
    for one in read:
        answers = one.answers.to_pylist()
        texts = one.nuggets.column("text").to_pylist()
        grades = one.nuggets.column("grade").to_pylist()
        for a, text, grade in zip(one.nuggets.column("answer").to_pylist(), texts, grades, strict=True):
            q, r = answers[a]["query_id"], answers[a]["run_id"]
            nugget_id = nuggets.get((q, text.strip()))
            if nugget_id is None:
                problems.append(Problem(one.source, answers[a]["line"], f"qid {q!r}: nugget "
                                        f"{text[:60]!r} is not one of nugget version "
                                        f"{nugget_version!r}'s"))
                continue
            rows["query_id"].append(q)
            rows["run_id"].append(r)
            rows["nugget_id"].append(nugget_id)
            rows["grade"].append(int(grade))
        for answer in answers:
            if (answer["query_id"], answer["run_id"]) not in stored:
                problems.append(Problem(one.source, answer["line"], f"run {answer['run_id']!r} "
                                        f"has no stored answer for topic {answer['query_id']!r}; "
                                        "import the answers first (`pooling import answers`)"))
        if len(problems) > 20:
            break
    if problems:
        raise FormatError(problems, hint="Nothing was imported.")
    table = pa.table({"version": [name] * len(rows["query_id"]), **rows})
    runs = sorted({a["run_id"] for one in read for a in one.answers.to_pylist()})
    topics = sorted(version_topics(store, nugget_version))
    params = {"files": [str(f) for f in files], "answer_runs": runs, "topics": topics}
    n_answers = sum(one.answers.num_rows for one in read)
    return _store_version(store, name, nugget_version, "import nuggetizer",
                          ", ".join(map(str, files)), [0, 1, 2], table, n_answers, topics, params)


def version_nuggets_by_text(store: Store, nugget_version: str) -> dict[tuple[str, str], str]:
    """(query_id, text stripped) -> nugget id of a nugget version."""
    from pooling.store.nugget_banks import version_nuggets

    table = version_nuggets(store, nugget_version)
    return {(q, t.strip()): n for q, t, n in zip(table.column("query_id").to_pylist(),
                                                 table.column("text").to_pylist(),
                                                 table.column("nugget_id").to_pylist(), strict=True)}


def assigned_shares(store: Store, version: str, *, runs: Sequence[str] | None = None
                    ) -> dict[tuple[str, str], float]:
    """(run_id, query_id) -> the share of the answer's (answer, nugget) pairs that `version`
    grades (the rest count as not supported): the answers' Judged@k."""
    av = get_assignment_version(store, version)
    chosen = list(runs) if runs else list(av.params.get("answer_runs") or [])
    rows = store.sql("assigned shares", """
        SELECT a.run_id, a.query_id, count(x.grade) / count(*)
        FROM answers a
        JOIN nuggets n ON n.version = ? AND n.query_id = a.query_id
        LEFT JOIN nugget_assignments x ON x.version = ? AND x.query_id = a.query_id
             AND x.run_id = a.run_id AND x.nugget_id = n.nugget_id
        WHERE list_contains(?, a.run_id) AND list_contains(?, a.query_id)
        GROUP BY a.run_id, a.query_id""",
                     [av.nugget_version, version, chosen, list(av.params.get("topics") or [])]).fetchall()
    return {(r, q): float(share) for r, q, share in rows}
