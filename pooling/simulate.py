"""Replay pooling strategies against existing qrels, the oracle assessor.

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
(`Strategy.replays`): `pooling.triage_replay` replays triage against qrels instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from pooling.errors import PoolingError
from pooling.formats.run_files import RunReading
from pooling.strategies import get_strategy, rankings_by_topic, topic_seed
from pooling.strategies.base import INPUTS, Strategy, StrategyError, TopicRuns
from pooling.strategies.options import with_options


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
    from pooling.judging.backends.learned import document_text

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


def topic_ap(run_docs: np.ndarray, relevant: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """topics x runs AP (0 where a topic has no relevant document).

    run_docs: topics x runs x L doc numbers; relevant: per doc number (last = padding, False);
    n_relevant: per topic, the number of relevant documents in the qrels.
    """
    hits = relevant[run_docs]
    ranks = np.arange(1, run_docs.shape[2] + 1)
    precision_sum = (np.cumsum(hits, axis=2) * hits / ranks).sum(axis=2)
    return precision_sum / np.maximum(n_relevant, 1)[:, None]


def mean_ap(run_docs: np.ndarray, relevant: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """Per run, MAP over the topics (see `topic_ap`)."""
    return topic_ap(run_docs, relevant, n_relevant).mean(axis=0)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b between two score vectors (ties counted as neither concordant nor not)."""
    i, j = np.triu_indices(len(x), 1)
    sx = np.sign(x[i] - x[j])
    sy = np.sign(y[i] - y[j])
    n0 = len(i)
    denom = np.sqrt(float((n0 - np.sum(sx == 0)) * (n0 - np.sum(sy == 0))))
    return float(np.sum(sx * sy) / denom) if denom > 0 else 0.0


def tau_ap(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Yilmaz, Aslam & Robertson's AP correlation of the `estimate` ranking against `truth`.

    Runs are ordered by estimate descending (ties: run order); for each run below the first,
    the share of the runs above it that truth also puts strictly above it.
    """
    order = np.argsort(-estimate, kind="stable")
    n = len(order)
    if n < 2:
        return 1.0
    t = truth[order]
    above = np.tril(t[None, :] > t[:, None], k=-1)  # above[i, j]: j < i and truth_j > truth_i
    correct = above.sum(axis=1)[1:] / np.arange(1, n)
    return float(2.0 * correct.sum() / (n - 1) - 1.0)


@dataclass(frozen=True)
class Replay:
    """One strategy's judgments per topic, in order: (doc number, grade)."""

    label: str
    judgments: dict[str, list[tuple[int, int]]]


def replay(
    data: ReplayData,
    spec: StrategySpec,
    max_budget: int,
    *,
    seed: int = 0,
    floor: int = 0,
    oracle: Oracle | None = None,
    query_ids: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
) -> Replay:
    """Run one strategy to `max_budget` judgments per topic; the oracle answers each question.

    `runs` restricts the candidates to those runs (leave-one-out).
    """
    oracle = oracle or Oracle(data.qrels)
    strategy = with_options(with_inputs(data, spec), floor=floor, budget=max_budget)
    judgments: dict[str, list[tuple[int, int]]] = {}
    for q in query_ids or data.query_ids:
        topic = data.topics[q]
        if runs is not None:
            topic = TopicRuns(q, {r: topic.rankings[r] for r in runs})
        candidates = topic.candidates()
        selector = strategy.selector(topic, topic_seed(seed, q))
        served: list[tuple[int, int]] = []
        seen: set[str] = set()
        while (doc := selector.next()) is not None:
            if doc not in candidates or doc in seen:
                why = "is not a candidate" if doc not in candidates else "was served twice"
                raise SimulationError(f"strategy {spec.label!r} misbehaved: {doc!r} on topic {q} {why}")
            seen.add(doc)
            grade = oracle.judge(q, doc)
            selector.observe(doc, grade)
            served.append((data.doc_number[(q, doc)], grade))
        judgments[q] = served
    return Replay(spec.label, judgments)


SIMULATION_SCHEMA = pa.schema(
    [
        ("strategy", pa.string()),
        ("budget", pa.int64()),
        ("judged", pa.int64()),
        ("relevant_found", pa.int64()),
        ("found_share", pa.float64()),
        ("tau", pa.float64()),
        ("tau_ap", pa.float64()),
    ]
)


def judged_ap(data: ReplayData, rep: Replay, budget: int) -> tuple[np.ndarray, int, int]:
    """topics x runs AP under the first `budget` judgments per topic (unjudged = not
    relevant); also the judged and relevant counts."""
    relevant = np.zeros(len(data.pool_relevant), dtype=bool)
    n_rel = np.zeros(len(data.query_ids), dtype=np.int64)
    judged = 0
    for t, q in enumerate(data.query_ids):
        got = rep.judgments.get(q, [])[:budget]
        judged += len(got)
        rel = [n for n, g in got if g > 0]
        relevant[rel] = True
        n_rel[t] = len(rel)
    return topic_ap(data.run_docs, relevant, n_rel), judged, int(n_rel.sum())


def judged_map(data: ReplayData, rep: Replay, budget: int) -> tuple[np.ndarray, int, int]:
    """MAP per run under the first `budget` judgments per topic; also judged and relevant counts."""
    ap, judged, found = judged_ap(data, rep, budget)
    return ap.mean(axis=0), judged, found


def bootstrap_tau(
    data: ReplayData, rep: Replay, budget: int, *, resamples: int = 300, seed: int = 12345
) -> float:
    """Mean Kendall tau-b, over bootstrap resamples of the topics, between the MAP ranking
    at `budget` judgments per topic and the full pool's: a smoother figure than one tau,
    which on few runs moves in steps of 2 / (n (n - 1) / 2)."""
    estimate = judged_ap(data, rep, budget)[0]
    truth = topic_ap(data.run_docs, data.pool_relevant, data.pool_relevant_per_topic)
    n = len(data.query_ids)
    draws = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    return float(np.mean([kendall_tau_b(estimate[d].mean(0), truth[d].mean(0)) for d in draws]))


def found_share(data: ReplayData, rep: Replay, budget: int) -> float:
    """Mean over topics (with a relevant document in the depth pool) of the share found."""
    shares = [
        sum(1 for _, g in rep.judgments.get(q, [])[:budget] if g > 0) / n
        for q, n in zip(data.query_ids, data.pool_relevant_per_topic.tolist(), strict=True)
        if n > 0
    ]
    return float(np.mean(shares)) if shares else 0.0


def score(data: ReplayData, rep: Replay, budgets: Sequence[int]) -> list[dict]:
    """The report rows of one replay at each budget."""
    rows = []
    for b in budgets:
        est, judged, found = judged_map(data, rep, b)
        rows.append(
            {
                "strategy": rep.label,
                "budget": int(b),
                "judged": judged,
                "relevant_found": found,
                "found_share": found_share(data, rep, b),
                "tau": kendall_tau_b(est, data.truth_map),
                "tau_ap": tau_ap(est, data.truth_map),
            }
        )
    return rows


def _check_budgets(budgets: Sequence[int]) -> list[int]:
    if not budgets:
        raise SimulationError("no budget given; pass --budget N (judgments per topic)")
    bad = [b for b in budgets if b < 1]
    if bad:
        raise SimulationError(f"budgets must be at least 1 judgment per topic, got {bad}")
    return sorted(set(budgets))


def simulate(
    data: ReplayData,
    strategies: Sequence[StrategySpec],
    budgets: Sequence[int],
    *,
    seed: int = 0,
    floor: int = 0,
    engine: str = "local",
    ray_address: str | None = None,
) -> pa.Table:
    """Per strategy x budget: strategy, budget, judged, relevant_found, found_share, tau, tau_ap.

    engine "ray" replays each (strategy, budget) cell as a task on a Ray cluster; same table.
    """
    if engine != "local":
        from pooling.engine import check_engine
        from pooling.engine.replay import simulate_on_ray

        check_engine(engine)
        return simulate_on_ray(data, strategies, budgets, seed=seed, floor=floor,
                               ray_address=ray_address)
    budgets = _check_budgets(budgets)
    rows = []
    for spec in strategies:
        rep = replay(data, spec, max(budgets), seed=seed, floor=floor)
        rows += score(data, rep, budgets)
    return pa.Table.from_pylist(rows, schema=SIMULATION_SCHEMA)


GRID_SCHEMA = pa.schema([("collection", pa.string()), ("seed", pa.int64()), *SIMULATION_SCHEMA])


def replay_grid(
    collections: Mapping[str, ReplayData],
    strategies: Sequence[StrategySpec],
    budgets: Sequence[int],
    seeds: Sequence[int] = (0,),
    *,
    floor: int = 0,
    engine: str = "local",
    ray_address: str | None = None,
) -> pa.Table:
    """`simulate` over collections (name -> prepared replay) and seeds: collection, seed and
    the simulation's columns, in (collection, seed, strategy, budget) order.

    engine "ray" makes every (collection, seed, strategy, budget) cell a task; same table.
    """
    if engine != "local":
        from pooling.engine import check_engine
        from pooling.engine.replay import grid_on_ray

        check_engine(engine)
        return grid_on_ray(collections, strategies, budgets, seeds, floor=floor,
                           ray_address=ray_address)
    parts = []
    for name, data in collections.items():
        for seed in seeds:
            table = simulate(data, strategies, budgets, seed=seed, floor=floor)
            parts.append(table.add_column(0, "seed", pa.array([seed] * table.num_rows, pa.int64()))
                         .add_column(0, "collection", pa.array([name] * table.num_rows, pa.string())))
    return pa.concat_tables(parts).cast(GRID_SCHEMA) if parts else GRID_SCHEMA.empty_table()


LEAVE_ONE_OUT_SCHEMA = pa.schema(
    [
        ("strategy", pa.string()),
        ("budget", pa.int64()),
        ("left_out", pa.string()),
        ("run_id", pa.string()),
        ("map_full", pa.float64()),
        ("map_without", pa.float64()),
        ("map_change", pa.float64()),
        ("rank_full", pa.int64()),
        ("rank_without", pa.int64()),
        ("rank_change", pa.int64()),
    ]
)


def run_group(run_id: str) -> str:
    """A run's group (participant) guessed from its tag: the letters before the first digit."""
    m = re.match(r"[^\d]+", run_id)
    return m.group(0) if m else run_id


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def leave_one_out(
    data: ReplayData,
    strategies: Sequence[StrategySpec],
    budgets: Sequence[int],
    *,
    by: str = "run",
    groups: Mapping[str, str] | None = None,
    seed: int = 0,
    floor: int = 0,
) -> pa.Table:
    """Pool bias (Zobel 1998): pool without each run (or its whole group), judge with the
    strategy, and compare each left-out run's MAP and rank with those under the full depth pool.

    Groups default to `run_group` (the tag's letters before the first digit).
    """
    if by not in ("run", "group"):
        raise SimulationError(f"--leave-one-out takes run or group, got {by!r}")
    budgets = _check_budgets(budgets)
    group_of = {r: (groups or {}).get(r, run_group(r)) if by == "group" else r for r in data.run_ids}
    truth = data.truth_map
    truth_rank = _ranks(truth)
    rows = []
    for unit in dict.fromkeys(group_of.values()):
        kept = [r for r in data.run_ids if group_of[r] != unit]
        out = [i for i, r in enumerate(data.run_ids) if group_of[r] == unit]
        if not kept:
            continue
        for spec in strategies:
            rep = replay(data, spec, max(budgets), seed=seed, floor=floor, runs=kept)
            for b in budgets:
                est, _, _ = judged_map(data, rep, b)
                est_rank = _ranks(est)
                for i in out:
                    rows.append(
                        {
                            "strategy": spec.label,
                            "budget": int(b),
                            "left_out": unit,
                            "run_id": data.run_ids[i],
                            "map_full": float(truth[i]),
                            "map_without": float(est[i]),
                            "map_change": float(est[i] - truth[i]),
                            "rank_full": int(truth_rank[i]),
                            "rank_without": int(est_rank[i]),
                            "rank_change": int(est_rank[i] - truth_rank[i]),
                        }
                    )
    return pa.Table.from_pylist(rows, schema=LEAVE_ONE_OUT_SCHEMA)


def parse_topics(text: str) -> list[str]:
    """`601-650,700` -> the query_ids 601..650 and 700 (ranges need numeric ids)."""
    out: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, dash, hi = part.partition("-")
        if dash and lo.isdigit() and hi.isdigit():
            if int(hi) < int(lo):
                raise SimulationError(f"topic range {part!r} runs backwards; write it low-high")
            out += [str(i) for i in range(int(lo), int(hi) + 1)]
        else:
            out.append(part)
    return out


@dataclass(frozen=True)
class ReplayInputs:
    """Qrels and runs read for a replay, each run's group (its --meta team, if any), and
    notes on what the reading options changed."""

    qrels: pa.Table
    runs: dict[str, pa.Table]
    groups: dict[str, str]
    notes: list[str]


def read_inputs(
    qrels_path: str, run_paths: Sequence[str], reading: RunReading | None = None
) -> ReplayInputs:
    """Read the qrels and the run files the way every command reads them (`read_runs`):
    runs named by tag, file or --meta, duplicates refused or dropped, topic ids mapped."""
    from pooling.formats.run_files import read_runs
    from pooling.formats.trec_qrels import read_trec_qrels

    reading = reading or RunReading()
    qrels = read_trec_qrels(qrels_path).select(["query_id", "doc_id", "relevance"])
    notes = []
    if reading.topic_map is not None:
        qrels, used = reading.topic_map.apply(qrels)
        if used:
            notes.append(f"{qrels_path}: topic map changed {len(used)} topic id(s)")
    read = read_runs(run_paths, reading)
    runs = {r.run_id: r.table.select(["query_id", "doc_id", "score"]) for r in read.runs}
    groups = {r.run_id: r.meta.team for r in read.runs if r.meta.team}
    return ReplayInputs(qrels, runs, groups, notes + read.notes(reading))


def load_inputs(
    qrels_path: str, run_paths: Sequence[str], reading: RunReading | None = None
) -> tuple[pa.Table, dict[str, pa.Table]]:
    """(qrels, runs by name) as `read_inputs` reads them."""
    inputs = read_inputs(qrels_path, run_paths, reading)
    return inputs.qrels, inputs.runs


def render_table(table: pa.Table) -> str:
    """A fixed-width text table: shares and correlations with three decimals."""
    cols = table.column_names
    cells = [[f"{v:.3f}" if isinstance(v, float) else str(v) for v in table[c].to_pylist()] for c in cols]
    widths = [max([len(c)] + [len(x) for x in col]) for c, col in zip(cols, cells, strict=True)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True))]
    for i in range(table.num_rows):
        lines.append("  ".join(col[i].rjust(w) for col, w in zip(cells, widths, strict=True)))
    return "\n".join(lines) + "\n"


def plot_found(table: pa.Table, path: str) -> None:
    """Found share against budget, one line per strategy (PNG or SVG by the file's suffix)."""
    if not str(path).lower().endswith((".png", ".svg")):
        raise SimulationError(f"--plot {path}: the file must end in .png or .svg")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise SimulationError("--plot needs matplotlib; install it with `pip install matplotlib`") from exc
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    rows = table.to_pylist()
    for label in dict.fromkeys(r["strategy"] for r in rows):
        pts = sorted((r["budget"], r["found_share"]) for r in rows if r["strategy"] == label)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xlabel("judgments per topic")
    ax.set_ylabel("share of the pool's relevant documents found")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    from pooling.output_files import write_atomically

    try:
        write_atomically(path, fig.savefig)
    finally:
        plt.close(fig)


def to_csv(table: pa.Table) -> str:
    """CSV with a header row, unquoted where possible (Python's csv module, minimal quoting)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.column_names)
    columns = [table[c].to_pylist() for c in table.column_names]
    for i in range(table.num_rows):
        writer.writerow([col[i] for col in columns])
    return buf.getvalue()


def depth_pool(runs: Mapping[str, pa.Table], depth: int) -> pa.Table:
    """The depth-k pool, vectorised: unique (query_id, doc_id) in any run's top `depth`.

    Order within a run and topic is trec_eval's (score descending, then doc_id descending).
    Runs already grouped by topic in score order (the usual case) are not re-sorted; only
    ties straddling the cut-off are settled by doc_id. Sorted by query_id, doc_id.
    """
    parts = [_run_top(t, depth) for t in runs.values()]
    if not parts:
        return pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string())})
    pool = pa.concat_tables(parts).group_by(["query_id", "doc_id"]).aggregate([])
    return pool.sort_by([("query_id", "ascending"), ("doc_id", "ascending")])


def _run_top(table: pa.Table, depth: int) -> pa.Table:
    """One run's top `depth` rows per topic, as (query_id, doc_id)."""
    import pyarrow.compute as pc

    table = table.select(["query_id", "doc_id", "score"]).combine_chunks()
    qcode = pc.dictionary_encode(table["query_id"]).combine_chunks().indices.to_numpy()
    score = table["score"].to_numpy()
    n = len(qcode)
    if n == 0:
        return table.select(["query_id", "doc_id"])
    new_block = np.r_[True, qcode[1:] != qcode[:-1]]
    starts = np.flatnonzero(new_block)
    in_order = len(np.unique(qcode[starts])) == len(starts) and bool(
        np.all((np.diff(score) <= 0) | new_block[1:])
    )
    order = np.arange(n) if in_order else np.lexsort((-score, qcode))
    qs, ss = qcode[order], score[order]
    starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
    ends = np.r_[starts[1:], n]
    rank = np.arange(n) - np.repeat(starts, ends - starts)
    keep = rank < depth
    # Blocks whose cut-off falls inside a run of tied scores: choose the tied rows by doc_id desc.
    cut = starts + depth
    straddle = np.flatnonzero((cut < ends) & (ss[np.minimum(cut, n - 1)] == ss[np.minimum(cut - 1, n - 1)]))
    if len(straddle):
        docs = table["doc_id"]
        for b in straddle:
            lo, hi = starts[b], ends[b]
            tied_score = ss[cut[b] - 1]
            block = np.arange(lo, hi)
            tied = block[ss[lo:hi] == tied_score]
            slots = int(np.sum(keep[tied]))
            keep[tied] = False
            names = docs.take(pa.array(order[tied])).to_pylist()
            chosen = sorted(range(len(tied)), key=lambda i: names[i], reverse=True)[:slots]
            keep[tied[chosen]] = True
    return table.take(pa.array(order[keep])).select(["query_id", "doc_id"])
