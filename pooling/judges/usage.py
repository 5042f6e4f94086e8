"""What automatic judges' calls used and cost: per juror (a judge, or one of its samples; see
`pooling.judges.juries`) the calls made, failures, prompt and completion tokens and seconds
from `judge_calls`, and the cost at the judge's price per million prompt and completion tokens
(`judge_prices`, append-only: the latest price holds; a judge's samples cost what it does).
Answers taken from the cache are not calls: they cost nothing and are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pooling.errors import StoreError
from pooling.judges.model_judges import get_judge, list_judges
from pooling.judging.rounds import get_round
from pooling.store.core import Store, utcnow


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
