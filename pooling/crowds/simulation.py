"""A simulated crowd working through a round, and a gold sample drawn from an expert's qrels.

Crowd designs are tried before money is spent: how many answers per pair, how much gold, which
aggregation rule, what bar to flag workers at. `play_round` lets simulated workers, each with a
known confusion matrix (how likely they answer each grade when the truth is each grade), judge a
round through the same queue people use (`pooling.judging.queue.topic_queue`: redundancy, gold
mixed in, withdrawn workers handed nothing) and store their answers through the same checks
(`pooling.judging.judgments.record`). What they answer is drawn from the truth the caller
gives (a qrels version; pairs it does not hold are not relevant, as trec_eval reads qrels), so
what an aggregation rule recovers can be compared with what was put in.

The crowd is a mix of three kinds of worker, as crowdsourcing studies describe them: reliable
(right most of the time, errors to a neighbouring grade), sloppy (right a little over half the
time) and spammers (an answer that does not depend on the document). Workers take tasks of a
few pairs of one topic at a time (a HIT), in a seeded random order, until the round has nothing
left to hand any of them.

`gold_sample` draws gold questions for a round from an expert's qrels version: a few pairs per
topic, balanced across grades, so a worker cannot score well on gold by always answering "not
relevant".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pyarrow as pa

from pooling.errors import StoreError
from pooling.judging.assessors import MODEL, SIMULATED, add_assessor
from pooling.judging.history import Judgment
from pooling.judging.judgments import record
from pooling.judging.queue import topic_queue
from pooling.judging.rounds import Round, get_round
from pooling.store.core import Store
from pooling.store.qrels import QrelsImport, save_qrels
from pooling.terminal.progress import NoProgress, Progress

WorkerKind = Literal["reliable", "sloppy", "spammer"]
KIND_ACCURACY = {"reliable": 0.85, "sloppy": 0.55}  # P(answer = truth) of each kind
Pair = tuple[str, str]


@dataclass(frozen=True)
class SimulatedWorker:
    """A simulated worker: who, what kind, and their confusion matrix over the round's grades
    (row: the true grade, column: the answer; each row sums to 1)."""

    assessor_id: str
    kind: WorkerKind
    grades: tuple[int, ...]
    confusion: np.ndarray = field(compare=False)
    unjudgeable: float = 0.0  # P(answering "cannot judge") whatever the truth


def confusion_of(kind: WorkerKind, grades: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """A worker's confusion matrix. Reliable and sloppy workers answer the truth with their
    kind's accuracy and spread their errors over the other grades, nearer grades more likely
    (weight 1 / distance). A spammer's answer ignores the truth: every row is the same
    distribution, drawn at random (some spammers always answer one grade, most lean on one)."""
    n = len(grades)
    if kind == "spammer":
        row = rng.dirichlet(np.full(n, 0.5))
        return np.tile(row, (n, 1))
    accuracy = KIND_ACCURACY[kind]
    matrix = np.zeros((n, n))
    for t in range(n):
        weights = np.array([0.0 if a == t else 1.0 / abs(a - t) for a in range(n)])
        matrix[t] = (1 - accuracy) * weights / weights.sum() if n > 1 else 0.0
        matrix[t, t] = accuracy if n > 1 else 1.0
    return matrix


def simulated_crowd(n: int, grades: Sequence[int], *, sloppy: float = 0.3, spammers: float = 0.1,
                    unjudgeable: float = 0.0, seed: int = 0,
                    prefix: str = "worker") -> list[SimulatedWorker]:
    """`n` workers: round(n × spammers) spammers, round(n × sloppy) sloppy, the rest reliable,
    in a seeded random order, ids `worker-01` ... (`prefix`)."""
    if n < 1:
        raise StoreError(f"a crowd needs at least one worker, got {n}")
    for name, share in (("sloppy", sloppy), ("spammers", spammers)):
        if not 0 <= share <= 1:
            raise StoreError(f"--{name} is a share of the workers between 0 and 1, got {share}")
    if sloppy + spammers > 1:
        raise StoreError(f"sloppy ({sloppy}) and spammer ({spammers}) shares add up to more than 1")
    if not 0 <= unjudgeable < 1:
        raise StoreError(f"the share of 'cannot judge' answers must be in [0, 1), got {unjudgeable}")
    rng = np.random.default_rng(seed)
    n_spam = round(n * spammers)
    n_sloppy = min(round(n * sloppy), n - n_spam)
    kinds: list[WorkerKind] = (["spammer"] * n_spam + ["sloppy"] * n_sloppy
                               + ["reliable"] * (n - n_spam - n_sloppy))
    rng.shuffle(kinds)
    width = len(str(n))
    return [SimulatedWorker(f"{prefix}-{i + 1:0{max(width, 2)}d}", kind, tuple(grades),
                            confusion_of(kind, grades, rng), unjudgeable)
            for i, kind in enumerate(kinds)]


@dataclass
class CrowdPlay:
    """What a simulated crowd did in a round."""

    round_id: str
    workers: list[SimulatedWorker]
    answers: int = 0  # judgments stored (grades and "cannot judge")
    unjudgeable: int = 0
    tasks: int = 0  # tasks (a few pairs of one topic) handed out
    per_worker: dict[str, int] = field(default_factory=dict)

    def confusion_table(self) -> pa.Table:
        """Every worker's true confusion matrix: assessor_id, kind, true_grade, grade,
        probability (the layout of `pooling.crowds.model_rules.worker_confusion`)."""
        rows: dict[str, list] = {k: [] for k in ("assessor_id", "kind", "true_grade", "grade",
                                                 "probability")}
        for w in self.workers:
            for t, true in enumerate(w.grades):
                for a, answer in enumerate(w.grades):
                    for k, v in zip(rows, (w.assessor_id, w.kind, true, answer,
                                           float(w.confusion[t, a])), strict=True):
                        rows[k].append(v)
        return pa.table(rows)


def truth_grades(store: Store, version: str) -> dict[Pair, int]:
    """A qrels version's grades by (query_id, doc_id)."""
    table = store.qrels_table(version)
    return dict(zip(zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(), strict=True),
                    table["relevance"].to_pylist(), strict=True))


def play_round(store: Store, round_id: str, truth: Mapping[Pair, int],
               workers: Sequence[SimulatedWorker], *, task_size: int = 5, seed: int = 0,
               progress: Progress | None = None) -> CrowdPlay:
    """Let simulated `workers` judge round `round_id` until nothing is left to hand any of
    them: each turn a worker (at random) takes a task of up to `task_size` pairs of one topic
    from their queue, answers from their confusion matrix and the `truth` (absent pairs are
    graded 0), and the answers are stored as one submission of theirs. Workers not yet in the
    store are added as assessors of kind `simulated`: they judge as people do, and are
    counted as people nowhere (a release's datasheet counts them apart)."""
    if task_size < 1:
        raise StoreError(f"a task holds at least one pair, got {task_size}")
    rnd = get_round(store, round_id)
    if rnd.item.has_parts:
        raise StoreError(f"round {round_id!r} judges subtopics; a simulated crowd answers "
                         "plain rounds only")
    index = {g: i for i, g in enumerate(rnd.grades)}
    for w in workers:
        if w.grades != tuple(rnd.grades):
            raise StoreError(f"worker {w.assessor_id!r} answers on grades {list(w.grades)}, the "
                             f"round's scale is {list(rnd.grades)}")
    _register(store, workers)
    rng = np.random.default_rng(seed)
    play = CrowdPlay(round_id, list(workers), per_worker={w.assessor_id: 0 for w in workers})
    open_topics = {w.assessor_id: list(rnd.topics) for w in workers}
    by_id = {w.assessor_id: w for w in workers}
    progress = progress or NoProgress()
    # How many answers the crowd gives is known only at its end (gold, K): no total.
    progress.start(f"simulated crowd judging round {round_id}")
    while open_topics:
        who = list(open_topics)[int(rng.integers(len(open_topics)))]
        topics = open_topics[who]
        q = topics[int(rng.integers(len(topics)))]
        pairs = topic_queue(store, rnd, who, q).next_pairs(task_size)
        if not pairs:
            topics.remove(q)
            if not topics:
                del open_topics[who]
            continue
        answers = [_answer(by_id[who], rnd, index, truth.get(p, 0), p, rng) for p in pairs]
        record(store, answers)
        play.tasks += 1
        play.answers += len(answers)
        play.unjudgeable += sum(a.kind == "unjudgeable" for a in answers)
        play.per_worker[who] += len(answers)
        progress.advance(len(answers))
    progress.finish()
    return play


def _seconds(rng: np.random.Generator) -> float:
    """Seconds spent on an answer, drawn like people's (a few seconds to half a minute)."""
    return float(round(min(max(rng.lognormal(2.3, 0.5), 2.0), 120.0), 1))


def _answer(worker: SimulatedWorker, rnd: Round, index: Mapping[int, int], true_grade: int,
            pair: Pair, rng: np.random.Generator) -> Judgment:
    q, d = pair
    seconds = _seconds(rng)
    if worker.unjudgeable and rng.random() < worker.unjudgeable:
        return Judgment(rnd.round_id, worker.assessor_id, q, d, None, kind="unjudgeable",
                        seconds=seconds)
    row = worker.confusion[index.get(true_grade, _nearest(index, true_grade))]
    grade = rnd.grades[int(rng.choice(len(rnd.grades), p=row))]
    return Judgment(rnd.round_id, worker.assessor_id, q, d, int(grade), seconds=seconds)


def _nearest(index: Mapping[int, int], grade: int) -> int:
    """A truth grade off the round's scale (e.g. 3 on a 0-2 scale) reads as the nearest grade."""
    return index[min(index, key=lambda g: (abs(g - grade), g))]


def _register(store: Store, workers: Sequence[SimulatedWorker]) -> None:
    known = {r[0]: r[1] for r in store.con.execute(
        "SELECT assessor_id, kind FROM assessors").fetchall()}
    for w in workers:
        if w.assessor_id not in known:
            add_assessor(store, w.assessor_id, assessor_id=w.assessor_id, kind=SIMULATED)
        elif known[w.assessor_id] == MODEL:
            raise StoreError(f"{w.assessor_id!r} is an automatic judge; give the simulated "
                             "workers another --prefix")


# -- gold questions ------------------------------------------------------------------------

Where = Literal["outside-pool", "pool", "any"]


def gold_sample(store: Store, source: str, round_id: str, per_topic: int, *, name: str,
                where: Where = "outside-pool", seed: int = 0) -> QrelsImport:
    """A gold qrels version for a round: up to `per_topic` pairs of each of the round's topics
    from the expert's version `source`, taken in turn from each grade (at random within a
    grade, seeded), so the gold holds relevant and non-relevant pairs alike. Where the store
    holds document texts, only documents with one qualify (a gold page must look like any).

    `where` says which pairs qualify: only "outside-pool", pairs the round does not queue,
    since a queued pair is the crowd's to answer and never a gold question
    (`pooling.judging.rounds.gold_pairs`); "pool" and "any" are refused saying so."""
    if where != "outside-pool":
        raise StoreError(f"--where {where} would draw gold from the round's queue, and a queued "
                         "pair is never a gold question (the crowd answers it, and its answers "
                         "enter the derived qrels); leave out --where (outside-pool is the only "
                         "choice)" if where in ("pool", "any") else
                         f"--where must be outside-pool, not {where!r}")
    if per_topic < 1:
        raise StoreError(f"--per-topic must be at least 1, got {per_topic}")
    rnd = get_round(store, round_id)
    expert = store.qrels_table(source)
    pooled = {tuple(r) for r in store.con.execute(
        "SELECT query_id, doc_id FROM pool_entries WHERE round_id = ?", [round_id]).fetchall()}
    # A gold page must look like any other: where the store holds texts, a document without
    # one ("document missing") would give the gold away, so only documents with text qualify.
    with_text = {r[0] for r in store.con.execute(
        "SELECT DISTINCT doc_id FROM documents WHERE coalesce(text, title, '') <> ''").fetchall()}
    rng = np.random.default_rng(seed)
    by_topic: dict[str, dict[int, list[str]]] = {}
    topics = set(rnd.topics)
    for q, d, g in zip(*(expert[c].to_pylist() for c in ("query_id", "doc_id", "relevance")),
                       strict=True):
        if q not in topics or (q, d) in pooled or (with_text and d not in with_text):
            continue
        by_topic.setdefault(q, {}).setdefault(g, []).append(d)
    rows: list[tuple[str, str, int]] = []
    for q in sorted(by_topic):
        grades = {g: list(rng.permutation(sorted(docs))) for g, docs in sorted(by_topic[q].items())}
        taken = 0
        while taken < per_topic and any(grades.values()):
            for g in sorted(grades, reverse=True):  # relevant first: they are the scarce ones
                if grades[g] and taken < per_topic:
                    rows.append((q, str(grades[g].pop()), g))
                    taken += 1
    if not rows:
        raise StoreError(f"qrels version {source!r} has no pair of round {round_id!r}'s topics "
                         "outside its pool (a queued pair is never a gold question); choose "
                         "another version")
    rows.sort()
    table = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                      "relevance": pa.array([r[2] for r in rows], pa.int64())})
    info = store.one("source version", "SELECT grades, relevance_level FROM qrels_versions "
                     "WHERE name = ?", [source])
    return save_qrels(store, table, name, method="gold-sample", source=source,
                      grades=list(info[0]) if info and info[0] else None,
                      relevance_level=info[1] if info and info[1] is not None else 1,
                      params={"rule": "gold-sample", "source": source, "round": round_id,
                              "per_topic": per_topic, "where": where, "seed": seed})

