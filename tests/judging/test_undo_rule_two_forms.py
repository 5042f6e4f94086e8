"""The undo rule has two forms, a replay (`effective_judgments`) and its set-wise SQL
(`judged_per_topic`, which the organisers' progress polls); on any history, undos with
nothing to take back and automatic judges included, they count the same pairs."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pooling.judging.assessors import add_assessor, assign
from pooling.judging.history import effective_judgments, judged_per_topic
from pooling.judging.judgments import Judgment, append_judgments
from pooling.judging.rounds import create_round
from pooling.store import Store

RUN = "".join(f"{q} Q0 d{q}-{r} {r} {100 - r} A\n" for q in (1, 2, 3) for r in range(1, 7))


def counted_by_replay(store: Store, round_id: str | None) -> dict[tuple[str, str], int]:
    """Pairs with a current judgment by a person, per round and topic, from the replay."""
    current = effective_judgments(store, round_id).to_pylist()
    return dict(Counter((r["round_id"], r["query_id"]) for r in
                        {(r["round_id"], r["query_id"], r["doc_id"]): r for r in current}.values()))


@pytest.mark.parametrize("seed", range(8))
def test_the_replay_and_the_set_wise_count_agree_on_random_histories(tmp_path, seed):
    rng = random.Random(seed)
    (tmp_path / "a.run").write_text(RUN)
    with Store.create(tmp_path / "c.duckdb") as s:
        s.import_runs([tmp_path / "a.run"])
        for name in ("r1", "r2"):
            create_round(s, name, "depth", strategy_params={"depth": 6})
        for person in ("ann", "bob"):
            add_assessor(s, person)
        for name in ("r1", "r2"):
            assign(s, name, ["ann", "bob"], overlap=1.0, seed=seed)
        s.con.execute("INSERT INTO assessors (assessor_id, name, role, token_sha256, created_at, "
                      "kind) VALUES ('bot', 'bot', 'assessor', '', now(), 'model')")
        events = []
        for n in range(rng.randint(20, 120)):
            kind = "retract" if rng.random() < 0.4 else "judge"
            q = rng.choice("123")
            events.append(Judgment(rng.choice(["r1", "r2"]), rng.choice(["ann", "bob", "bot"]), q,
                                   f"d{q}-{rng.randint(1, 6)}",
                                   None if kind == "retract" else rng.randint(0, 2), kind=kind,
                                   submission_id=f"s{n:015d}"))
        for start in range(0, len(events), 7):  # several submissions, as people make them
            append_judgments(s, events[start:start + 7])
        assert judged_per_topic(s) == counted_by_replay(s, None)
        assert judged_per_topic(s, "r2") == counted_by_replay(s, "r2")
        assert sum(judged_per_topic(s).values()) > 0
