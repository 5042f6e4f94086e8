"""Each assessor's judgment history of a round, held per topic for the judging pages.

A page needs the person's current grade of each document of the topic (what they judged,
what is next, what undo takes back). The history is read once per person and round, in one
query for all its topics, and replayed (`pooling.judging.history.replay`) when asked; the
judgments stored since are added as they commit (`LiveCampaign._remember`).
"""

from __future__ import annotations

from collections import Counter

from pooling.judging.history import replay
from pooling.web.held_state import HeldState

# (seq, kind, grade): one event of an assessor's history of one document, in seq order.
Event = tuple[int, str, int | None]


def _current(events: list[Event]) -> tuple[int, int] | None:
    """(grade, seq) of a document's current judgment, replaying its events (`replay`)."""
    return replay((kind, (grade, seq)) for seq, kind, grade in events)  # type: ignore[misc]


class HistoryCache(HeldState):
    """The judgment histories' part of `LiveCampaign`'s memory (see the module doc)."""

    _history: dict[tuple[str, str, str], dict[str, list[Event]]]  # (round, assessor, topic)
    history_loads: Counter[str]  # round_id -> histories loaded of it

    def _events(self, round_id: str, assessor_id: str, query_id: str) -> dict[str, list[Event]]:
        key = (round_id, assessor_id, query_id)
        with self._lock:
            if key in self._history:
                return self._history[key]
            generation = self.generation
        # The person's whole history of the round at once: a crowd round's home page asks for
        # every topic of it, and one query costs less than one per topic.
        rows = self._store(lambda s: s.con.execute(
            "SELECT query_id, doc_id, seq, kind, grade FROM judgments WHERE round_id = ? AND "
            "assessor_id = ? ORDER BY seq", [round_id, assessor_id]).fetchall())
        per_topic: dict[str, dict[str, list[Event]]] = {query_id: {}}
        for q, doc, seq, kind, grade in rows:
            per_topic.setdefault(q, {}).setdefault(doc, []).append((seq, kind, grade))
        with self._lock:
            self.history_loads[round_id] += 1
            if generation != self.generation:
                return per_topic[query_id]
            view = self._rounds.get(round_id)
            for q in set(per_topic) | set(view.rnd.topics if view is not None else ()):
                self._history.setdefault((round_id, assessor_id, q), per_topic.get(q, {}))
            return self._history[key]

    def _mine(self, round_id: str, assessor_id: str, query_id: str) -> dict[str, tuple[int, int]]:
        """doc_id -> (grade, seq) of this person's current judgments of a topic."""
        events = self._events(round_id, assessor_id, query_id)
        with self._lock:
            current = {d: _current(e) for d, e in events.items()}
        return {d: c for d, c in current.items() if c is not None}
