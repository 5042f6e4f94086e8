"""Judging rounds: a snapshot of a strategy, its parameters, seed, pooled runs and queue.

A static round stores its whole ordered queue in `pool_entries`; an adaptive round stores
its strategy and seed, and its queue grows as documents are served (each served document is
appended to `pool_entries`), so the next document is always a function of the round's
parameters and the judgments made so far.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

from pooling.errors import StoreError
from pooling.formats.ids import id_problem
from pooling.formats.trec_web import recorded_subtopics
from pooling.judging.history import effective_judgments
from pooling.judging.item_types import DOCUMENTS, SUBTOPICS, ItemType, item_type
from pooling.judging.sampled_rounds import (
    check_stratified_options,
    design_table,
    is_stratified,
    record_design,
)
from pooling.judging.storable import unstorable
from pooling.judging.strategy_inputs import strategy_inputs, topics_without_runs
from pooling.store.core import Store, utcnow
from pooling.strategies import Strategy, TopicRuns, get_strategy, rankings_by_topic, topic_seed
from pooling.strategies.options import split_budget, with_options
from pooling.strategies.params import whole_number

DEFAULT_GRADES = (0, 1, 2)
DEFAULT_GOLD_RATE = 0.1  # the share of a worker's pairs that are gold when --gold is given
MAX_REDUNDANCY = 1000


@dataclass(frozen=True)
class Round:
    """A round as stored: its strategy, parameters and the runs and topics it pools."""

    round_id: str
    strategy: str
    params: dict[str, Any]
    seed: int
    grades: tuple[int, ...]
    pooled_runs: tuple[str, ...]
    adaptive: bool
    candidate_depth: int | None
    topics: tuple[str, ...]
    item_type: str = DOCUMENTS.name  # what the round judges (`pooling.judging.item_types`)

    @property
    def item(self) -> ItemType:
        """The round's item type: its unit, parts, scale and version form."""
        return item_type(self.item_type)

    @cached_property
    def parts(self) -> dict[str, list[tuple[str, str]]] | None:
        """The parts each unit of a topic is graded on, as recorded when the round was
        created (a subtopic round's subtopics): query_id -> [(part id, text)] in the topic's
        order; None for a round grading its units whole. Read once per Round (a nugget
        round records thousands)."""
        return self.item.recorded_parts(self.params) if self.item.has_parts else None

    @property
    def redundancy(self) -> int:
        """How many distinct people's answers each pair of the round asks for (1: one)."""
        return int(self.params.get("redundancy") or 1)

    @property
    def gold(self) -> str | None:
        """The qrels version whose pairs are mixed into each worker's queue as known answers
        (None: no gold); its pairs never enter a qrels version derived from the round."""
        return self.params.get("gold")

    @property
    def gold_versions(self) -> list[str]:
        """Every gold version the round has had, the current one last (`set_gold` may replace
        one): none of their pairs enters a qrels version derived from the round."""
        earlier = [v for v in self.params.get("gold_before") or [] if v != self.gold]
        return earlier + ([self.gold] if self.gold else [])

    @property
    def gold_rate(self) -> float:
        """About what share of each worker's pairs is gold (0 without gold)."""
        if self.gold is None:
            return 0.0
        return float(self.params.get("gold_rate") or DEFAULT_GOLD_RATE)

    @property
    def crowd(self) -> bool:
        """A crowd round: open to every person assessor, with redundancy, gold or both
        (`pooling.crowds.queue_policy` hands out its pairs)."""
        return self.redundancy > 1 or self.gold is not None

    @property
    def queue_policy(self) -> str:
        """The name of the queue policy that hands out the round's units
        (`pooling.judging.queue.QUEUE_POLICIES`): crowd, adaptive or static."""
        return "crowd" if self.crowd else "adaptive" if self.adaptive else "static"

    def parts_of(self, query_id: str) -> list[str]:
        """The part ids a unit of this topic is graded on ([] when units are graded whole)."""
        return [n for n, _ in (self.parts or {}).get(query_id, [])]

    @property
    def order(self) -> str:
        """How the pooled runs are put in order: "score" (trec_eval's) or "rank" (as submitted)."""
        return self.params.get("order") or "score"

    def topic_budget(self, query_id: str | None) -> int | None:
        """Judgments topic `query_id` may have: the per-topic budget or the topic's share of
        the total budget, whichever is smaller (None: no budget)."""
        caps = [self.params.get("budget")]
        total = self.params.get("total_budget")
        if total is not None and query_id is not None:
            caps.append(split_budget(total, list(self.topics)).get(query_id))
        caps = [c for c in caps if c is not None]
        return min(caps) if caps else None

    def bare_strategy(self) -> Strategy:
        """The round's strategy with its parameters, before floor, budgets and inputs."""
        return get_strategy(self.strategy, **self.params.get("strategy", {}))

    def make_strategy(
        self, *, serving: bool = True, query_id: str | None = None,
        inputs: Mapping[str, Any] | None = None,
        known: Mapping[str, Mapping[str, int]] | None = None,
    ) -> Strategy:
        """The round's strategy, given `inputs` (what it `needs`), behind its floor, its budget
        for topic `query_id` (the per-topic budget or the topic's share of the total budget,
        whichever is smaller), `known` judgments and (when serving live) its stopping rule."""
        return with_options(
            self.bare_strategy().given(**(inputs or {})),
            floor=self.params.get("floor") or 0,
            budget=self.topic_budget(query_id),
            stop_after=self.params.get("stop_after") if serving else None,
            known=known,
        )


@dataclass
class RoundSummary:
    round: Round
    entries: int
    per_topic: dict[str, int]
    warnings: list[str] = field(default_factory=list)  # one line each, for the organiser
    gold_pairs: int | None = None  # a crowd round's gold pairs left outside its queue


def choose_runs(store: Store, runs: str | list[str]) -> list[str]:
    """'all', 'pooled' (runs marked pooled; all runs if none is marked) or an explicit list."""
    all_runs = store.run_ids()
    if not all_runs:
        raise StoreError(f"{store.path} has no runs; import some with `pooling import runs`")
    if isinstance(runs, list):
        unknown = [r for r in runs if r not in all_runs]
        if unknown:
            raise StoreError(f"unknown run(s) {', '.join(unknown)}; known: {', '.join(all_runs)}")
        return runs
    if runs == "all":
        return all_runs
    if runs == "pooled":
        marked = [r[0] for r in store.con.execute(
            "SELECT run_id FROM runs WHERE pooled ORDER BY run_id").fetchall()]
        return marked or all_runs
    return choose_runs(store, [r.strip() for r in runs.split(",") if r.strip()])


def topic_rankings(
    store: Store, run_ids: list[str], depth: int | None, topics: list[str] | None = None,
    order: str = "score",
) -> dict[str, TopicRuns]:
    """Each topic's pooled rankings in run order `order` (see `pooling.strategies.ORDERS`),
    cut at `depth` documents per run."""
    tables = {r: store.run_table(r) for r in run_ids}
    per_topic = rankings_by_topic(tables, depth, order)
    if topics is not None:
        per_topic = {q: per_topic[q] for q in topics if q in per_topic}
    return per_topic


MAX_COUNT = 10_000_000  # the largest depth, budget or floor a round takes


def _whole(value: Any) -> Any:
    """A strategy parameter given as text ("10", "10.0") as a number, for the range check."""
    number = whole_number(value) if isinstance(value, str) else None
    return value if number is None else number


def create_round(
    store: Store,
    name: str,
    strategy: str,
    *,
    strategy_params: dict[str, Any] | None = None,
    seed: int = 0,
    runs: str | list[str] = "pooled",
    depth: int | None = None,
    budget: int | None = None,
    total_budget: int | None = None,
    floor: int | None = None,
    stop_after: int | None = None,
    exclude_judged: bool = False,
    topics: list[str] | None = None,
    grades: tuple[int, ...] = DEFAULT_GRADES,
    order: str = "score",
    subtopics: bool = False,
    redundancy: int = 1,
    gold: str | None = None,
    gold_rate: float | None = None,
) -> RoundSummary:
    """Create a round; a static strategy's queue is computed and stored now.

    depth: candidate depth per run (default: the depth strategy's own k, else 100).
    budget / total_budget: judgments per topic / in the whole round (split evenly over
    topics, the remainder going to the first topics in query_id order).
    floor: every pooled run's top `floor` documents come first (fairness floor).
    stop_after: a topic stops after this many consecutive non-relevant judgments (applied
    when serving). exclude_judged: pairs judged in earlier rounds are not queued again.
    order: the runs' order, "score" (trec_eval's: score desc, doc_id desc) or "rank" (the
    submitted rank column, ties by score desc, doc_id desc); recorded with the round.
    subtopics: a subtopic (diversity) round, grading each document on each of its topic's
    subtopics; the topics' subtopics are recorded with the round, and a topic without any is
    refused.
    redundancy, gold, gold_rate: a crowd round (`Round.crowd`): each pair asks for
    `redundancy` distinct people's answers, and the pairs of qrels version `gold` are mixed
    into each worker's queue so that about `gold_rate` of their pairs are gold (default 0.1).
    """
    if not isinstance(name, str):
        raise StoreError(f"a round needs a name, got {name!r}; give one with --round NAME")
    why = id_problem(name, "the round name (--round)", names_file=True) or unstorable(
        name, "the round name")
    if why:
        raise StoreError(why)
    if store.one("find round", "SELECT 1 FROM rounds WHERE round_id = ?", [name]):
        raise StoreError(f"round {name!r} already exists; choose another --round name")
    for option, value, low in (("depth", depth, 1), ("budget", budget, 1),
                               ("total-budget", total_budget, 1), ("floor", floor, 0),
                               ("stop-after", stop_after, 1),
                               ("depth", _whole((strategy_params or {}).get("depth")), 1)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not low <= value <= MAX_COUNT):
            raise StoreError(f"--{option} must be a whole number from {low} to {MAX_COUNT:,}, "
                             f"got {value!r}")
    crowd = crowd_params(redundancy, gold, gold_rate)
    params = dict(strategy_params or {})
    strat = get_strategy(strategy, **params)
    check_stratified_options(strat, floor=floor, exclude_judged=exclude_judged,
                             stop_after=stop_after)
    # A strategy that queues from its inputs alone (triage of judges' grades) needs no runs:
    # its topics are those its inputs cover, the runs' order breaking ties where there are runs.
    reads_runs = strat.reads_runs() or bool(floor)
    run_ids = choose_runs(store, runs) if reads_runs or store.run_ids() else []
    candidate_depth = depth or strat.options.get("depth") or 100
    per_topic = topic_rankings(store, run_ids, candidate_depth, topics, order) if run_ids else {}
    if not reads_runs:
        covered = topics_without_runs(store, strat, topics)
        per_topic = {q: per_topic.get(q, covered[q]) for q in (topics or sorted(covered))
                     if q in covered}
    if not per_topic:
        raise StoreError("the pooled runs retrieve nothing for the chosen topics" if reads_runs
                         else "the judges graded no pair of the chosen topics; judge some "
                         "with `pooling judge`")
    if subtopics and is_stratified(strat):
        raise StoreError("a round is either sampled in strata or judged on subtopics, not both "
                         "yet; leave out --subtopics or pool with another strategy")
    recorded = topic_subtopics(store, list(per_topic)) if subtopics else None
    known = _judged_pairs(store) if exclude_judged else {}
    strat = strat.given(**strategy_inputs(store, strat, per_topic, known, load=not strat.adaptive))
    budgets = split_budget(total_budget, list(per_topic)) if total_budget is not None else {}
    round_params = {
        "strategy": strat.options, "budget": budget, "total_budget": total_budget,
        "floor": floor, "stop_after": stop_after, "exclude_judged": exclude_judged,
        "order": order,
    }
    judged = SUBTOPICS if recorded is not None else DOCUMENTS
    if recorded is not None:
        round_params[SUBTOPICS.parts_param or ""] = recorded
    if crowd:
        if strat.adaptive or recorded is not None:
            raise StoreError("a crowd round (--redundancy, --gold) is static and judges documents "
                             "as a whole; pool it with a static strategy (e.g. --strategy depth) "
                             "and without --subtopics")
        if gold is not None:
            check_gold(store, gold, list(per_topic), round_id=name)
        round_params.update(crowd)
    rnd = Round(name, strategy, round_params, seed, tuple(sorted(set(grades))), tuple(run_ids),
                strat.adaptive, candidate_depth, tuple(per_topic), judged.name)
    rows: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "position": []}
    counts: dict[str, int] = {}
    queues: dict[str, list[str]] = {}
    if not strat.adaptive:
        for q, topic in per_topic.items():
            caps = [b for b in (budget, budgets.get(q)) if b is not None]
            cap = min(caps) if caps else None
            queued = with_options(strat, floor=floor or 0, budget=cap, known=known)
            queue = queued.queue(topic, topic_seed(seed, q))
            queues[q] = queue
            counts[q] = len(queue)
            rows["query_id"] += [q] * len(queue)
            rows["doc_id"] += queue
            rows["position"] += list(range(1, len(queue) + 1))
    # A sampled round records every pooled pair's stratum and inclusion probability.
    design = design_table(strat, per_topic, seed, queues) if is_stratified(strat) else None
    queued_pairs = set(zip(rows["query_id"], rows["doc_id"], strict=True))
    gold_count = (check_gold(store, gold, list(per_topic), round_id=name, queued=queued_pairs)
                  if crowd and gold is not None else None)
    with store.transaction() as con:
        store_round(store, rnd, rows)
        if design is not None:
            record_design(con, name, design)
    warning = scale_warning(store, name, rnd.grades)
    return RoundSummary(rnd, sum(counts.values()), counts, [warning] if warning else [],
                        gold_count)


def store_round(store: Store, rnd: Round, queue: Mapping[str, list[Any]]) -> None:
    """Write a new round and its queue (query_id, doc_id, position columns), in one
    transaction: the one place a round enters the store, whatever it judges."""
    with store.transaction() as con:
        con.execute(
            "INSERT INTO rounds (round_id, strategy, params, seed, grades, pooled_runs, created_at, "
            "adaptive, candidate_depth, topics, item_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [rnd.round_id, rnd.strategy, json.dumps(rnd.params), rnd.seed, list(rnd.grades),
             list(rnd.pooled_runs), utcnow(), rnd.adaptive, rnd.candidate_depth,
             list(rnd.topics), rnd.item_type],
        )
        if queue["query_id"]:
            table = pa.table(dict(queue))
            con.register("_pool", table)
            try:
                con.execute("INSERT INTO pool_entries SELECT ?, query_id, doc_id, position FROM _pool",
                            [rnd.round_id])
            finally:
                con.unregister("_pool")


def crowd_params(redundancy: int, gold: str | None, gold_rate: float | None) -> dict[str, Any]:
    """The parameters a crowd round records (`redundancy`, `gold`, `gold_rate`), checked;
    {} for a round of one answer per pair and no gold."""
    if isinstance(redundancy, bool) or not isinstance(redundancy, int) or not (
            1 <= redundancy <= MAX_REDUNDANCY):
        raise StoreError(f"--redundancy must be a whole number from 1 to {MAX_REDUNDANCY} "
                         f"(distinct answers per pair), got {redundancy!r}")
    if gold_rate is not None and gold is None:
        raise StoreError("--gold-rate is the share of gold pairs; name the gold qrels version "
                         "with --gold VERSION")
    if gold_rate is not None and (isinstance(gold_rate, bool)
                                  or not isinstance(gold_rate, (int, float))
                                  or not 0 < gold_rate < 1):
        raise StoreError(f"--gold-rate must be a share between 0 and 1 (exclusive), e.g. 0.1, "
                         f"got {gold_rate!r}")
    if redundancy == 1 and gold is None:
        return {}
    out: dict[str, Any] = {"redundancy": redundancy}
    if gold is not None:
        out["gold"] = gold
        out["gold_rate"] = float(gold_rate if gold_rate is not None else DEFAULT_GOLD_RATE)
    return out


def set_gold(store: Store, round_id: str, gold: str, gold_rate: float | None = None) -> Round:
    """Name qrels version `gold` as a round's gold questions, mixed into each worker's queue
    at `gold_rate` (default: the rate the round has, else 0.1) from the next pair handed out:
    the organiser may add gold once a round has started, or draw it from the round's own pool
    (`pooling.crowds.simulation.gold_sample`). The round becomes a crowd round, with
    the redundancy it has. Answers already made stay as they are; gold pairs never enter a
    qrels version derived from the round, whenever they were named."""
    rnd = get_round(store, round_id)
    if rnd.adaptive or rnd.item.has_parts:
        raise StoreError(f"round {round_id!r} is {'adaptive' if rnd.adaptive else f'a {rnd.item_type} round'}"
                         "; gold questions are mixed into static rounds that judge documents as "
                         "a whole")
    rate = gold_rate if gold_rate is not None else (rnd.gold_rate if rnd.gold else None)
    crowd = crowd_params(rnd.redundancy, gold, rate)
    check_gold(store, gold, list(rnd.topics), round_id=round_id, queued=queued_pairs(store, round_id))
    params = {**rnd.params, **crowd}
    if rnd.gold is not None and rnd.gold != gold:  # the pairs of a replaced gold stay gold
        params["gold_before"] = [v for v in rnd.gold_versions if v != gold]
    with store.transaction() as con:
        con.execute("UPDATE rounds SET params = ? WHERE round_id = ?", [json.dumps(params), round_id])
    return get_round(store, round_id)


def queued_pairs(store: Store, round_id: str) -> set[tuple[str, str]]:
    """The (query_id, doc_id) pairs a round queues."""
    return set(store.sql("queued pairs", "SELECT query_id, doc_id FROM pool_entries "
                         "WHERE round_id = ?", [round_id]).fetchall())


def check_gold(store: Store, gold: str, query_ids: list[str], *, round_id: str,
               queued: Collection[tuple[str, str]] | None = None) -> int:
    """How many pairs of qrels version `gold` can be a round's gold questions: those of its
    topics that it does not queue (`queued`; None: not known yet, nothing left out). A version
    that does not exist, has no pair in the round's topics, or whose every such pair is
    queued (the normal case when the gold is the official qrels of the pooled runs) is
    refused: a queued pair is the crowd's to answer, never a gold question."""
    if not store.one("find qrels", "SELECT 1 FROM qrels_versions WHERE name = ?", [gold]):
        known = [r[0] for r in store.sql("qrels versions", "SELECT name FROM qrels_versions "
                                         "ORDER BY name").fetchall()]
        raise StoreError(f"no qrels version {gold!r} to use as gold; versions: "
                         f"{', '.join(known) or '(none: import one with `pooling import qrels`)'}")
    pairs = store.sql("gold pairs", "SELECT DISTINCT query_id, doc_id FROM qrels WHERE version = ? "
                      "AND query_id IN (SELECT UNNEST(?))", [gold, query_ids]).fetchall()
    if not pairs:
        raise StoreError(f"qrels version {gold!r} has no pair in the round's topics, so there is "
                         "no gold to mix in; choose a version that judges these topics, or other "
                         "--topics")
    left = sum(tuple(p) not in (queued or ()) for p in pairs)
    if not left:
        raise StoreError(
            f"all {len(pairs):,} pair(s) of qrels version {gold!r} in round {round_id}'s topics "
            "are in the round's queue, and a queued pair is never a gold question (the crowd "
            "answers it), so no gold would be left; pool the round without --gold and draw gold "
            f"outside its pool (`pooling crowd gold STORE --round {round_id} --from {gold} "
            "--name GOLD`), or name a version with pairs outside the queue")
    return left


def gold_pairs(store: Store, rnd: Round, *, every: bool = False) -> dict[str, list[str]]:
    """A gold round's gold documents per topic of the round (query_id -> doc_ids by id); {}
    for a round without gold. A pair the round queues is never gold (`check_gold`): it is
    the crowd's to answer, and a gold version covering the pool leaves the pool to the crowd.
    every: of every gold version the round has had (what derived qrels leave out), not only
    the one mixed in now (what workers are handed)."""
    versions = rnd.gold_versions if every else ([rnd.gold] if rnd.gold else [])
    if not versions:
        return {}
    out: dict[str, list[str]] = {}
    # Step "gold pairs": the versions' pairs of the round's topics, less the round's queue.
    for q, d in store.sql("gold pairs", """
            SELECT DISTINCT g.query_id, g.doc_id FROM qrels g
            WHERE g.version IN (SELECT UNNEST($versions))
              AND g.query_id IN (SELECT UNNEST($topics))
              AND NOT EXISTS (SELECT 1 FROM pool_entries p WHERE p.round_id = $round_id
                              AND p.query_id = g.query_id AND p.doc_id = g.doc_id)
            ORDER BY 1, 2""", {"versions": versions, "topics": list(rnd.topics),
                               "round_id": rnd.round_id}).fetchall():
        out.setdefault(q, []).append(d)
    return out


def gold_count(store: Store, rnd: Round) -> int:
    """How many gold pairs a crowd round mixes in now (its queue left out)."""
    return sum(len(docs) for docs in gold_pairs(store, rnd).values())


def crowd_rounds(store: Store) -> list[str]:
    """The crowd rounds (open to every person assessor), by round_id."""
    rows = store.sql("crowd rounds", "SELECT round_id FROM rounds ORDER BY 1").fetchall()
    return [r for (r,) in rows if get_round(store, r).crowd]


def topic_subtopics(store: Store, query_ids: list[str]) -> dict[str, list[list[str]]]:
    """Each topic's subtopics as [number, text] (from the topic's `extra`, where the TREC Web
    reader puts them), for a subtopic round; a topic without subtopics is refused."""
    rows = dict(store.sql("topic subtopics", "SELECT query_id, extra FROM topics "
                          "WHERE query_id IN (SELECT UNNEST(?))", [query_ids]).fetchall())
    out: dict[str, list[list[str]]] = {}
    for q in query_ids:
        subs = recorded_subtopics(rows.get(q))
        if subs and len({n for n, _ in subs}) == len(subs):
            out[q] = [[n, text] for n, text in subs]
    missing = [q for q in query_ids if q not in out]
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10
                                           else "")
        raise StoreError(
            f"a subtopic round needs every topic's subtopics, and topic(s) {shown} have none "
            "(or repeat a subtopic number); import TREC Web topics with <subtopic> elements "
            "(`pooling import topics FILE --format trec-web`), or choose --topics that have them")
    return out


def scale_warning(store: Store, round_id: str, grades: Sequence[int]) -> str | None:
    """One line saying that a round's scale does not cover the grades of the store's default
    qrels version (so its judgments will not compare with them grade for grade), or None."""
    version = store.default_qrels()
    if version is None:
        return None
    row = store.one("qrels grades", "SELECT grades FROM qrels_versions WHERE name = ?", [version])
    theirs = sorted(set(row[0] or ())) if row else []
    if all(g in grades for g in theirs):
        return None
    span = range(min(theirs[0], *grades), max(theirs[-1], *grades) + 1)
    return (f"round {round_id}'s scale {_listed(grades)} does not cover the grades "
            f"{_listed(theirs)} of qrels version {version} (the store's default); to judge on "
            f"their scale, create the round with --grades {_listed(span)}")


def _listed(grades: Iterable[int]) -> str:
    return ",".join(str(g) for g in grades)


def _judged_pairs(store: Store) -> dict[str, dict[str, int]]:
    """Pairs with a current judgment from any earlier round: query_id -> doc_id -> grade."""
    table = effective_judgments(store)
    out: dict[str, dict[str, int]] = {}
    for q, d, g in zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(),
                       table["grade"].to_pylist(), strict=True):
        out.setdefault(q, {})[d] = g
    return out


def get_round(store: Store, name: str) -> Round:
    row = store.one(
        "find round",
        "SELECT round_id, strategy, params, seed, grades, pooled_runs, adaptive, candidate_depth, "
        "topics, item_type FROM rounds WHERE round_id = ?",
        [name],
    )
    if row is None:
        known = [r[0] for r in store.con.execute("SELECT round_id FROM rounds ORDER BY 1").fetchall()]
        raise StoreError(f"no round {name!r} in {store.path}; rounds: {', '.join(known) or '(none)'}")
    return Round(row[0], row[1], json.loads(row[2] or "{}"), row[3], tuple(row[4] or ()),
                 tuple(row[5] or ()), bool(row[6]), row[7], tuple(row[8] or ()), row[9])


def pool_table(store: Store, name: str) -> pa.Table:
    """The round's queue so far: query_id, doc_id, position (1-based within the topic)."""
    get_round(store, name)
    return store.arrow(
        "read pool",
        "SELECT query_id, doc_id, position FROM pool_entries WHERE round_id = ? "
        "ORDER BY query_id, position",
        [name],
    )


@dataclass(frozen=True)
class PoolExport:
    """What `export_pool` wrote: the round and its number of entries."""

    round: Round
    entries: int

    @property
    def note(self) -> str | None:
        """What an adaptive round's export holds, for the person (None for a static round)."""
        if not self.round.adaptive:
            return None
        return (f"round {self.round.round_id} is adaptive ({self.round.strategy}): it chooses "
                "each topic's next document from the grades so far, so its pool is the "
                f"{self.entries:,} document(s) chosen so far, position being the order chosen; "
                "more may be added as judging goes on")


def export_pool(store: Store, name: str, out) -> PoolExport:
    """Write the round's pool as TSV with a header (query_id, doc_id, position).

    An adaptive round's pool is the documents chosen so far, in the order chosen; one that
    has chosen none yet is refused, saying why, rather than written empty.
    """
    from pooling.formats.source import write_lines

    rnd = get_round(store, name)
    table = pool_table(store, name)
    if rnd.adaptive and table.num_rows == 0:
        raise StoreError(
            f"round {name!r} is adaptive ({rnd.strategy}): it chooses each topic's documents one "
            "at a time from the grades so far, and none is chosen yet, so there is no pool to "
            f"export; judge it first (`pooling serve`, or `pooling judge --round {name}` with an "
            "automatic judge) and export what it has chosen, or pool a static round (e.g. "
            "--strategy depth) for a list fixed in advance")
    lines = ["query_id\tdoc_id\tposition\n"] + [
        f"{q}\t{d}\t{p}\n"
        for q, d, p in zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(),
                           table["position"].to_pylist(), strict=True)
    ]
    write_lines(lines, out)
    return PoolExport(rnd, table.num_rows)


def choose_next(store: Store, rnd: Round, query_id: str, judged: Sequence[tuple[str, int]], *,
                done: Collection[str] | None = None, topic: TopicRuns | None = None) -> str | None:
    """An adaptive round's next document for a topic, or None when the topic is done (its
    stopping rule, its budget, or no candidate left).

    judged: the (doc_id, grade) judgments the strategy learns from, in the order made.
    done: the documents the one asking has judged (default: those of `judged`); a document
    chosen before that is not among them comes first (served but not judged yet, e.g. a page
    reloaded). Otherwise the strategy replays `judged` and chooses; its choice is appended to
    the round's queue, so the queue records every document chosen, in order. topic: the
    topic's pooled rankings, when the caller has them already.
    Call it under the store's write lock: it may write.
    """
    if stopped(rnd, [g for _, g in judged]):
        return None
    done = {d for d, _ in judged} if done is None else set(done)
    queued = [r[0] for r in store.con.execute(
        "SELECT doc_id FROM pool_entries WHERE round_id = ? AND query_id = ? ORDER BY position",
        [rnd.round_id, query_id]).fetchall()]
    pending = [d for d in queued if d not in done]
    if pending:
        return pending[0]
    if topic is None:
        topic = topic_rankings(store, list(rnd.pooled_runs), rnd.candidate_depth, [query_id],
                               rnd.order).get(query_id)
    if topic is None:
        return None
    # Pairs judged in other rounds are known (observed first, never served) when the round
    # excludes judged pairs; this round's judgments are replayed in the order they were made.
    known = {}
    if rnd.params.get("exclude_judged"):
        others = effective_judgments(store, query_id=query_id)
        known = {query_id: {d: g for r, d, g in zip(*(others[c].to_pylist() for c in
                                                     ("round_id", "doc_id", "grade")), strict=True)
                            if r != rnd.round_id}}
    inputs = strategy_inputs(store, rnd.bare_strategy(), {query_id: topic},
                             {query_id: [d for d, _ in judged] + list(known.get(query_id, {}))})
    selector = rnd.make_strategy(query_id=query_id, inputs=inputs, known=known).selector(
        topic, topic_seed(rnd.seed, query_id))
    for doc, grade in judged:
        selector.observe(doc, grade)
    doc = selector.next()
    if doc is None:
        return None
    with store.transaction() as con:
        con.execute("INSERT INTO pool_entries VALUES (?, ?, ?, ?)",
                    [rnd.round_id, query_id, doc, len(queued) + 1])
    return doc


def stopped(rnd: Round, grades: Sequence[int]) -> bool:
    """Whether the round's stopping rule (`stop_after` non-relevant grades in a row) has ended
    a topic judged with these grades (in the order made)."""
    stop_after = rnd.params.get("stop_after")
    return bool(stop_after) and _nonrelevant_streak(grades) >= stop_after


def _nonrelevant_streak(grades: Sequence[int]) -> int:
    streak = 0
    for g in reversed(grades):
        if g > 0:
            break
        streak += 1
    return streak
