"""Automatic judges in the store: assessors of kind `model`, and the job that lets one judge
pairs (a round, a qrels version's pairs, or a file of pairs) as a `PairQueue` hands them out:
all at once when they are known in advance, an adaptive round's a document per topic at a
time (see `pooling.judging.queue`).

A judge's identity is its backend, model, prompt (text and sha256) and parameters; API keys
are never stored, only the name of the environment variable that holds one. `judge_pairs`
commits a batch at a time (see docs/architecture.md, "How organiser tools write to a served
store"): each call's answer goes to `judge_calls` first, then the judgments, whose submission
ids are derived from (judge, round, topic, document). So a job killed at any point and run
again judges no pair twice and calls the model for no pair it already has an answer for:
answers are cached by (model, prompt sha256, query_id, doc_id) for backends that learn
nothing from the judgments, and a pair already judged is not asked again.

In a subtopic round a judge is asked once per document and subtopic (`judge_subtopics`): the
pair it grades has the topic's title as its query and the subtopic's text as its
description (no narrative), its calls and answers are recorded with the subtopic, and its
judgments name the subtopic, with ids derived from it too.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from pooling.errors import FormatError, Problem, StoreError
from pooling.formats.source import check_file
from pooling.judges.backends import BACKENDS, DEFAULT_PROMPT, FAILED, OK, Pair, Verdict, backend
from pooling.judges.backends.base import checked_params, needs_of
from pooling.judges.backends.prompt import check_template, prompt_sha256
from pooling.judging.assessors import slug
from pooling.judging.history import Judgment, effective_judgments, find_judge
from pooling.judging.item_types import ItemType
from pooling.judging.judgments import append_judgments
from pooling.judging.queue import AdaptiveQueue, ListQueue, PairQueue, judged_by, round_queue
from pooling.judging.rounds import Round, get_round
from pooling.store.core import Store, utcnow
from pooling.terminal.progress import NoProgress, Progress

BATCH = 32  # pairs per commit: small enough that a crash loses little, large enough to be cheap
_NO_TOKEN = "model:"  # token_sha256 of a judge: no token hashes to it, so a judge cannot log in


@dataclass(frozen=True)
class Judge:
    """A model judge as stored: who it is and how it judges."""

    judge_id: str
    backend: str
    model: str | None
    prompt: str | None
    prompt_sha256: str | None
    params: dict[str, Any]
    sample: int | None = None  # a jury's sample juror: its number (2, 3, ...) of judge `of`
    of: str | None = None  # the judge whose sample this juror is

    @property
    def needs_text(self) -> bool:
        """Whether the judge reads the pair's texts (a pair without text fails unasked); a
        command judge declared with needs=ids reads the documents itself."""
        return needs_of(self.backend, self.params) == "text"

    @property
    def caches_answers(self) -> bool:
        """Whether an answer may be reused for the same pair: not for a judge that learns from
        the judgments, whose answer changes as people judge."""
        return not BACKENDS[self.backend].trains


def add_judge(store: Store, name: str, backend_name: str, params: dict[str, Any] | None = None,
              *, prompt: str | None = None) -> Judge:
    """Store a judge: its parameters checked against the backend's declared ones, and for a
    prompted backend its prompt (the default UMBRELA-style one unless given) and sha256."""
    if backend_name not in BACKENDS:
        raise StoreError(f"unknown judge backend {backend_name!r}; known: {', '.join(sorted(BACKENDS))}")
    spec = BACKENDS[backend_name]
    given = dict(params or {})
    checked = checked_params(spec, given)
    needs_of(backend_name, checked)
    if prompt is not None and not spec.prompted:
        raise StoreError(f"judge backend {backend_name!r} takes no prompt; leave --prompt out")
    if spec.prompted:
        prompt = DEFAULT_PROMPT if prompt is None else prompt
        check_template(prompt)
    judge_id = slug(name)
    if store.one("find assessor", "SELECT 1 FROM assessors WHERE assessor_id = ?", [judge_id]):
        raise StoreError(f"an assessor or judge {judge_id!r} exists already; give the judge another name")
    model = checked.get("model") or checked.get("command") or (
        "tfidf-logistic-regression" if spec.trains else None)
    sha = prompt_sha256(prompt) if prompt is not None else None
    stored_params = {k: v for k, v in checked.items() if v is not None}
    with store.transaction() as con:
        con.execute(
            "INSERT INTO assessors (assessor_id, name, contact, role, token_sha256, created_at, "
            "kind, backend, model, prompt, prompt_sha256, params) "
            "VALUES (?, ?, NULL, 'assessor', ?, ?, 'model', ?, ?, ?, ?, ?)",
            [judge_id, name, _NO_TOKEN + secrets.token_hex(8), utcnow(), backend_name, model,
             prompt, sha, json.dumps(stored_params, sort_keys=True)])
    return Judge(judge_id, backend_name, model, prompt, sha, stored_params)


SAMPLE_KEYS = ("jury_sample", "jury_of")  # a sample juror's stored params: its number, its judge


def stored_judge(judge_id: str, backend_name: str, model: str | None, prompt: str | None,
                 sha: str | None, params: dict[str, Any]) -> Judge:
    """A judge from its stored row: a sample juror's number and judge are kept apart from the
    backend's parameters (`pooling.judges.juries`)."""
    backend_params = {k: v for k, v in params.items() if k not in SAMPLE_KEYS}
    return Judge(judge_id, backend_name, model, prompt, sha, backend_params,
                 params.get("jury_sample"), params.get("jury_of"))


def add_sample_juror(store: Store, judge: Judge, sample: int) -> Judge:
    """Sample `sample` (2, 3, ...) of a judge as a juror of its own (`pooling.judges.juries`):
    an assessor of kind model with the judge's backend, model, prompt and parameters, id
    `JUDGE-sample-N`; stored once, found again after."""
    juror_id = f"{judge.judge_id}-sample-{sample}"
    row = store.one("find juror", "SELECT kind, params FROM assessors WHERE assessor_id = ?",
                    [juror_id])
    if row is not None:
        params = json.loads(row[1] or "{}")
        if row[0] != "model" or params.get("jury_of") != judge.judge_id:
            raise StoreError(f"an assessor {juror_id!r} exists already and is not sample {sample} "
                             f"of judge {judge.judge_id!r}; rename it to sample this judge")
        return get_judge(store, juror_id)
    stored = {**judge.params, "jury_sample": sample, "jury_of": judge.judge_id}
    with store.transaction() as con:
        con.execute(
            "INSERT INTO assessors (assessor_id, name, contact, role, token_sha256, created_at, "
            "kind, backend, model, prompt, prompt_sha256, params) "
            "VALUES (?, ?, NULL, 'assessor', ?, ?, 'model', ?, ?, ?, ?, ?)",
            [juror_id, f"{judge.judge_id} sample {sample}", _NO_TOKEN + secrets.token_hex(8),
             utcnow(), judge.backend, judge.model, judge.prompt, judge.prompt_sha256,
             json.dumps(stored, sort_keys=True)])
    return stored_judge(juror_id, judge.backend, judge.model, judge.prompt, judge.prompt_sha256,
                        stored)


def get_judge(store: Store, name: str) -> Judge:
    """A stored judge by id or name; a person's name is refused with what to do."""
    judge_id, params = find_judge(store, name)
    row = store.one("judge", "SELECT backend, model, prompt, prompt_sha256 FROM assessors "
                    "WHERE assessor_id = ?", [judge_id])
    return stored_judge(judge_id, row[0], row[1], row[2], row[3], params)


def list_judges(store: Store) -> list[Judge]:
    """Every model judge (and a jury's sample jurors), in the order added."""
    rows = store.con.execute(
        "SELECT assessor_id, backend, model, prompt, prompt_sha256, params FROM assessors "
        "WHERE kind = 'model' ORDER BY created_at, assessor_id").fetchall()
    return [stored_judge(r[0], r[1], r[2], r[3], r[4], json.loads(r[5] or "{}")) for r in rows]


# -- which pairs --------------------------------------------------------------------------


def round_pairs(store: Store, round_id: str) -> list[tuple[str, str]]:
    """A round's pool, in queue order (an adaptive round: the documents chosen so far; to
    judge a round, `judge_round` also chooses an adaptive round's next ones)."""
    get_round(store, round_id)
    return [tuple(r) for r in store.con.execute(
        "SELECT query_id, doc_id FROM pool_entries WHERE round_id = ? ORDER BY query_id, position",
        [round_id]).fetchall()]


def qrels_pairs(store: Store, version: str) -> list[tuple[str, str]]:
    """The pairs of a qrels version (so a judge can be set against those judgments)."""
    version = store.resolve_qrels(version)
    return [tuple(r) for r in store.con.execute(
        "SELECT query_id, doc_id FROM qrels WHERE version = ? ORDER BY query_id, doc_id",
        [version]).fetchall()]


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """Pairs from a file: `query_id doc_id` per line, or qrels lines (`query_id 0 doc_id rel`),
    or run lines (`query_id Q0 doc_id rank score tag`); blank and `#` lines are skipped."""
    source = str(path)
    pairs: list[tuple[str, str]] = []
    problems: list[Problem] = []
    check_file(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise StoreError(f"{source} is not UTF-8 text; save it as UTF-8") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) == 2:
            pairs.append((fields[0], fields[1]))
        elif len(fields) in (4, 6):
            pairs.append((fields[0], fields[2]))
        else:
            problems.append(Problem(source, number, f"expected 2 (query_id doc_id), 4 (qrels) or "
                                    f"6 (run) columns, found {len(fields)}"))
    if problems:
        raise FormatError(problems, hint="Each line names one pair to judge.")
    return list(dict.fromkeys(pairs))


# -- the job ------------------------------------------------------------------------------


@dataclass
class JudgeReport:
    """What a judging job did."""

    judge_id: str
    pairs: int = 0  # asked for (an adaptive round: judged before plus chosen now)
    already: int = 0  # judged by this judge before: not asked again
    judged: int = 0  # judgments stored now
    cached: int = 0  # of those, answered from the cache (no model call)
    failed: int = 0  # calls that gave no grade (recorded in judge_calls with why)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)  # a few of the reasons, for the person
    round: Round | None = None  # the round judged, if any
    open_topics: int = 0  # an adaptive round: topics with more to judge (--limit stopped them)
    stuck_topics: int = 0  # an adaptive round: topics whose next document failed now

    @property
    def adaptive(self) -> bool:
        return self.round is not None and self.round.adaptive


def judge_pairs(
    store: Store,
    judge_name: str,
    pairs: Sequence[tuple[str, str]],
    *,
    round_id: str | None = None,
    limit: int | None = None,
    overrides: dict[str, Any] | None = None,
    progress: Progress | None = None,
    batch: int = BATCH,
    engine: str = "local",
    ray_address: str | None = None,
) -> JudgeReport:
    """Let a judge judge `pairs` (those it has not judged yet in this round, or outside any
    round when round_id is None), storing its judgments a batch at a time.

    overrides: run-time parameters of the backend (concurrency, timeout, ...) that do not
    change the judge's identity; its model and prompt cannot be overridden. engine "ray"
    sends the batches to judge actors on a Ray cluster; this process alone writes the store.
    """
    judge = get_judge(store, judge_name)
    if round_id is not None and get_round(store, round_id).item.has_parts:
        raise StoreError(f"round {round_id!r} judges subtopics: a judge grades each of its "
                         f"documents on each subtopic with `pooling judge --round {round_id}` "
                         "(without a list of pairs)")
    queue = ListQueue(pairs, judged_by(store, judge.judge_id, round_id))
    return judge_queue(store, judge, queue, round_id=round_id, limit=limit, overrides=overrides,
                       progress=progress, batch=batch, engine=engine, ray_address=ray_address)


def judge_round(
    store: Store,
    judge_name: str,
    round_id: str,
    *,
    limit: int | None = None,
    overrides: dict[str, Any] | None = None,
    progress: Progress | None = None,
    batch: int = BATCH,
    engine: str = "local",
    ray_address: str | None = None,
) -> JudgeReport:
    """Let a judge work a round as an assessor does (`pooling.judging.queue.round_queue`): a
    static round's pool, or an adaptive round's documents chosen one per topic from the grades
    so far, each next one after the grade of the one before is stored; up to the round's
    budget, or `limit` judgments now. Other arguments as for `judge_pairs`."""
    judge = get_judge(store, judge_name)
    rnd = get_round(store, round_id)
    if rnd.item.has_parts:
        return judge_subtopics(store, judge, rnd, limit=limit, overrides=overrides,
                               progress=progress, batch=batch, engine=engine)
    if rnd.adaptive and engine != "local":
        raise StoreError(
            f"round {round_id!r} is adaptive ({rnd.strategy}): it chooses each topic's next "
            "document after the grade of the one before, so it has no list of pairs to send to "
            f"judge actors on --engine {engine}; judge it with --engine local")
    queue = round_queue(store, round_id, judge.judge_id)
    return judge_queue(store, judge, queue, round_id=round_id, limit=limit, overrides=overrides,
                       progress=progress, batch=batch, engine=engine, ray_address=ray_address)


def judge_queue(
    store: Store,
    judge: Judge,
    queue: PairQueue,
    *,
    round_id: str | None = None,
    limit: int | None = None,
    overrides: dict[str, Any] | None = None,
    progress: Progress | None = None,
    batch: int = BATCH,
    engine: str = "local",
    ray_address: str | None = None,
) -> JudgeReport:
    """The judging loop: take the queue's next pairs, judge them (cached answers first, then
    the model), store the verdicts a batch at a time, and ask the queue again, until it has
    nothing more or `limit` pairs were handed out."""
    if engine != "local":
        from pooling.runner import check_engine

        check_engine(engine)
    start = time.monotonic()
    progress = progress or NoProgress()
    report = JudgeReport(judge.judge_id, already=queue.judged_before,
                         round=get_round(store, round_id) if round_id is not None else None)
    left = None if limit is None else max(limit, 0)
    total = queue.remaining()
    if left is not None:
        total = left if total is None else min(total, left)
    job = _Job(store, judge, queue, round_id, report, progress, batch, engine, ray_address,
               overrides or {})
    started = False
    try:
        while left is None or left > 0:
            todo = queue.next_pairs(left)
            if not todo:
                break
            if not started:
                progress.start(f"judging with {judge.judge_id}", total=total)
                started = True
            if left is not None:
                left -= len(todo)
            job.run(todo)
    finally:
        job.close()
        progress.finish()
    report.pairs = queue.pairs
    if isinstance(queue, AdaptiveQueue):
        report.stuck_topics = len(queue.stuck)
        report.open_topics = len(queue.round.topics) - len(queue.done) - len(queue.stuck)
    report.seconds = time.monotonic() - start
    return report


@dataclass
class _Job:
    """One judging job's backend (built on first need) and how it stores what it hears."""

    store: Store
    judge: Judge
    queue: PairQueue
    round_id: str | None
    report: JudgeReport
    progress: Progress
    batch: int
    engine: str
    ray_address: str | None
    overrides: dict[str, Any]
    model: Any = None

    def run(self, todo: list[tuple[str, str]]) -> None:
        """Judge these pairs: cached answers, then failures for pairs without text (never
        judged blind), then the model's verdicts as they arrive."""
        store, judge = self.store, self.judge
        cache = _cached_answers(store, judge, todo) if judge.caches_answers else {}
        texts = _pairs_with_texts(store, todo)
        ready = [_verdict_from_cache(texts[p], cache[p]) for p in todo if p in cache]
        self.report.cached += len(ready)
        for chunk in _chunks(ready, self.batch):
            self._store(chunk, [])
        asked = [_as_sample(texts[p], judge) for p in todo if p not in cache]
        textless = [pair for pair in asked
                    if judge.needs_text and not (pair.doc_text or pair.doc_title)]
        if textless:
            missing = [_no_text(pair) for pair in textless]
            for chunk in _chunks(missing, self.batch):
                self._store(chunk, chunk)
            asked = [pair for pair in asked if pair.doc_text or pair.doc_title]
        if asked and self.engine != "local":
            from pooling.judges.distributed import judge_on_ray

            name, options = _backend_options(store, judge, self.queue.query_ids, self.overrides)
            for verdicts in judge_on_ray(name, options, asked, self.batch,
                                         ray_address=self.ray_address):
                self._store(verdicts, verdicts)
        elif asked:
            if self.model is None:
                self.model = _backend(store, judge, self.queue.query_ids, self.overrides)
            for verdicts in _chunks(self.model.judge(asked), self.batch):
                self._store(verdicts, verdicts)

    def _store(self, verdicts: list[Verdict], calls: list[Verdict]) -> None:
        _store_batch(self.store, self.judge, self.round_id, verdicts, calls, self.report)
        self.queue.failed((v.query_id, v.doc_id) for v in verdicts if v.status != OK)
        self.progress.advance(len(verdicts))

    def close(self) -> None:
        if self.model is not None:
            self.model.close()


def _no_text(pair: Pair) -> Verdict:
    """The failure of a pair whose document has no text in the store (never judged blind)."""
    return Verdict(pair.query_id, pair.doc_id, FAILED, None, None, None,
                   f"the store has no text for document {pair.doc_id!r}; import the documents "
                   "(`pooling import docs`) and judge again, or, if the judge program reads the "
                   "documents itself (a licensed corpus), add a judge with the parameter "
                   "needs=ids",
                   None, None, 0.0)


def _as_sample(pair: Pair, judge: Judge) -> Pair:
    """The pair as a sample juror asks it: with its sample number."""
    return pair if judge.sample is None else replace(pair, sample=judge.sample)


def submission_id(judge_id: str, round_id: str | None, query_id: str, doc_id: str) -> str:
    """The id of a judge's judgment of a pair: the same pair in the same round always gets the
    same id, so storing it twice stores it once."""
    digest = hashlib.sha256(json.dumps([judge_id, round_id, query_id, doc_id]).encode())
    return f"judge-{digest.hexdigest()[:40]}"


# judge_calls' columns as `record_calls` writes them, with their Arrow types.
_CALL_COLUMNS = (
    ("judge_id", pa.string()), ("model", pa.string()), ("prompt_sha256", pa.string()),
    ("query_id", pa.string()), ("doc_id", pa.string()), ("status", pa.string()),
    ("grade", pa.int64()), ("probability", pa.float64()), ("answer", pa.string()),
    ("error", pa.string()), ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
    ("seconds", pa.float64()), ("called_at", pa.timestamp("us")), ("part", pa.string()),
    ("sample", pa.int64()), ("round_id", pa.string()),
)
_CALLS_VIEW = "_judge_calls_made"


def record_calls(store: Store, judge: Judge, round_id: str | None,
                 calls: Sequence[tuple[str, str, str | None, Verdict]]) -> None:
    """Store the calls made now, in order: (query_id, doc_id, part or None, the verdict:
    answer, failure, tokens), all at one time, in one statement over an Arrow table (binding
    seventeen values a row, one row at a time, cost more than the judge's own work)."""
    now = utcnow()
    rows = [(judge.judge_id, judge.model, judge.prompt_sha256, q, d, v.status, v.grade,
             v.probability, v.answer, v.error, v.prompt_tokens, v.completion_tokens, v.seconds,
             now, part, judge.sample, round_id) for q, d, part, v in calls]
    columns = list(zip(*rows, strict=True))
    table = pa.table([pa.array(c, t) for c, (_, t) in zip(columns, _CALL_COLUMNS, strict=True)],
                     names=[name for name, _ in _CALL_COLUMNS])
    names = ", ".join(name for name, _ in _CALL_COLUMNS)
    with store.transaction() as con:
        con.register(_CALLS_VIEW, table)
        try:
            con.execute(f"INSERT INTO judge_calls ({names}) SELECT {names} FROM {_CALLS_VIEW}")
        finally:
            con.unregister(_CALLS_VIEW)


def _store_batch(store: Store, judge: Judge, round_id: str | None, verdicts: list[Verdict],
                 calls: list[Verdict], report: JudgeReport) -> None:
    """Record the calls (answers, failures, tokens), then the judgments of the graded pairs."""
    if calls:
        record_calls(store, judge, round_id, [(v.query_id, v.doc_id, None, v) for v in calls])
        for v in calls:
            report.prompt_tokens += v.prompt_tokens or 0
            report.completion_tokens += v.completion_tokens or 0
    graded = [v for v in verdicts if v.status == OK and v.grade is not None]
    for v in verdicts:
        if v.status != OK:
            report.failed += 1
            if len(report.failures) < 5:
                report.failures.append(f"{v.query_id} {v.doc_id}: {v.error}")
    judgments = [Judgment(round_id, judge.judge_id, v.query_id, v.doc_id, v.grade,
                          probability=v.probability, rationale=v.answer,
                          submission_id=submission_id(judge.judge_id, round_id, v.query_id, v.doc_id))
                 for v in graded]
    stored, _ = append_judgments(store, judgments)
    report.judged += stored


def _cached_answers(store: Store, judge: Judge, keys: list[tuple], *,
                    subtopics: bool = False) -> dict[tuple, tuple]:
    """The latest graded answer by the same model and prompt per pair (query_id, doc_id), or
    with `subtopics` per (query_id, doc_id, subtopic) of a subtopic round's calls; a jury's
    sample juror reads its own sample's answers only (sample 1 is the judge's own)."""
    if not keys:
        return {}
    # Only the keys asked about are read (a join on them), so a batch costs what it asks,
    # not what the judge has answered before.
    columns = list(zip(*keys, strict=True))
    parts = list(columns[2]) if subtopics else [None] * len(keys)
    rows = store.con.execute(
        "SELECT c.query_id, c.doc_id, c.part, c.grade, c.probability, c.answer FROM judge_calls c "
        "JOIN (SELECT UNNEST(?) AS query_id, UNNEST(?) AS doc_id, UNNEST(?::VARCHAR[]) AS part) k "
        "ON c.query_id = k.query_id AND c.doc_id = k.doc_id "
        "AND c.part IS NOT DISTINCT FROM k.part "
        "WHERE c.model IS NOT DISTINCT FROM ? AND c.prompt_sha256 IS NOT DISTINCT FROM ? "
        "AND c.status = 'ok' AND c.grade IS NOT NULL AND (c.part IS NOT NULL) = ? "
        "AND coalesce(c.sample, 1) = ? ORDER BY c.called_at, c.rowid",
        [list(columns[0]), list(columns[1]), parts, judge.model, judge.prompt_sha256, subtopics,
         judge.sample or 1]).fetchall()
    out = {}
    for q, d, s, g, p, a in rows:
        out[(q, d, s) if subtopics else (q, d)] = (g, p, a)
    return out


def _verdict_from_cache(pair: Pair, answer: tuple) -> Verdict:
    grade, probability, text = answer
    return Verdict(pair.query_id, pair.doc_id, OK, grade, probability, text, None, None, None, 0.0,
                   pair.subtopic)


def _pairs_with_texts(store: Store, pairs: list[tuple[str, str]],
                      item: ItemType | None = None) -> dict[tuple[str, str], Pair]:
    """Each pair with its topic's and unit's texts (None where the store has none): a
    document's from the documents table, another unit's where its item type reads it."""
    queries = sorted({q for q, _ in pairs})
    docs = sorted({d for _, d in pairs})
    topics = {r[0]: r[1:] for r in store.con.execute(
        "SELECT query_id, title, description, narrative FROM topics WHERE query_id IN "
        "(SELECT UNNEST(?))", [queries]).fetchall()}
    if item is not None and item.unit_texts is not None:
        units = item.unit_texts(store, pairs)
    else:
        by_doc = {r[0]: r[1:] for r in store.con.execute(
            "SELECT doc_id, title, text FROM documents WHERE doc_id IN (SELECT UNNEST(?))",
            [docs]).fetchall()}
        units = {(q, d): by_doc[d] for q, d in pairs if d in by_doc}
    out = {}
    for q, d in pairs:
        title, description, narrative = topics.get(q, (q, None, None))
        doc_title, doc_text = units.get((q, d), (None, None))
        out[(q, d)] = Pair(q, d, title or q, description, narrative, doc_title, doc_text)
    return out


def _backend(store: Store, judge: Judge, query_ids: Iterable[str], overrides: dict[str, Any]):
    """The judge's backend, with run-time overrides; a learning judge gets the people's
    current judgments of the topics it is asked about, with the documents' texts."""
    name, options = _backend_options(store, judge, query_ids, overrides)
    return backend(name, **options)


def judge_backend(store: Store, judge: Judge, query_ids: Iterable[str],
                  overrides: dict[str, Any] | None = None):
    """The judge's backend built as `pooling judge` builds it, for the other model steps
    (nugget creation) that go through the same backends."""
    return _backend(store, judge, query_ids, overrides or {})


def _backend_options(store: Store, judge: Judge, query_ids: Iterable[str],
                     overrides: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(backend name, its keyword arguments) as `_backend` builds it: what a judge actor on
    another machine needs to build the same backend."""
    spec = BACKENDS[judge.backend]
    params = {**judge.params, **{k: v for k, v in overrides.items() if v is not None}}
    fixed = {k for k in ("model", "command") if k in overrides and overrides[k] != judge.params.get(k)}
    if fixed:
        raise StoreError(f"{', '.join(sorted(fixed))} is part of judge {judge.judge_id!r}'s "
                         "identity; add another judge to change it")
    training = _training(store, query_ids) if spec.trains else None
    return judge.backend, {"prompt": judge.prompt if spec.prompted else None,
                           "training": training, **params}


def _training(store: Store, query_ids: Iterable[str]) -> pa.Table:
    """People's current judgments of these topics (the latest one per pair), with texts:
    query_id, doc_id, grade, doc_title, doc_text."""
    wanted = set(query_ids)
    people = effective_judgments(store)  # people only: judges are left out
    latest: dict[tuple[str, str], tuple[int, int]] = {}
    for q, d, g, s in zip(*(people[c].to_pylist() for c in ("query_id", "doc_id", "grade", "seq")),
                          strict=True):
        if q not in wanted or g is None:
            continue
        if (q, d) not in latest or s > latest[(q, d)][1]:
            latest[(q, d)] = (g, s)
    docs = sorted({d for _, d in latest})
    texts = {r[0]: r[1:] for r in store.con.execute(
        "SELECT doc_id, title, text FROM documents WHERE doc_id IN (SELECT UNNEST(?))",
        [docs]).fetchall()}
    rows = [{"query_id": q, "doc_id": d, "grade": g, "doc_title": texts.get(d, (None, None))[0],
             "doc_text": texts.get(d, (None, None))[1]} for (q, d), (g, _) in sorted(latest.items())]
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("query_id", pa.string()), ("doc_id", pa.string()), ("grade", pa.int64()),
        ("doc_title", pa.string()), ("doc_text", pa.string())]))


def _chunks(items: Iterable[Verdict], size: int) -> Iterator[list[Verdict]]:
    chunk: list[Verdict] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# -- subtopic rounds ----------------------------------------------------------------------

Item = tuple[str, str, str]  # (query_id, doc_id, subtopic): what a subtopic round's judge grades


def subtopic_submission_id(judge_id: str, round_id: str, item: Item) -> str:
    """The id of a judge's judgment of a document on one subtopic (as `submission_id`)."""
    digest = hashlib.sha256(json.dumps([judge_id, round_id, *item]).encode())
    return f"judge-{digest.hexdigest()[:40]}"


def judge_subtopics(store: Store, judge: Judge, rnd: Round, *, limit: int | None = None,
                    overrides: dict[str, Any] | None = None, progress: Progress | None = None,
                    batch: int = BATCH, engine: str = "local") -> JudgeReport:
    """Let a judge grade a static subtopic round's documents on each of their topic's
    subtopics (module doc), those it has not graded yet, up to `limit` now; a batch at a time,
    so a job run again asks for nothing it has stored (nor, for a judge that learns nothing,
    anything it has an answer for)."""
    if rnd.adaptive or engine != "local":
        raise StoreError(f"round {rnd.round_id!r} judges subtopics: a judge works a static "
                         "subtopic round, in this process (--engine local)")
    start = time.monotonic()
    progress = progress or NoProgress()
    report = JudgeReport(judge.judge_id, round=rnd)
    done = {tuple(r) for r in store.con.execute(
        "SELECT query_id, doc_id, part FROM judgments WHERE assessor_id = ? AND kind = 'judge' "
        "AND round_id = ?", [judge.judge_id, rnd.round_id]).fetchall()}
    items = [(q, d, s) for q, d in round_pairs(store, rnd.round_id) for s in rnd.parts_of(q)]
    todo = [i for i in items if i not in done]
    report.pairs, report.already = len(items), len(items) - len(todo)
    todo = todo if limit is None else todo[:max(limit, 0)]
    if todo:
        progress.start(f"judging with {judge.judge_id}", total=len(todo))
    model = None
    try:
        for chunk in [todo[i:i + batch] for i in range(0, len(todo), batch)]:
            asked = _subtopic_pairs(store, rnd, chunk)
            cache = (_cached_answers(store, judge, chunk, subtopics=True) if judge.caches_answers
                     else {})
            verdicts: dict[Item, Verdict] = {}
            for item in chunk:
                pair = asked[item]
                if item in cache:
                    verdicts[item] = _verdict_from_cache(pair, cache[item])
                elif judge.needs_text and not (pair.doc_text or pair.doc_title):
                    verdicts[item] = _no_text(pair)
            report.cached += sum(item in cache for item in chunk)
            # Every pair of the batch in one call (its requests in flight together): each
            # verdict names its part, so it finds its item.
            rest = {item: asked[item] for item in chunk if item not in verdicts}
            if rest:
                if model is None:
                    model = _backend(store, judge, sorted({q for q, _, _ in todo}), overrides or {})
                for v in model.judge([_as_sample(pair, judge) for pair in rest.values()]):
                    if (v.query_id, v.doc_id, v.part) in rest:
                        verdicts[(v.query_id, v.doc_id, v.part)] = v
                for item in rest:
                    verdicts.setdefault(item, Verdict(item[0], item[1], FAILED, None, None, None,
                                                      "the judge gave no answer for it", None,
                                                      None, 0.0, item[2]))
            _store_subtopic_batch(store, judge, rnd.round_id, chunk, verdicts, cache, report)
            progress.advance(len(chunk))
    finally:
        if model is not None:
            model.close()
        progress.finish()
    report.seconds = time.monotonic() - start
    return report


def _subtopic_pairs(store: Store, rnd: Round, items: list[Item]) -> dict[Item, Pair]:
    """Each item as the pair a judge grades: the topic's title as the query, the subtopic's
    text as the description, no narrative, and the document's texts."""
    texts = _pairs_with_texts(store, list(dict.fromkeys(item[:2] for item in items)), rnd.item)
    subtopics = {(q, n): t for q, subs in (rnd.parts or {}).items() for n, t in subs}
    out = {}
    for q, d, s in items:
        pair = texts[(q, d)]
        out[(q, d, s)] = Pair(q, d, pair.title, subtopics.get((q, s)) or None, None,
                              pair.doc_title, pair.doc_text, subtopic=s)
    return out


def _store_subtopic_batch(store: Store, judge: Judge, round_id: str, items: list[Item],
                          verdicts: dict[Item, Verdict], cached: dict[Item, tuple],
                          report: JudgeReport) -> None:
    """Record the calls made now (with their subtopic), then the graded items' judgments."""
    calls = [(item, verdicts[item]) for item in items if item not in cached]
    if calls:
        record_calls(store, judge, round_id, [(q, d, s, v) for (q, d, s), v in calls])
        for _, v in calls:
            report.prompt_tokens += v.prompt_tokens or 0
            report.completion_tokens += v.completion_tokens or 0
    judgments = []
    for item in items:
        v = verdicts[item]
        if v.status != OK or v.grade is None:
            report.failed += 1
            if len(report.failures) < 5:
                report.failures.append(f"{item[0]} {item[1]} subtopic {item[2]}: {v.error}")
            continue
        judgments.append(Judgment(round_id, judge.judge_id, item[0], item[1], v.grade,
                                  probability=v.probability, rationale=v.answer,
                                  submission_id=subtopic_submission_id(judge.judge_id, round_id,
                                                                       item),
                                  part=item[2]))
    stored, _ = append_judgments(store, judgments)
    report.judged += stored
