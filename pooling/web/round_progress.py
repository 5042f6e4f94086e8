"""Every round's progress per topic, as an organiser sees it, in four queries.

An organiser may judge any pooled document, so a round's progress is, per topic, the
documents queued and how many of them have a current judgment, by a person or an automatic
judge (in a crowd round, answers from K people; its gold pairs are not counted). A topic is
done when every queued document is judged; an adaptive round's, when its budget is spent or
its stopping rule has ended it (its queue grows as it goes). `GET /api/v1/rounds` asks for it every few seconds
while a crowd judges: it is read on a read cursor beside the pages' store lock, set-wise in
SQL, without replaying anyone's history in Python.
"""

from __future__ import annotations

from pooling.judging.history import effective_judgments, judged_per_topic
from pooling.judging.rounds import get_round, stopped
from pooling.store.core import Store
from pooling.web.campaign import RoundProgress, TopicProgress, reached_per_topic
from pooling.web.topic_order import in_topic_order

# The rounds, oldest first (as the organiser's overview lists them). Parameter: a round_id
# to read only that one, or NULL for all.
_ROUNDS = """
    SELECT round_id, adaptive, topics FROM rounds
    WHERE ?::VARCHAR IS NULL OR round_id = ?
    ORDER BY created_at, round_id
"""

# Documents queued per round and topic (an adaptive round's: those chosen so far).
_QUEUED = """
    SELECT round_id, query_id, count(*) FROM pool_entries
    WHERE ?::VARCHAR IS NULL OR round_id = ?
    GROUP BY round_id, query_id
"""

def organiser_rounds(store: Store, round_id: str | None = None) -> list[RoundProgress]:
    """Every round (or the one named) with, per topic, the documents queued and how many
    have a current judgment by anyone; topics in natural order."""
    both = [round_id, round_id]
    rounds = store.sql("rounds", _ROUNDS, both).fetchall()
    if not rounds:
        return []
    queued = {(r, q): n for r, q, n in store.sql("queued per topic", _QUEUED, both).fetchall()}
    judged = judged_per_topic(store, round_id, judges=True)
    for rid, _, _ in rounds:  # a crowd round counts the pairs that reached K
        judged.update(reached_per_topic(store, rid))
    titles = dict(store.sql("topic titles", "SELECT query_id, title FROM topics").fetchall())
    out = []
    for rid, adaptive, topics in rounds:
        ids = set(topics or ()) | {q for r, q in judged if r == rid}
        ended = adaptive_done(store, rid) if adaptive else None
        out.append(RoundProgress(rid, bool(adaptive), [
            TopicProgress(q, titles.get(q), queued.get((rid, q), 0), judged.get((rid, q), 0),
                          q in ended if ended is not None else
                          judged.get((rid, q), 0) >= queued.get((rid, q), 0))
            for q in in_topic_order(ids)]))
    return out


def adaptive_done(store: Store, round_id: str) -> set[str]:
    """The topics of an adaptive round that are done: their budget is spent, or their
    stopping rule has ended them. Its queue grows as documents are chosen, so a topic with
    every chosen document judged (an untouched one: none chosen, none judged) is not done."""
    rnd = get_round(store, round_id)
    judged = effective_judgments(store, round_id, people_only=False)
    first: dict[tuple[str, str], tuple[int, int]] = {}  # a document's first grade counts once
    for q, d, g, seq in zip(*(judged[c].to_pylist() for c in ("query_id", "doc_id", "grade",
                                                              "seq")), strict=True):
        if (q, d) not in first or seq < first[(q, d)][0]:
            first[(q, d)] = (seq, g)
    made: dict[str, list[tuple[int, int]]] = {}
    for (q, _), seq_grade in first.items():
        made.setdefault(q, []).append(seq_grade)
    done = set()
    for q in rnd.topics:
        grades = [g for _, g in sorted(made.get(q, []))]
        budget = rnd.topic_budget(q)
        if (budget is not None and len(grades) >= budget) or stopped(rnd, grades):
            done.add(q)
    return done
