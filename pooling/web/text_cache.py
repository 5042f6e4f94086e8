"""Topic and document texts held for the judging pages, and documents with the topic's terms
marked.

An assessor reads a topic's queue in turn, so its documents' texts are read all at once
(`_prefetch`); a crowd reads the same documents many times, so each document's marked title
and text (`pooling.web.highlight`) is made once per topic title. Both are kept up to
`DOC_CACHE` documents, the least recently read dropped first.
"""

from __future__ import annotations

from collections import OrderedDict

from markupsafe import Markup

from pooling.web import campaign
from pooling.web.campaign import Topic
from pooling.web.held_state import HeldState, Miss
from pooling.web.highlight import highlight, query_terms

DOC_CACHE = 20_000


class TextCache(HeldState):
    """The texts' part of `LiveCampaign`'s memory (see the module doc)."""

    _topics: dict[str, Topic]
    _docs: OrderedDict[str, tuple[str | None, str | None] | None]
    _fetched: set[tuple[str, str]]  # (round, topic) whose documents were read
    # (doc_id, topic title) -> (the texts marked, their marked title and text)
    _marked: OrderedDict[tuple[str, str | None], tuple[object, tuple[Markup, Markup]]]

    def _topic(self, query_id: str) -> Topic:
        with self._lock:
            if query_id in self._topics:
                return self._topics[query_id]
        topic = self._store(campaign.topic_of, query_id)
        with self._lock:
            self._topics[query_id] = topic
        return topic

    def _prefetch(self, round_id: str, query_id: str) -> None:
        """Read the texts of a topic's whole queue at once (an assessor reads them in turn)."""
        with self._lock:
            if (round_id, query_id) in self._fetched:
                return
        if getattr(self._local, "cached_only", False):
            raise Miss
        with self._lock:
            self._fetched.add((round_id, query_id))
        rows = self._store(lambda s: s.con.execute(
            "SELECT d.doc_id, d.title, d.text FROM pool_entries p JOIN documents d USING (doc_id) "
            "WHERE p.round_id = ? AND p.query_id = ? ORDER BY p.position LIMIT ?",
            [round_id, query_id, DOC_CACHE // 2]).fetchall())
        view = self._rounds.get(round_id)
        gold = view.gold.get(query_id) if view is not None else None
        if gold:  # a crowd round's gold documents are read with the rest, and kept as they are
            rows += self._store(lambda s: s.con.execute(
                "SELECT doc_id, title, text FROM documents WHERE doc_id IN (SELECT UNNEST(?))",
                [gold]).fetchall())
        with self._lock:
            for doc_id, title, text in rows:
                self._docs[doc_id] = (title, text)
            while len(self._docs) > DOC_CACHE:
                self._docs.popitem(last=False)

    def _document(self, doc_id: str) -> tuple[str | None, str | None] | None:
        with self._lock:
            if doc_id in self._docs:
                self._docs.move_to_end(doc_id)
                return self._docs[doc_id]
        doc = self._store(lambda s: s.one(
            "document text", "SELECT title, text FROM documents WHERE doc_id = ?", [doc_id]))
        with self._lock:
            self._docs[doc_id] = doc
            while len(self._docs) > DOC_CACHE:
                self._docs.popitem(last=False)
        return doc

    def _highlighted(self, doc_id: str, doc: tuple[str | None, str | None] | None,
                     topic: Topic) -> tuple[Markup, Markup]:
        """A document's title and text with the topic's terms marked, made once per document
        and topic title (a crowd reads the same documents many times)."""
        key = (doc_id, topic.title)
        with self._lock:
            found = self._marked.get(key)
            if found is not None and found[0] == doc:
                self._marked.move_to_end(key)
                return found[1]
        terms = query_terms(topic.title)
        marked = (highlight(doc[0] if doc else None, terms), highlight(doc[1] if doc else None, terms))
        with self._lock:
            self._marked[key] = (doc, marked)
            while len(self._marked) > DOC_CACHE:
                self._marked.popitem(last=False)
        return marked
