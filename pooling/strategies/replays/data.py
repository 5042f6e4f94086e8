"""What a replay of pooling strategies needs, prepared once: the replay data and the oracle.

Replay pooling strategies against existing qrels, the oracle assessor.

Candidates are each run's top `depth`. A strategy's selector asks the `Oracle` for one
(topic, doc) at a time, up to the largest budget per topic; since no strategy knows the
budget, the first b judgments of that replay are exactly an independent replay at budget b.
Per strategy x budget we report documents judged, relevant found, the share of the depth
pool's relevant documents found (qrels grade > 0 is relevant; pooled but unjudged documents
count as non-relevant; the mean of per-topic shares, as Losada et al. report it), and how well the
MAP ranking of the runs under the judged-so-far qrels agrees with their ranking under the
whole depth pool's qrels: Kendall's tau-b and Yilmaz et al.'s tau_ap (2008).
Strategies that read the documents' text (`cal`) replay when the collection's documents are
given (`read_texts`); those that need automatic judges' grades (`uncertain`) do not replay
(`Strategy.replays`): `pooling.strategies.replays.triage` replays triage against qrels instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from pooling.errors import PoolingError
from pooling.strategies import get_strategy, rankings_by_topic
from pooling.strategies.base import INPUTS, Strategy, StrategyError, TopicRuns
from pooling.strategies.replays.correlations import mean_ap


class SimulationError(PoolingError):
    """A simulation cannot run as asked (no shared topics, a bad budget, a misbehaving strategy)."""


class Oracle:
    """Existing qrels as the assessor: answers only the (topic, doc) asked and counts questions.

    Unjudged documents get grade 0. `asked` holds every question in order.
    """

    def __init__(self, qrels: pa.Table):
        q = qrels["query_id"].to_pylist()
        d = qrels["doc_id"].to_pylist()
        g = qrels["relevance"].to_pylist()
        self._grades = {(qi, di): int(gi) for qi, di, gi in zip(q, d, g, strict=True)}
        self.asked: list[tuple[str, str]] = []

    @property
    def count(self) -> int:
        return len(self.asked)

    def judge(self, query_id: str, doc_id: str) -> int:
        self.asked.append((query_id, doc_id))
        return self._grades.get((query_id, doc_id), 0)


@dataclass(frozen=True)
class StrategySpec:
    """A strategy to replay, with the label it is reported under (`name` or `name:k=v,...`)."""

    label: str
    strategy: Strategy


def parse_strategy(spec: str) -> StrategySpec:
    """`maxmean`, `take:fusion=rbp,p=0.9`, `maxmean:variant=mm-ns` -> a checked strategy."""
    name, _, rest = spec.partition(":")
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq:
            raise StrategyError(f"strategy option {part!r} in {spec!r} must look like key=value")
        options[key.strip()] = value.strip()
    return StrategySpec(spec, get_strategy(name.strip(), **options))


@dataclass
class ReplayData:
    """Everything a replay needs, prepared once: candidates, oracle qrels, run matrices.

    run_docs: topics x runs x L global doc numbers of each run's whole ranking (the
    sentinel `n_docs` pads); pool_relevant: per global doc, relevant and in the depth pool;
    texts: the documents' text (doc_id -> text), for strategies that read it.
    """

    query_ids: list[str]
    run_ids: list[str]
    topics: dict[str, TopicRuns]
    qrels: pa.Table
    doc_number: dict[tuple[str, str], int]
    run_docs: np.ndarray
    pool_relevant: np.ndarray
    pool_relevant_per_topic: np.ndarray
    depth: int
    _truth: np.ndarray | None = field(default=None, repr=False)
    texts: Mapping[str, str] | None = field(default=None, repr=False)

    @property
    def truth_map(self) -> np.ndarray:
        """Each run's MAP under the depth pool's qrels."""
        if self._truth is None:
            self._truth = mean_ap(self.run_docs, self.pool_relevant, self.pool_relevant_per_topic)
        return self._truth

    def subset(self, query_ids: Sequence[str]) -> ReplayData:
        """The same replay restricted to `query_ids` (in that order): found share and the
        true MAP ranking are then computed over those topics only (tuning/held-out splits)."""
        wanted = [str(q) for q in query_ids]
        missing = [q for q in wanted if q not in self.topics]
        if missing:
            raise SimulationError(f"topic(s) {', '.join(missing[:10])} are not in this replay")
        rows = [self.query_ids.index(q) for q in wanted]
        return ReplayData(
            wanted,
            self.run_ids,
            {q: self.topics[q] for q in wanted},
            self.qrels,
            self.doc_number,
            self.run_docs[rows],
            self.pool_relevant,
            self.pool_relevant_per_topic[rows],
            self.depth,
            texts=self.texts,
        )


def prepare(
    qrels: pa.Table,
    runs: Mapping[str, pa.Table],
    depth: int = 100,
    query_ids: Sequence[str] | None = None,
    texts: Mapping[str, str] | None = None,
) -> ReplayData:
    """Candidates (each run's top `depth`) and evaluation matrices for the shared topics;
    `texts` (doc_id -> text, see `read_texts`) for strategies that read documents."""
    if depth < 1:
        raise SimulationError(f"--depth must be at least 1, got {depth}")
    if not runs:
        raise SimulationError("no runs given; pass at least one run file")
    full = rankings_by_topic(runs, None)
    judged_topics = set(qrels["query_id"].to_pylist())
    shared = [q for q in full if q in judged_topics]
    if query_ids is not None:
        wanted = [str(q) for q in query_ids]
        missing = [q for q in wanted if q not in full or q not in judged_topics]
        if missing:
            raise SimulationError(
                f"topic(s) {', '.join(missing[:10])} are not in both the qrels and the runs; "
                "check --topics"
            )
        shared = [q for q in shared if q in set(wanted)]
    if not shared:
        raise SimulationError(
            "the qrels and the runs share no topic; are they the same collection? If the runs "
            "write topic ids differently from the qrels, map them with --topic-map FILE"
        )
    run_ids = list(runs)
    oracle_grades = Oracle(qrels)._grades
    doc_number: dict[tuple[str, str], int] = {}
    longest = max(len(r) for q in shared for r in full[q].rankings.values())
    topics: dict[str, TopicRuns] = {}
    per_topic_rows = []
    pool_rel: list[bool] = []
    for q in shared:
        rows = []
        for run_id in run_ids:
            ranking = full[q].rankings.get(run_id, [])
            nums = []
            for d in ranking:
                key = (q, d)
                n = doc_number.get(key)
                if n is None:
                    n = doc_number[key] = len(pool_rel)
                    pool_rel.append(False)
                nums.append(n)
            rows.append(nums)
        per_topic_rows.append(rows)
        topics[q] = TopicRuns(q, {r: full[q].rankings.get(r, [])[:depth] for r in run_ids})
        for d in topics[q].candidates():
            if oracle_grades.get((q, d), 0) > 0:
                pool_rel[doc_number[(q, d)]] = True
    n_docs = len(pool_rel)
    run_docs = np.full((len(shared), len(run_ids), longest), n_docs, dtype=np.int64)
    for t, rows in enumerate(per_topic_rows):
        for s, nums in enumerate(rows):
            run_docs[t, s, : len(nums)] = nums
    pool_relevant = np.array(pool_rel + [False], dtype=bool)
    per_topic = np.array(
        [sum(1 for d in topics[q].candidates() if oracle_grades.get((q, d), 0) > 0) for q in shared]
    )
    return ReplayData(
        shared, run_ids, topics, qrels, doc_number, run_docs, pool_relevant, per_topic, depth,
        texts=texts,
    )


def read_texts(path: str) -> dict[str, str]:
    """doc_id -> title and text of a documents file (any format `pooling import docs` reads),
    as the learned judge and `cal` read them; documents without any text are left out."""
    from pooling.formats import read_documents
    from pooling.strategies.text_classifier import document_text

    table = read_documents(path)
    texts = {d: document_text(title, text) for d, title, text in zip(
        table["doc_id"].to_pylist(), table["title"].to_pylist(), table["text"].to_pylist(),
        strict=True)}
    return {d: t for d, t in texts.items() if t.strip()}


def with_inputs(data: ReplayData, spec: StrategySpec) -> Strategy:
    """The spec's strategy given what it needs from the replay, or a `SimulationError`
    saying why it cannot replay."""
    strategy = spec.strategy
    inputs: dict[str, object] = {}
    for need in strategy.needs:
        if need == "texts" and data.texts is not None:
            inputs["texts"] = data.texts
        elif need == "texts":
            raise SimulationError(
                f"strategy {spec.label!r} reads the documents' text; give the collection's "
                "documents with --docs FILE")
        else:
            triage = ("; `pooling simulate-triage` replays triage against qrels"
                      if need == "judge_grades" else "")
            raise SimulationError(
                f"strategy {spec.label!r} needs {INPUTS[need]}, which a replay does not have; "
                f"use it in `pooling pool` rounds{triage}")
    return strategy.given(**inputs) if inputs else strategy
