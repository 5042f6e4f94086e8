"""What the web pages show and do, as plain functions of the store (no HTTP here).

Every function takes the open `Store` first, so the app can run it under the gate's lock
(`pooling.web.gate`). Every rule of a judgment is the judging core's: who may see and judge
what (`pooling.judging.assignments`), what to judge next (`pooling.judging.queue`), whether a
submission is valid (`pooling.judging.validation`), storing it and undoing it
(`pooling.judging.judgments`). A function returns None for anything the person may not see,
and the app answers the same 404 for that as for an id that does not exist.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
from markupsafe import Markup

from pooling.errors import StoreError
from pooling.judging import validation
from pooling.judging.assignments import (
    Assignments,
    assigned_items,
    load_assignments,
    round_people,
    topics_by_round,
)
from pooling.judging.history import answers_per_pair
from pooling.judging.judgments import (
    append_judgments,
    effective_judgments,
    undo_in_store,
)
from pooling.judging.queue import first_document, topic_done, topic_queue
from pooling.judging.rounds import Round, get_round, gold_pairs
from pooling.store.core import Store
from pooling.web.highlight import highlight, query_terms
from pooling.web.topic_order import in_topic_order, topic_key


@dataclass(frozen=True)
class Grade:
    value: int
    key: str  # the keyboard shortcut
    label: str


@dataclass(frozen=True)
class TopicProgress:
    query_id: str
    title: str | None
    assigned: int
    judged: int
    done: bool


@dataclass(frozen=True)
class RoundProgress:
    round_id: str
    adaptive: bool
    topics: list[TopicProgress]
    withdrawn: bool = False  # a crowd round's worker the organiser withdrew: handed nothing more

    @property
    def judged(self) -> int:
        return sum(t.judged for t in self.topics)

    @property
    def assigned(self) -> int:
        return sum(t.assigned for t in self.topics)


@dataclass(frozen=True)
class Topic:
    query_id: str
    title: str | None
    description: str | None
    narrative: str | None


@dataclass(frozen=True)
class Subtopic:
    """One subtopic of the topic, as a subtopic round's page shows it beside the document."""

    number: str
    text: str
    current_grade: int | None  # this person's current grade of the document on it


@dataclass(frozen=True)
class JudgingPage:
    """One document of a topic, as an assessor (or adjudicating organiser) sees it."""

    round_id: str
    adaptive: bool
    topic: Topic
    doc_id: str
    doc_title: Markup
    doc_text: Markup
    doc_missing: bool
    grades: list[Grade]
    current_grade: int | None
    position: int
    total: int
    judged: int
    prev_doc: str | None
    next_doc: str | None
    skip_doc: str | None
    can_undo: bool
    subtopics: tuple[Subtopic, ...] = ()  # a subtopic round's: a grade is given on each
    unjudgeable: bool = False  # whether "broken link / can't judge" may be answered
    current_unjudgeable: bool = False  # this person's current answer is unjudgeable
    # a crowd round's worker: the token that proves this document was handed to them, sent
    # back with the answer (`pooling.web.handout_proof`)
    handout: str | None = None
    unit_word: str = "Document"  # what the round's item type calls a unit and a part
    part_word: str = "subtopic"


@dataclass(frozen=True)
class TopicDone:
    round_id: str
    topic: Topic
    judged: int
    total: int
    first_doc: str | None  # to review (and correct) the judgments made


@dataclass(frozen=True)
class Stored:
    """Outcome of a submission: stored now, or already stored (a retry)."""

    doc_id: str
    duplicate: bool


# -- access ------------------------------------------------------------------------------


def find_round(store: Store, round_id: str) -> Round | None:
    try:
        return get_round(store, round_id)
    except StoreError:
        return None


def assignments(store: Store, rnd: Round, assessor_id: str, role: str, query_id: str) -> Assignments:
    """The part of the round's assignments that says what this person may judge of a topic."""
    return load_assignments(store, rnd, query_id=query_id,
                            assessor_id=None if role == "organiser" else assessor_id)


def topic_docs(store: Store, rnd: Round, assessor_id: str, role: str, query_id: str) -> list[str] | None:
    """The documents this person may judge for a topic, in queue order; None if not theirs."""
    return assignments(store, rnd, assessor_id, role, query_id).docs_for(assessor_id, role, query_id)


def _mine(store: Store, round_id: str, assessor_id: str, query_id: str) -> dict[str, tuple[int, int]]:
    """This person's current judgments of one topic: doc_id -> (grade, seq of that judgment)."""
    table = effective_judgments(store, round_id, query_id=query_id, assessor_id=assessor_id,
                                answers=True)
    return {d: (g, q) for d, g, q in zip(*(table[c].to_pylist() for c in ("doc_id", "grade", "seq")),
                                          strict=True)}


def subtopics_shown(store: Store, rnd: Round, assessor_id: str, query_id: str,
                    doc_id: str) -> tuple[Subtopic, ...]:
    """A subtopic round's subtopics of the topic with this person's current grades of the
    document on them (() in a plain round)."""
    if not rnd.item.has_parts:
        return ()
    table = effective_judgments(store, rnd.round_id, query_id=query_id, assessor_id=assessor_id,
                                per_part=True)
    mine = {s: g for d, s, g in zip(*(table[c].to_pylist() for c in ("doc_id", "part", "grade")),
                                    strict=True) if d == doc_id}
    return tuple(Subtopic(n, t, mine.get(n)) for n, t in rnd.parts.get(query_id, []))


def _judged_per_topic(store: Store, round_id: str, assessor_id: str) -> Counter:
    table = effective_judgments(store, round_id, assessor_id=assessor_id, answers=True)
    return Counter(table["query_id"].to_pylist())


def scale_of(rnd: Round) -> list[Grade]:
    """The round's scale with shortcuts (the grade's own digit when every grade is one) and
    the words its item type gives its grades."""
    digits = all(0 <= g <= 9 for g in rnd.grades)
    return [Grade(g, str(g) if digits else str(i + 1), rnd.item.scale.word(g))
            for i, g in enumerate(rnd.grades)]


def topic_of(store: Store, query_id: str) -> Topic:
    """A topic's texts (all None for a topic the store has no text of)."""
    row = store.one("topic text", "SELECT title, description, narrative FROM topics WHERE query_id = ?",
                    [query_id])
    return Topic(query_id, *(row or (None, None, None)))


# -- the assessor's pages --------------------------------------------------------------------


def assessor_rounds(store: Store, assessor_id: str) -> list[RoundProgress]:
    """The rounds and topics assigned to an assessor, with progress and whether each is done."""
    by_round = topics_by_round(store, assessor_id)
    titles = dict(store.sql("topic titles", "SELECT query_id, title FROM topics").fetchall())
    out = []
    for round_id, queries in by_round.items():
        queries = in_topic_order(queries)
        rnd = get_round(store, round_id)
        items = Counter(assigned_items(store, round_id, assessor_id)["query_id"].to_pylist())
        judged = _judged_per_topic(store, round_id, assessor_id)
        topics = []
        for q in queries:
            done = topic_done(store, rnd, assessor_id, q)
            topics.append(TopicProgress(q, titles.get(q), items[q], judged[q], done))
        out.append(RoundProgress(round_id, rnd.adaptive, topics))
    return out


def judging_page(
    store: Store, assessor_id: str, role: str, round_id: str, query_id: str,
    doc_id: str | None = None,
) -> JudgingPage | TopicDone | None:
    """A document to judge: `doc_id`, or the next one (None when the topic is not theirs)."""
    rnd = find_round(store, round_id)
    if rnd is None:
        return None
    docs = topic_docs(store, rnd, assessor_id, role, query_id)
    if docs is None or (doc_id is None and role == "organiser"):
        return None
    if doc_id is None:
        doc_id = first_document(topic_queue(store, rnd, assessor_id, query_id))
        if doc_id is not None and doc_id not in docs:  # adaptive: just added to the queue
            docs = topic_docs(store, rnd, assessor_id, role, query_id) or []
    elif doc_id not in docs:
        return None
    grades = {d: g for d, (g, _) in _mine(store, round_id, assessor_id, query_id).items()}
    topic = topic_of(store, query_id)
    if doc_id is None:
        return TopicDone(round_id, topic, len(grades), len(docs), docs[0] if docs else None)
    i = docs.index(doc_id)
    skip = None if rnd.adaptive else next(
        (d for d in docs[i + 1:] if d not in grades and d != doc_id), None)
    doc = rnd.item.view(store, query_id, doc_id)
    terms = query_terms(topic.title)
    return JudgingPage(
        round_id=round_id, adaptive=rnd.adaptive, topic=topic, doc_id=doc_id,
        doc_title=highlight(doc[0] if doc else None, terms),
        doc_text=highlight(doc[1] if doc else None, terms),
        doc_missing=doc is None, grades=scale_of(rnd), current_grade=grades.get(doc_id),
        position=i + 1, total=len(docs), judged=len(grades),
        prev_doc=docs[i - 1] if i > 0 else None,
        next_doc=docs[i + 1] if i + 1 < len(docs) else None,
        skip_doc=skip, can_undo=bool(grades),
        subtopics=subtopics_shown(store, rnd, assessor_id, query_id, doc_id),
        unjudgeable=validation.unjudgeable_refused(rnd) is None,
        current_unjudgeable=doc_id in grades and grades[doc_id] is None,
        unit_word=rnd.item.words[0], part_word=rnd.item.words[1],
    )


def judge(
    store: Store, assessor_id: str, role: str, round_id: str, query_id: str, doc_id: str, *,
    grade: object, submission_id: object, seconds: object = None, note: object = None,
    grades: object = None, unjudgeable: object = None,
) -> Stored | None:
    """Record one judgment (committed before returning); a repeated submission id is a no-op.
    In a subtopic round `grades` holds the document's grade on each of its topic's subtopics,
    stored together as one submission (`pooling.judging.validation.part_submission`)."""
    validation.texts(doc_id=doc_id)
    validation.storable(round_id=round_id, query_id=query_id, doc_id=doc_id, note=note)
    rnd = find_round(store, round_id)
    if rnd is None or not assignments(store, rnd, assessor_id, role, query_id).may_judge(
            assessor_id, role, query_id, doc_id):
        return None
    validation.grades_sent(rnd, query_id, grade, grades)
    if rnd.item.has_parts and validation.unjudgeable_sent(unjudgeable):
        raise validation.JudgmentRefused(validation.unjudgeable_refused(rnd) or "")
    if rnd.item.has_parts:
        items = validation.part_submission(
            rnd, assessor_id, query_id, doc_id, grades_value=grades,
            submission_id_value=submission_id, seconds_value=seconds, note_value=note)
    else:
        items = [validation.submission(rnd, assessor_id, query_id, doc_id, grade_value=grade,
                                       submission_id_value=submission_id, seconds_value=seconds,
                                       note_value=note, unjudgeable_value=unjudgeable)]
    stored, _ = append_judgments(store, items)
    return Stored(doc_id, duplicate=stored == 0)


def undo(
    store: Store, assessor_id: str, role: str, round_id: str, query_id: str, *,
    submission_id: object,
) -> Stored | None:
    """Take back this person's latest current judgment of the topic, as a `retract` judgment
    (`pooling.judging.judgments.undo`). A retried undo (same submission id) answers with the
    document it undid the first time."""
    rnd = find_round(store, round_id)
    if rnd is None or not assignments(store, rnd, assessor_id, role, query_id).has_topic(
            assessor_id, role, query_id):
        return None
    sid = validation.submission_id(submission_id)
    done = undo_in_store(store, round_id, assessor_id, query_id, sid)
    return Stored(done.doc_id, duplicate=done.duplicate)


# -- the organiser's pages -------------------------------------------------------------------


@dataclass(frozen=True)
class RoundStatus:
    round_id: str
    strategy: str
    adaptive: bool
    grades: tuple[int, ...]
    n_topics: int
    queued: int
    judged: int
    assessors: list[str]


@dataclass(frozen=True)
class Throughput:
    """One person's work: judgments per hour of recorded judging time, median seconds each."""

    assessor_id: str
    judgments: int
    retracts: int
    median_seconds: float | None
    per_hour: float | None
    last_at: object


@dataclass
class RoundDetail:
    status: RoundStatus
    topics: list[dict]
    throughput: list[Throughput]
    agreement: object | None
    agreement_problem: str | None
    adjudication: list[dict]
    grades: list[Grade] = field(default_factory=list)


def round_statuses(store: Store) -> list[RoundStatus]:
    rows = store.sql("round ids", "SELECT round_id FROM rounds ORDER BY created_at, round_id").fetchall()
    return [_round_status(store, get_round(store, r[0])) for r in rows]


def _round_status(store: Store, rnd: Round, answered: pa.Table | None = None,
                  counted: pa.Table | None = None) -> RoundStatus:
    """A round's progress; answered and counted: its `effective_judgments(..., answers=True)`
    and `effective_judgments(..., people_only=False)` when the caller has read them already."""
    queued = store.one("queued", "SELECT count(*) FROM pool_entries WHERE round_id = ?", [rnd.round_id])
    people = round_people(store, rnd.round_id)
    if rnd.crowd:  # progress at K; its workers are whoever answered
        reached = sum(reached_per_topic(store, rnd.round_id).values())
        if answered is None:
            answered = effective_judgments(store, rnd.round_id, answers=True)
        people = sorted(set(answered["assessor_id"].to_pylist()))
        return RoundStatus(rnd.round_id, rnd.strategy, rnd.adaptive, rnd.grades, len(rnd.topics),
                           queued[0], reached, people)
    if counted is None:  # judges' pairs count too
        counted = effective_judgments(store, rnd.round_id, people_only=False)
    pairs = set(zip(counted["query_id"].to_pylist(), counted["doc_id"].to_pylist(), strict=True))
    return RoundStatus(rnd.round_id, rnd.strategy, rnd.adaptive, rnd.grades, len(rnd.topics),
                       queued[0], len(pairs), people)


def reached_per_topic(store: Store, round_id: str) -> dict[tuple[str, str], int]:
    """A crowd round's progress: {(round_id, query_id): queued pairs, gold left out, with
    answers from K people}; {} for any other round."""
    rnd = get_round(store, round_id)
    if not rnd.crowd:
        return {}
    gold = {(q, d) for q, docs in gold_pairs(store, rnd, every=True).items() for d in docs}
    queued = set(store.sql("queued pairs", "SELECT query_id, doc_id FROM pool_entries WHERE "
                           "round_id = ?", [round_id]).fetchall())
    out = {(round_id, q): 0 for q in rnd.topics}
    for (q, d), n in answers_per_pair(store, round_id).items():
        if n >= rnd.redundancy and (q, d) in queued and (q, d) not in gold:
            out[(round_id, q)] = out.get((round_id, q), 0) + 1
    return out



def throughput(store: Store, round_id: str | None = None) -> list[Throughput]:
    """Per-person counts and speed, over one round or all of them."""
    rows = store.sql(
        "throughput",
        """
        SELECT assessor_id,
               count(*) FILTER (WHERE kind = 'judge')    AS judgments,
               count(*) FILTER (WHERE kind = 'retract')  AS retracts,
               median(seconds) FILTER (WHERE kind = 'judge') AS median_seconds,
               sum(seconds) FILTER (WHERE kind = 'judge')    AS seconds_total,
               max(judged_at) AS last_at
        FROM judgments
        WHERE ?::VARCHAR IS NULL OR round_id = ?
        GROUP BY assessor_id ORDER BY assessor_id
        """,
        [round_id, round_id],
    ).fetchall()
    return [Throughput(a, n, r, med, (n * 3600.0 / total) if total else None, last)
            for a, n, r, med, total, last in rows]


def people(store: Store) -> list[dict]:
    """Everyone who may log in, with `revoked` true while their token is revoked."""
    return store.arrow("people", "SELECT assessor_id, name, role, created_at, "
                                 "token_sha256 = '' AS revoked FROM assessors "
                                 "ORDER BY role, assessor_id").to_pylist()


def qrels_versions(store: Store) -> list[dict]:
    """Every qrels version, oldest first; `default` marks the one commands use unasked."""
    default = store.default_qrels()
    rows = store.arrow("qrels versions", "SELECT name, method, n_topics, n_rows, created_at "
                                         "FROM qrels_versions ORDER BY created_at, name").to_pylist()
    return [{**r, "default": r["name"] == default} for r in rows]


def round_detail(store: Store, round_id: str) -> RoundDetail | None:
    """Per-topic progress, throughput, agreement so far and the adjudication queue of a round."""
    from pooling.errors import PoolingError
    from pooling.judging.rules import adjudication_queue, round_agreement

    rnd = find_round(store, round_id)
    if rnd is None:
        return None
    # Read twice: the current answers (unjudgeable ones too), and every graded pair (progress
    # counts judges' too); people's grades (what agreement and adjudication compare) are the
    # latter without the automatic judges' rows, as the replay is per assessor.
    answered = effective_judgments(store, round_id, answers=True)
    counted = effective_judgments(store, round_id, people_only=False)
    judges = [a for (a,) in store.sql("automatic judges", "SELECT assessor_id FROM assessors "
                                      "WHERE kind = 'model'").fetchall()]
    judged = counted.filter(pc.invert(pc.is_in(counted["assessor_id"],
                                                pa.array(judges, pa.string()))))
    status = _round_status(store, rnd, answered, counted)
    titles = dict(store.sql("topic titles", "SELECT query_id, title FROM topics").fetchall())
    queued = dict(store.sql("queued per topic", "SELECT query_id, count(*) FROM pool_entries "
                            "WHERE round_id = ? GROUP BY query_id", [round_id]).fetchall())
    per_topic: dict[str, dict] = {
        q: {"query_id": q, "title": titles.get(q), "queued": queued.get(q, 0), "pairs": set(),
            "assessors": []} for q in rnd.topics}
    for q, d in zip(counted["query_id"].to_pylist(), counted["doc_id"].to_pylist(), strict=True):
        per_topic.setdefault(q, {"query_id": q, "title": titles.get(q), "queued": 0,
                                 "pairs": set(), "assessors": []})["pairs"].add(d)
    if rnd.crowd:
        # A crowd's workers are handed pairs as they come, nothing is assigned to one: each
        # topic shows how many answered it (one pass), not thousands of judged/assigned rows.
        workers: dict[str, set[str]] = {}
        for q, a in zip(answered["query_id"].to_pylist(), answered["assessor_id"].to_pylist(),
                        strict=True):
            workers.setdefault(q, set()).add(a)
        for q, topic in per_topic.items():
            topic["workers"] = len(workers.get(q, ()))
    else:
        for a in status.assessors:
            items = Counter(assigned_items(store, round_id, a)["query_id"].to_pylist())
            done = _judged_per_topic(store, round_id, a)
            for q in sorted(items):
                per_topic[q]["assessors"].append({"assessor_id": a, "assigned": items[q],
                                                  "judged": done[q]})
    topics = [dict(per_topic[q], judged=len(per_topic[q].pop("pairs")))
              for q in in_topic_order(per_topic)]
    report, problem = None, None
    try:
        report = round_agreement(store, round_id, judged=judged)
    except PoolingError as exc:
        problem = str(exc)
    queue = sorted(adjudication_queue(store, round_id, judged=judged).to_pylist(),  # stable: topics in order
                   key=lambda row: topic_key(row["query_id"]))
    return RoundDetail(status, topics, throughput(store, round_id), report, problem, queue,
                       scale_of(rnd))
