"""Juries of model judges: several judges, or one judge asked several times (samples), each
judging every pair; what their calls cost; their labels aggregated into qrels; and whether
the jury beats its best member.

A juror is one judge, or one sample of a judge. Sample 1 is the judge itself; samples 2, 3,
... are jurors of their own (`JUDGE-sample-N`, an assessor of kind model with the judge's
backend, model, prompt and parameters), so each has its own judgments, submission ids and
calls, and a job killed and run again asks no juror twice for a pair. The answer cache is
kept per sample: sample 2 never reads sample 1's answer. What a sample is depends on the
backend: the `openai` backend samples at its temperature (a judge at temperature 0 is refused
more than one sample: every sample would be the same answer); a `command` program receives
the sample's number in each request (`"sample": 2`), to seed its randomness on (a program
that ignores it answers the same each time); the `learned` backend is deterministic and is
refused more than one sample.

The jury's labels are each juror's current judgment per pair of a round. They aggregate with
the aggregation models (`pooling.agreement.aggregation`: majority, wawa, dawid-skene and
gold-weighted, the vote weighted by each juror's log-odds accuracy on a gold sample, in which
a juror that dominates the others decides alone). Gold pairs never enter a derived version:
the pairs of the named gold version and of the round's own gold version are left out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pyarrow as pa

from pooling.agreement.aggregation import (
    accuracy,
    aggregate,
    cross_validated_labels,
    gold_weights,
)
from pooling.agreement.alpha import alpha_from_counts
from pooling.agreement.errors import AgreementError
from pooling.agreement.kappa import contingency, kappa_from_confusion
from pooling.errors import StoreError
from pooling.judging.history import judge_current
from pooling.judging.judges import (
    BATCH,
    Judge,
    JudgeReport,
    add_sample_juror,
    get_judge,
    judge_pairs,
    judge_round,
    list_judges,
)
from pooling.judging.model_rules import crowd_labels, gold_grades, model_params, save_model_outputs
from pooling.judging.rounds import get_round
from pooling.judging.sampled_rounds import is_sampled_round
from pooling.store.core import Store, utcnow
from pooling.store.qrels import QrelsImport, save_qrels
from pooling.terminal.progress import Progress

JURY_RULES = ("majority", "wawa", "dawid-skene", "gold-weighted")
_SEP = "\t"  # query_id TAB doc_id as one task id, as pooling.judging.model_rules


# -- the jurors ---------------------------------------------------------------------------


def sample_jurors(store: Store, judge_name: str, samples: int = 1,
                  overrides: Mapping[str, Any] | None = None) -> list[Judge]:
    """A judge's jurors for `samples` samples: the judge itself, then its samples 2..N (added
    to the store on first need). Refused where samples cannot differ (module doc)."""
    judge = get_judge(store, judge_name)
    if samples < 1:
        raise StoreError("--samples must be 1 or more")
    if judge.sample is not None:
        raise StoreError(f"{judge.judge_id!r} is sample {judge.sample} of judge {judge.of!r}; "
                         f"ask for samples of {judge.of!r} instead")
    if samples == 1:
        return [judge]
    if judge.backend == "learned":
        raise StoreError(f"judge {judge.judge_id!r} (learned) is deterministic: {samples} samples "
                         "would be one answer repeated; use --samples 1, or add other judges")
    if judge.backend == "openai":
        given = (overrides or {}).get("temperature")
        temperature = given if given is not None else judge.params.get("temperature", 0.0)
        if not temperature:
            raise StoreError(
                f"judge {judge.judge_id!r} answers at temperature 0, so its {samples} samples "
                "would all be the same answer; add a judge that samples (e.g. `pooling judges "
                "add STORE NAME --backend openai --param temperature=0.7 ...`) and ask it")
    return [judge, *(add_sample_juror(store, judge, n) for n in range(2, samples + 1))]


def judge_jury(
    store: Store,
    judges: Sequence[str],
    *,
    samples: int = 1,
    round_id: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    limit: int | None = None,
    overrides: dict[str, Any] | None = None,
    progress: Progress | None = None,
    batch: int = BATCH,
    engine: str = "local",
    ray_address: str | None = None,
) -> list[JudgeReport]:
    """Let every juror (each judge, `samples` times) judge a round (`judge_round`) or a list
    of pairs (`judge_pairs`, in `round_id` when given), one juror after the other, each a
    resumable job of its own; `limit` is per juror. A round whose params name a gold version
    has its gold pairs (of the round's topics) judged too, so the jury can be measured on
    them. One report per juror, in order."""
    if not judges:
        raise StoreError("name the jury's judges with --judge (repeat it)")
    if len(set(judges)) != len(judges):
        raise StoreError("a judge is named twice; ask for more answers with --samples")
    jurors = [j for name in judges for j in sample_jurors(store, name, samples, overrides)]
    options: dict[str, Any] = {"limit": limit, "overrides": overrides, "progress": progress,
                               "batch": batch, "engine": engine, "ray_address": ray_address}
    extra = _round_gold_pairs(store, round_id) if pairs is None and round_id else []
    reports = []
    for juror in jurors:
        if pairs is not None:
            report = judge_pairs(store, juror.judge_id, pairs, round_id=round_id, **options)
        else:
            report = judge_round(store, juror.judge_id, round_id, **options)
            if extra:
                gold = judge_pairs(store, juror.judge_id, extra, round_id=round_id, **options)
                _add(report, gold)
        reports.append(report)
    return reports


def _round_gold_pairs(store: Store, round_id: str) -> list[tuple[str, str]]:
    """A crowd round's gold pairs on its topics that are not in its pool."""
    rnd = get_round(store, round_id)
    gold = rnd.params.get("gold")
    if not gold or rnd.adaptive or rnd.subtopics is not None:
        return []
    pooled = {tuple(r) for r in store.con.execute(
        "SELECT query_id, doc_id FROM pool_entries WHERE round_id = ?", [round_id]).fetchall()}
    topics = set(rnd.topics)
    table = store.qrels_table(gold)
    return [(q, d) for q, d in zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(),
                                   strict=True) if q in topics and (q, d) not in pooled]


def _add(report: JudgeReport, more: JudgeReport) -> None:
    for name in ("pairs", "already", "judged", "cached", "failed", "prompt_tokens",
                 "completion_tokens"):
        setattr(report, name, getattr(report, name) + getattr(more, name))
    report.seconds += more.seconds
    report.failures.extend(more.failures[:max(0, 5 - len(report.failures))])


# -- prices and usage ---------------------------------------------------------------------


def set_price(store: Store, judge_name: str, price_in: float, price_out: float) -> None:
    """Record a judge's price per million prompt (in) and completion (out) tokens; the latest
    one holds, and a judge's sample jurors cost what the judge does."""
    for value, which in ((price_in, "--price-in"), (price_out, "--price-out")):
        if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
            raise StoreError(f"{which} must be a price of 0 or more per million tokens")
    judge = get_judge(store, judge_name)
    with store.transaction() as con:
        con.execute("INSERT INTO judge_prices VALUES (?, ?, ?, ?)",
                    [judge.of or judge.judge_id, float(price_in), float(price_out), utcnow()])


def judge_prices(store: Store) -> dict[str, tuple[float, float]]:
    """Each priced judge's latest (price in, price out) per million tokens."""
    rows = store.con.execute("SELECT judge_id, price_in, price_out FROM judge_prices "
                             "ORDER BY set_at").fetchall()
    return {j: (i, o) for j, i, o in rows}


@dataclass(frozen=True)
class JurorUsage:
    """What one juror's calls to its model used: calls made (answers from the cache are not
    calls), failures among them, tokens, seconds, and cost when its judge has a price."""

    judge: str  # the judge (a sample juror's judge)
    juror: str
    sample: int
    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    price_in: float | None = None  # per million prompt tokens
    price_out: float | None = None  # per million completion tokens

    @property
    def cost(self) -> float | None:
        if self.price_in is None or self.price_out is None:
            return None
        return (self.prompt_tokens * self.price_in + self.completion_tokens * self.price_out) / 1e6

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cost": self.cost}


def judge_usage(store: Store, round_id: str | None = None,
                prices: Mapping[str, tuple[float, float]] | None = None) -> list[JurorUsage]:
    """Per juror with calls (in `round_id` only, when given: calls recorded for it), by judge
    then sample. prices: judge -> (in, out) per million tokens, over the stored ones."""
    if round_id is not None:
        get_round(store, round_id)
    known = {j.judge_id: j for j in list_judges(store)}
    priced = {**judge_prices(store), **{_judge_id(store, k): v for k, v in (prices or {}).items()}}
    rows = store.con.execute(
        "SELECT judge_id, count(*), count(*) FILTER (WHERE status <> 'ok'), "
        "coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), "
        "coalesce(sum(seconds), 0) FROM judge_calls WHERE (?::VARCHAR IS NULL OR round_id = ?) "
        "GROUP BY judge_id", [round_id, round_id]).fetchall()
    out = []
    for juror, calls, failed, tokens_in, tokens_out, seconds in rows:
        judge = known.get(juror)
        parent = (judge.of if judge is not None else None) or juror
        price = priced.get(parent, (None, None))
        out.append(JurorUsage(parent, juror, (judge.sample if judge is not None else None) or 1,
                              calls, failed, int(tokens_in), int(tokens_out), float(seconds),
                              *price))
    return sorted(out, key=lambda u: (u.judge, u.sample))


def usage_by_judge(usage: Sequence[JurorUsage]) -> list[JurorUsage]:
    """Each judge's jurors summed (juror "all", sample 0), in the order of `usage`."""
    totals: dict[str, JurorUsage] = {}
    for u in usage:
        t = totals.get(u.judge)
        if t is None:
            totals[u.judge] = JurorUsage(u.judge, "all", 0, u.calls, u.failed, u.prompt_tokens,
                                         u.completion_tokens, u.seconds, u.price_in, u.price_out)
        else:
            totals[u.judge] = JurorUsage(u.judge, "all", 0, t.calls + u.calls, t.failed + u.failed,
                                         t.prompt_tokens + u.prompt_tokens,
                                         t.completion_tokens + u.completion_tokens,
                                         t.seconds + u.seconds, t.price_in, t.price_out)
    return list(totals.values())


def _judge_id(store: Store, name: str) -> str:
    judge = get_judge(store, name)
    return judge.of or judge.judge_id


# -- the jury's labels and qrels ----------------------------------------------------------


def round_jurors(store: Store, round_id: str, names: Sequence[str] | None = None) -> list[str]:
    """The jurors named (a judge's name brings its sample jurors that judged in the round;
    a sample juror's id, only it), or with no names (or "all") every model juror that judged
    in the round; in the order added."""
    get_round(store, round_id)
    judged = {a for (a,) in store.con.execute(
        "SELECT DISTINCT assessor_id FROM judgments WHERE round_id = ? AND assessor_id IN "
        "(SELECT assessor_id FROM assessors WHERE kind = 'model')", [round_id]).fetchall()}
    everyone = [j for j in list_judges(store) if j.judge_id in judged]
    if not names or list(names) == ["all"]:
        chosen = [j.judge_id for j in everyone]
    else:
        chosen = []
        for name in names:
            judge = get_judge(store, name)
            mine = [j.judge_id for j in everyone
                    if j.judge_id == judge.judge_id or (judge.sample is None and j.of == judge.judge_id)]
            if not mine:
                raise StoreError(f"judge {judge.judge_id!r} has judged nothing in round "
                                 f"{round_id!r}; judge it first with `pooling judge --round "
                                 f"{round_id} --judge {judge.judge_id}`")
            chosen.extend(j for j in mine if j not in chosen)
    if not chosen:
        raise StoreError(f"no automatic judge has judged round {round_id!r}; let a jury judge it "
                         f"first (`pooling judge --round {round_id} --judge A --judge B`)")
    return chosen


def jury_labels(store: Store, round_id: str, jurors: Sequence[str],
                judge_grades: Mapping[int, int] | None = None) -> pa.Table:
    """The jurors' current judgments in the round as a labels table: worker (juror), task
    (query_id TAB doc_id), label (mapped by judge_grades where given)."""
    mapping = dict(judge_grades or {})
    rows = [(j, f"{q}{_SEP}{d}", mapping.get(g, g))
            for j in jurors for (q, d), (g, _, _) in sorted(judge_current(store, j, round_id).items())]
    return pa.table({"worker": pa.array([r[0] for r in rows], pa.string()),
                     "task": pa.array([r[1] for r in rows], pa.string()),
                     "label": pa.array([r[2] for r in rows], pa.int64())})


def _gold_tasks(store: Store, round_id: str, gold: str | None) -> tuple[dict[str, int], set[str]]:
    """(the named gold version's grades by task, every task left out of a derived version:
    that version's and the round's own gold version's)."""
    seed = gold_grades(store, gold) if gold is not None else {}
    own = get_round(store, round_id).params.get("gold")
    left_out = set(seed) | (set(gold_grades(store, own)) if own else set())
    return seed, left_out


def derive_jury_qrels(store: Store, rule: str, name: str, *, round_id: str,
                      jurors: Sequence[str] | None = None, gold: str | None = None,
                      tie: str = "lower", relevance_level: int = 1,
                      judge_grades: Mapping[int, int] | None = None) -> QrelsImport:
    """A qrels version from a jury's labels in a round by an aggregation rule (JURY_RULES),
    with each pair's posterior and each juror's confusion matrix, like the people's model
    rules. gold: a version that seeds the model (gold-weighted needs it); its pairs, and the
    round's own gold pairs, never enter the version. judge_grades maps the jurors' grades
    onto the round's scale."""
    if rule not in JURY_RULES:
        raise StoreError(f"rule {rule!r} does not aggregate a jury; use one of "
                         f"{', '.join(JURY_RULES)}")
    if tie not in ("lower", "higher"):
        raise StoreError("tie must be 'lower' or 'higher'")
    rnd = get_round(store, round_id)
    if rnd.subtopics is not None or is_sampled_round(store, round_id):
        raise StoreError(f"round {round_id!r} is a subtopic or sampled round: a jury's labels "
                         "aggregate on a plain static round; derive this one with --judge "
                         "(human-first or judge-only)")
    ids = round_jurors(store, round_id, jurors)
    labels = jury_labels(store, round_id, ids, judge_grades)
    seed, left_out = _gold_tasks(store, round_id, gold)
    try:
        result = aggregate(labels, rule, gold=seed, tie=tie)
    except AgreementError as exc:
        raise StoreError(f"rule {rule!r}: {exc}") from exc
    tasks = result.tasks.filter(pa.array([t not in left_out for t in result.tasks["task"].to_pylist()],
                                         pa.bool_()))
    if tasks.num_rows == 0:
        raise StoreError(f"the jury of round {round_id!r} judged no pair outside the gold; "
                         "there is nothing to derive qrels from")
    pairs = [t.split(_SEP, 1) for t in tasks["task"].to_pylist()]
    table = pa.table({"query_id": pa.array([q for q, _ in pairs], pa.string()),
                      "doc_id": pa.array([d for _, d in pairs], pa.string()),
                      "relevance": tasks["label"], "posterior": tasks["posterior"]}
                     ).sort_by([("query_id", "ascending"), ("doc_id", "ascending")])
    params: dict[str, Any] = {"rule": rule, "round": round_id, "jurors": ids,
                              "tie": tie if rule in ("majority", "gold-weighted") else None}
    if judge_grades:
        params["judge_grades"] = {str(k): v for k, v in sorted(judge_grades.items())}
    params.update(model_params(result, gold))
    with store.transaction():
        saved = save_qrels(store, table.select(["query_id", "doc_id", "relevance"]), name,
                           method=f"derived:{rule}", source=round_id, grades=list(rnd.grades),
                           relevance_level=relevance_level, params=params, judges=ids)
        save_model_outputs(store, name, table, result)
    return saved


# -- the jury report ----------------------------------------------------------------------


@dataclass(frozen=True)
class JurorFigures:
    """One juror against the gold and against the round's people."""

    juror: str
    pairs: int  # pairs it judged in the round
    gold_pairs: int  # of those, gold pairs
    gold_accuracy: float  # on every gold pair the jury judged (a pair it did not: wrong)
    gold_binary_accuracy: float
    gold_kappa: float
    people_pairs: int  # pairs it shares with the people's majority
    people_accuracy: float
    people_kappa: float
    weight: float  # its weight in the gold-weighted rule fitted on all the gold


@dataclass(frozen=True)
class RuleFigures:
    """An aggregation rule over the jury, scored under cross-validation over the gold."""

    rule: str
    accuracy: float
    binary_accuracy: float


@dataclass
class JuryReport:
    """Agreement among a round's jurors, each against people and gold, and the aggregation
    rules under k-fold cross-validation over the gold (`jury_report`)."""

    round_id: str
    gold: str
    folds: int
    relevance_level: int
    jurors: list[JurorFigures]
    pairwise: list[tuple[str, str, int, float]]  # (juror, juror, shared pairs, kappa)
    alpha_nominal: float
    alpha_ordinal: float
    gold_pairs: int  # gold pairs the jury judged: the ones every accuracy is measured on
    rules: list[RuleFigures] = field(default_factory=list)

    @property
    def best_juror(self) -> JurorFigures:
        return max(self.jurors, key=lambda j: (j.gold_accuracy, j.gold_binary_accuracy))

    @property
    def verdict(self) -> str:
        """One sentence: does the gold-weighted jury beat its best member under CV?"""
        best = self.best_juror
        rule = next(r for r in self.rules if r.rule == "gold-weighted")
        if rule.accuracy > best.gold_accuracy:
            how = "beats"
        elif rule.accuracy == best.gold_accuracy:
            how = "equals"
        else:
            how = "falls below"
        return (f"the gold-weighted jury ({rule.accuracy:.3f}, {self.folds}-fold CV over "
                f"{self.gold_pairs:,} gold pairs) {how} its best member {best.juror} "
                f"({best.gold_accuracy:.3f})")

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.round_id, "gold": self.gold, "folds": self.folds,
                "relevance_level": self.relevance_level, "gold_pairs": self.gold_pairs,
                "jurors": [asdict(j) for j in self.jurors],
                "pairwise": [{"a": a, "b": b, "pairs": n, "kappa": k}
                             for a, b, n, k in self.pairwise],
                "alpha_nominal": self.alpha_nominal, "alpha_ordinal": self.alpha_ordinal,
                "rules": [asdict(r) for r in self.rules], "best_juror": self.best_juror.juror,
                "verdict": self.verdict}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, default=_nan_none)


def _nan_none(value: Any) -> Any:
    return None


def jury_report(store: Store, round_id: str, gold: str, *, jurors: Sequence[str] | None = None,
                folds: int = 5, seed: int = 0, relevance_level: int = 1) -> JuryReport:
    """The jury of a round measured: pairwise Cohen's kappa and Krippendorff's alpha among
    the jurors; each juror's accuracy and kappa against the gold and against the people's
    majority of the round (ties to the lower grade); and each rule of JURY_RULES scored on
    the gold pairs the jury judged, each pair labelled by a model seeded with the gold of
    the other folds only (`cross_validated_labels`), never with its own."""
    ids = round_jurors(store, round_id, jurors)
    labels = jury_labels(store, round_id, ids)
    gold_map = gold_grades(store, gold)
    tasks_judged = set(labels["task"].to_pylist())
    judged_gold = {t: g for t, g in gold_map.items() if t in tasks_judged}
    if len(judged_gold) < max(folds, 2):
        raise StoreError(f"the jury of round {round_id!r} judged {len(judged_gold)} pair(s) of "
                         f"gold version {gold!r}; {folds}-fold cross-validation needs {folds} or "
                         "more: put gold pairs in the round (or lower --folds)")
    by_juror = _labels_by_worker(labels)
    people = _people_majority(store, round_id)
    weights = {w: x for w, x in zip(*(gold_weights(labels, judged_gold).column(c).to_pylist()
                                      for c in ("worker", "weight")), strict=True)}
    figures = []
    for juror in ids:
        mine = by_juror.get(juror, {})
        g = _compare(mine, judged_gold)
        p = _compare(mine, people)
        figures.append(JurorFigures(
            juror, len(mine), g[0], accuracy(mine, judged_gold),
            accuracy(mine, judged_gold, binary_threshold=relevance_level), g[2], p[0], p[1], p[2],
            weights.get(juror, 0.0)))
    pairwise = []
    for a, b in combinations(ids, 2):
        n, _, kappa = _compare(by_juror.get(a, {}), by_juror.get(b, {}))
        pairwise.append((a, b, n, kappa))
    nominal, ordinal = _alphas(by_juror)
    report = JuryReport(round_id, store.resolve_qrels(gold), folds, relevance_level, figures,
                        pairwise, nominal, ordinal, len(judged_gold))
    for rule in JURY_RULES:
        try:
            predicted = cross_validated_labels(labels, rule, judged_gold, folds=folds, seed=seed)
        except AgreementError as exc:
            raise StoreError(f"rule {rule!r}: {exc}") from exc
        report.rules.append(RuleFigures(
            rule, accuracy(predicted, judged_gold),
            accuracy(predicted, judged_gold, binary_threshold=relevance_level)))
    return report


def _labels_by_worker(labels: pa.Table) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for w, t, g in zip(*(labels[c].to_pylist() for c in ("worker", "task", "label")), strict=True):
        out.setdefault(w, {})[t] = g
    return out


def _people_majority(store: Store, round_id: str) -> dict[str, int]:
    """The people's majority grade per task of the round (ties to the lower grade)."""
    votes: dict[str, list[int]] = {}
    people = crowd_labels(store, round_id)
    for t, g in zip(people["task"].to_pylist(), people["label"].to_pylist(), strict=True):
        votes.setdefault(t, []).append(g)
    out = {}
    for t, grades in votes.items():
        counts = {g: grades.count(g) for g in grades}
        top = max(counts.values())
        out[t] = min(g for g, c in counts.items() if c == top)
    return out


def _compare(mine: Mapping[str, int], theirs: Mapping[str, int]) -> tuple[int, float, float]:
    """(shared tasks, share equal, Cohen's kappa) of two label sets on the tasks both have."""
    shared = sorted(set(mine) & set(theirs))
    if not shared:
        return 0, math.nan, math.nan
    x = np.array([mine[t] for t in shared], dtype=np.int64)
    y = np.array([theirs[t] for t in shared], dtype=np.int64)
    scale = np.unique(np.concatenate([x, y]))
    kappa = kappa_from_confusion(contingency(x, y, scale)) if len(scale) > 1 else math.nan
    return len(shared), float((x == y).mean()), float(kappa)


def _alphas(by_juror: Mapping[str, Mapping[str, int]]) -> tuple[float, float]:
    """Krippendorff's alpha (nominal, ordinal) over the tasks two jurors or more judged."""
    tasks = sorted({t for labels in by_juror.values() for t in labels})
    scale = np.unique([g for labels in by_juror.values() for g in labels.values()])
    if len(scale) < 2:
        return math.nan, math.nan
    counts = np.zeros((len(tasks), len(scale)), dtype=np.int64)
    index = {t: i for i, t in enumerate(tasks)}
    for labels in by_juror.values():
        for t, g in labels.items():
            counts[index[t], np.searchsorted(scale, g)] += 1
    counts = counts[counts.sum(axis=1) >= 2]
    if len(counts) == 0:
        return math.nan, math.nan
    return (float(alpha_from_counts(counts, scale, level="nominal")),
            float(alpha_from_counts(counts, scale, level="ordinal")))
