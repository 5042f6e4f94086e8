"""Assignment rounds: each answer of a topic graded on every nugget of a frozen version.

`create_assignment_round` queues, for each topic of the nugget version that has nuggets,
the answers the chosen answer runs gave (in run order), and records with the round the
version and each topic's nuggets as the round's parts, so a later edit of the bank never
changes what the round asks. A topic of the version without a nugget has nothing to judge:
its answers score 0 (and count) when runs are scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pooling.errors import StoreError
from pooling.formats.ids import id_problem
from pooling.judging.rounds import Round, RoundSummary, get_round, store_round
from pooling.nuggets.item_types import NUGGET_ASSIGNMENT, THREE_GRADES, TWO_GRADES
from pooling.store.answers import answer_run_ids
from pooling.store.core import Store
from pooling.store.nugget_banks import require_version, version_nuggets

STRATEGY = "answers"  # a round of answers is not pooled from rankings: every answer is queued


def create_assignment_round(store: Store, name: str, version: str, *,
                            runs: Sequence[str] | None = None,
                            topics: Sequence[str] | None = None, grades: int = 3,
                            seed: int = 0) -> RoundSummary:
    """Create an assignment round of nugget version `version` over the answers of `runs`
    (default: every stored answer run) for `topics` (default: the version's). `grades`: 3
    (support, partial support, none) or 2 (support, none), as nuggetizer's two modes."""
    why = id_problem(name, "the round name (--round)", names_file=True) if isinstance(name, str) \
        else f"a round needs a name, got {name!r}"
    if why:
        raise StoreError(why)
    if store.one("find round", "SELECT 1 FROM rounds WHERE round_id = ?", [name]):
        raise StoreError(f"round {name!r} already exists; choose another --round name")
    if grades not in (2, 3):
        raise StoreError(f"--grades must be 3 (support, partial support, none) or 2 (support, "
                         f"none), got {grades!r}")
    require_version(store, version)
    known = answer_run_ids(store)
    chosen = list(runs) if runs else known
    unknown = [r for r in chosen if r not in known]
    if unknown or not chosen:
        raise StoreError(f"no answer run {', '.join(map(repr, unknown))} in {store.path}; it holds "
                         f"{', '.join(map(repr, known)) or 'none (import some with `pooling import answers`)'}"
                         if unknown else f"{store.path} holds no answer run; import some with "
                         "`pooling import answers`")
    nuggets = version_nuggets(store, version)
    parts: dict[str, list[list[str]]] = {}
    for q, n, t in zip(nuggets.column("query_id").to_pylist(), nuggets.column("nugget_id").to_pylist(),
                       nuggets.column("text").to_pylist(), strict=True):
        parts.setdefault(q, []).append([n, t])
    wanted = list(topics) if topics else sorted(parts)
    missing = [q for q in wanted if q not in parts]
    if missing:
        raise StoreError(f"nugget version {version!r} has no nugget for topic(s) "
                         f"{', '.join(map(repr, missing[:5]))}; leave them out, or add nuggets and "
                         "freeze a new version")
    answered = _answers(store, chosen, wanted)
    queue: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "position": []}
    per_topic: dict[str, int] = {}
    for q in wanted:
        mine = answered.get(q, [])
        if not mine:
            continue
        per_topic[q] = len(mine)
        queue["query_id"] += [q] * len(mine)
        queue["doc_id"] += mine
        queue["position"] += list(range(1, len(mine) + 1))
    if not per_topic:
        raise StoreError(f"the answer runs answer none of the {len(wanted)} topic(s) of nugget "
                         f"version {version!r}")
    params = {"nugget_version": version, "answer_runs": chosen,
              NUGGET_ASSIGNMENT.parts_param or "": {q: parts[q] for q in per_topic}}
    rnd = Round(name, STRATEGY, params, seed, THREE_GRADES if grades == 3 else TWO_GRADES,
                (), False, None, tuple(per_topic), NUGGET_ASSIGNMENT.name)
    store_round(store, rnd, queue)
    return RoundSummary(get_round(store, name), sum(per_topic.values()), per_topic)


def _answers(store: Store, runs: list[str], topics: list[str]) -> dict[str, list[str]]:
    """query_id -> the answer runs that answered it, in the order `runs` lists them."""
    rows = store.sql("answers of runs", "SELECT query_id, run_id FROM answers WHERE "
                     "list_contains(?, run_id) AND list_contains(?, query_id)",
                     [runs, topics]).fetchall()
    order = {r: i for i, r in enumerate(runs)}
    out: dict[str, list[str]] = {}
    for q, r in sorted(rows, key=lambda row: (row[0], order[row[1]])):
        out.setdefault(q, []).append(r)
    return out


def round_nugget_version(rnd: Round) -> str:
    """The nugget version an assignment round judges (`StoreError` for another round)."""
    if rnd.item_type != NUGGET_ASSIGNMENT.name:
        raise StoreError(f"round {rnd.round_id!r} judges {rnd.item.unit.name}s, not answers on "
                         "nuggets; give an assignment round (`pooling nuggets round`)")
    return str(rnd.params["nugget_version"])
