"""Juries of model judges: several judges, or one judge asked several times (samples), each
judging every pair, and their labels aggregated into qrels. What their calls cost is
`pooling.judges.usage`; whether the jury beats its best member, `jury_report`.

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

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from pooling.agreement.aggregation import aggregate
from pooling.agreement.errors import AgreementError
from pooling.crowds.model_rules import (
    gold_grades,
    model_params,
    save_model_outputs,
    task_id,
    task_pair,
)
from pooling.errors import StoreError
from pooling.judges.model_judges import (
    BATCH,
    Judge,
    JudgeReport,
    add_sample_juror,
    get_judge,
    judge_pairs,
    judge_round,
    list_judges,
)
from pooling.judging.history import judge_current
from pooling.judging.rounds import get_round, gold_pairs
from pooling.judging.sampled_rounds import is_sampled_round
from pooling.store.core import Store
from pooling.store.qrels import QrelsImport, save_qrels
from pooling.terminal.progress import Progress

JURY_RULES = ("majority", "wawa", "dawid-skene", "gold-weighted")


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
    resumable job of its own; `limit` is per juror (gold pairs included). A round whose params name a gold version
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
            left = None if limit is None else max(0, limit - report.judged - report.failed)
            if extra and left != 0:
                gold = judge_pairs(store, juror.judge_id, extra, round_id=round_id,
                                   **{**options, "limit": left})
                _add(report, gold)
        reports.append(report)
    return reports


def _round_gold_pairs(store: Store, round_id: str) -> list[tuple[str, str]]:
    """A crowd round's gold pairs (`pooling.judging.rounds.gold_pairs`: never in its pool):
    the judging of the round's queue does not reach them."""
    rnd = get_round(store, round_id)
    if rnd.adaptive or rnd.item.has_parts:
        return []
    return [(q, d) for q, docs in gold_pairs(store, rnd).items() for d in docs]


def _add(report: JudgeReport, more: JudgeReport) -> None:
    for name in ("pairs", "already", "judged", "cached", "failed", "prompt_tokens",
                 "completion_tokens"):
        setattr(report, name, getattr(report, name) + getattr(more, name))
    report.seconds += more.seconds
    report.failures.extend(more.failures[:max(0, 5 - len(report.failures))])


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
    rows = [(j, task_id(q, d), mapping.get(g, g))
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
    if rnd.item.has_parts or is_sampled_round(store, round_id):
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
    pairs = [task_pair(t) for t in tasks["task"].to_pylist()]
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
