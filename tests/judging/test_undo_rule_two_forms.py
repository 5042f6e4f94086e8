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


def replayed_in_full(store: Store, answers: bool, **where: str) -> list[tuple]:
    """`effective_judgments`' rows (no subtopics) by replaying every history, lone judgments
    included, in the order of each pair's first judgment: what the fast path must equal."""
    clauses = " AND ".join(f"{k} = ?" for k in where) or "TRUE"
    rows = store.con.execute(
        "SELECT round_id, assessor_id, query_id, doc_id, kind, grade, seq, judged_at FROM "
        f"judgments WHERE {clauses} AND assessor_id NOT IN (SELECT assessor_id FROM assessors "
        "WHERE kind = 'model') ORDER BY seq", list(where.values())).fetchall()
    events: dict[tuple, list] = {}
    for r, a, q, d, kind, grade, seq, at in rows:
        events.setdefault((r, a, q, d), []).append((kind, (grade, seq, at)))
    out = []
    for key, history in events.items():
        stack = []
        for kind, value in history:
            if kind != "retract":
                stack.append(value)
            elif stack:
                stack.pop()
        if stack and (answers or stack[-1][0] is not None):
            out.append((*key, *stack[-1]))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_lone_judgments_kept_as_they_are_give_what_replaying_every_history_gives(tmp_path, seed):
    """Undos with nothing to take back, corrections, unjudgeable answers, automatic judges and
    two rounds; rows and their order compared whole, graded only and with every answer."""
    rng = random.Random(100 + seed)
    (tmp_path / "a.run").write_text(RUN)
    with Store.create(tmp_path / "c.duckdb") as s:
        s.import_runs([tmp_path / "a.run"])
        for name in ("r1", "r2"):
            create_round(s, name, "depth", strategy_params={"depth": 6})
        for person in ("ann", "bob", "cat"):
            add_assessor(s, person)
        s.con.execute("INSERT INTO assessors (assessor_id, name, role, token_sha256, created_at, "
                      "kind) VALUES ('bot', 'bot', 'assessor', '', now(), 'model')")
        events = []
        for n in range(rng.randint(30, 150)):
            roll = rng.random()
            kind = "retract" if roll < 0.2 else "unjudgeable" if roll < 0.3 else "judge"
            q = rng.choice("123")
            events.append(Judgment(rng.choice(["r1", "r2"]), rng.choice(["ann", "bob", "cat", "bot"]),
                                   q, f"d{q}-{rng.randint(1, 6)}",
                                   rng.randint(0, 2) if kind == "judge" else None, kind=kind,
                                   submission_id=f"s{n:015d}"))
        append_judgments(s, events)
        columns = ("round_id", "assessor_id", "query_id", "doc_id", "grade", "seq", "judged_at")
        for answers in (False, True):
            for where in ({}, {"round_id": "r2"}, {"assessor_id": "ann"}):
                table = effective_judgments(s, answers=answers, **where)
                got = list(zip(*(table[c].to_pylist() for c in columns), strict=True))
                assert got == replayed_in_full(s, answers, **where)
