"""Qrels prepared once for evaluating any number of runs against them.

Topics are held in strcmp (byte) order of query_id, as trec_eval holds them; every judgment
gets a (topic, doc_id) key for the join with a run (see `doc_keys`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.evaluation import kernel
from pooling.evaluation.doc_keys import pair_keys


@dataclass(frozen=True)
class TopicQrels:
    """Per-topic judgment statistics for the T evaluated topics (flat arrays, topic-grouped)."""

    topic: np.ndarray  # int64[E]: evaluated-topic index of each judgment
    grade: np.ndarray  # int64[E]: its grade (negative = pooled but not judged)
    num_topics: int

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Number of judgments per topic where `mask` holds."""
        return np.bincount(self.topic[mask], minlength=self.num_topics).astype(np.int64)

    def num_rel(self, level: int) -> np.ndarray:
        """R: judgments with grade >= level (whole qrels, retrieved or not)."""
        return self.count(self.grade >= level)

    def num_nonrel(self, level: int) -> np.ndarray:
        """Judged non-relevant: 0 <= grade < level (bpref's N)."""
        return self.count((self.grade >= 0) & (self.grade < level))

    @cached_property
    def max_grade(self) -> np.ndarray:
        """Highest non-negative grade per topic (num_rel_levels - 1), -1 when there is none."""
        out = np.full(self.num_topics, -1, np.int64)
        ok = self.grade >= 0
        np.maximum.at(out, self.topic[ok], self.grade[ok])
        return out

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts[T+1], grades): each topic's positive grades, highest first."""
        pos = self.grade > 0
        t, g = self.topic[pos], self.grade[pos]
        order = np.lexsort((-g, t))
        starts = np.searchsorted(t[order], np.arange(self.num_topics + 1))
        return starts, g[order]


class QrelsIndex:
    """A parsed qrels table, sorted by topic, with keys for the join with runs."""

    def __init__(self, qrels: pa.Table):
        query_id = pc.cast(qrels.column("query_id"), pa.string()).combine_chunks()
        topics = pc.unique(query_id).to_pylist()
        # strcmp order of qids: Python str order equals UTF-8 byte order.
        self.topics: list[str] = sorted(topics)
        topic = pc.index_in(query_id, value_set=pa.array(self.topics, pa.string()))
        topic_np = topic.to_numpy(zero_copy_only=False).astype(np.int64)
        grade = pc.cast(qrels.column("relevance"), pa.int64()).to_numpy(zero_copy_only=False)
        doc_id = pc.cast(qrels.column("doc_id"), pa.string()).combine_chunks()
        self.doc_id: pa.Array
        if len(topic_np) < 2 or bool(np.all(topic_np[1:] >= topic_np[:-1])):
            # qrels files list topics in order: no copies of millions of rows to sort them
            self.topic, self.grade, self.doc_id = topic_np, grade, doc_id
        else:
            order = np.argsort(topic_np, kind="stable")
            self.topic = topic_np[order]
            self.grade = grade[order]
            self.doc_id = doc_id.take(pa.array(order))
        self.starts = np.searchsorted(self.topic, np.arange(len(self.topics) + 1))

    # The keys serve the NumPy path only: a run the C kernel scans never needs them.
    @cached_property
    def _key_parts(self) -> tuple[int, np.ndarray, np.ndarray]:
        return self._keys()

    @property
    def seed(self) -> int:
        return self._key_parts[0]

    @property
    def keys(self) -> np.ndarray:
        return self._key_parts[1]

    @property
    def key_order(self) -> np.ndarray:
        return self._key_parts[2]

    @cached_property
    def sorted_keys(self) -> np.ndarray:
        return self.keys[self.key_order]

    @cached_property
    def kernel_table(self) -> object | None:
        """The judgments as the C kernel's hash table (None when the kernel is off)."""
        if not kernel.enabled():
            return None
        return kernel.qrels_table(self.doc_id, self.topic, self.topics)

    @cached_property
    def topic_array(self) -> pa.Array:
        """The topics as an Arrow array, to look run query_ids up in (once per qrels)."""
        return pa.array(self.topics, pa.string())

    @cached_property
    def doc_bytes(self) -> pa.Array:
        """doc_id as binary, to compare with run doc_ids read as bytes."""
        return self.doc_id.cast(pa.binary())

    def _keys(self) -> tuple[int, np.ndarray, np.ndarray]:
        """Keys with no collision between different judgments (retry with another seed)."""
        for seed in range(16):
            keys = pair_keys(self.doc_id, self.topic, seed)
            order = np.argsort(keys, kind="stable")
            same = np.flatnonzero(keys[order][1:] == keys[order][:-1])
            if all(self._same_pair(order[i], order[i + 1]) for i in same):
                return seed, keys, order
        raise RuntimeError("could not find collision-free keys for the qrels")  # pragma: no cover

    def _same_pair(self, a: int, b: int) -> bool:
        return bool(self.topic[a] == self.topic[b]) and (
            self.doc_id[int(a)].as_py() == self.doc_id[int(b)].as_py()
        )

    @cached_property
    def duplicate_docs(self) -> dict[int, str]:
        """Topic index -> one doc_id judged twice in that topic (an error once evaluated)."""
        if self.kernel_table is not None:
            rows = kernel.qrels_duplicates(self.kernel_table)
            return {int(self.topic[r]): self.doc_id[int(r)].as_py() for r in rows[::-1]}
        sk = self.sorted_keys
        same = np.flatnonzero(sk[1:] == sk[:-1])
        return {
            int(self.topic[self.key_order[i]]): self.doc_id[int(self.key_order[i])].as_py()
            for i in same
        }

    def for_topics(self, topics: np.ndarray) -> TopicQrels:
        """Judgment statistics of the given qrels topics (indices), renumbered 0..T-1."""
        counts = self.starts[topics + 1] - self.starts[topics]
        first = np.repeat(self.starts[topics] - (np.cumsum(counts) - counts), counts)
        rows = first + np.arange(int(counts.sum()))
        return TopicQrels(
            topic=np.repeat(np.arange(len(topics)), counts),
            grade=self.grade[rows],
            num_topics=len(topics),
        )

    def keys_for(self, doc_id: pa.Array | pa.ChunkedArray, topic: np.ndarray) -> np.ndarray:
        """Keys of run rows (doc_id, qrels topic index), comparable with the judgments' keys."""
        return pair_keys(doc_id, topic, self.seed)

    def keys_and_matches(
        self, doc_id: pa.Array | pa.ChunkedArray, topic: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(keys of run rows, rows whose key matches a judgment, that judgment's row).

        Matches are by key only; the caller confirms them on the strings.
        """
        slots, shift = self._slots
        found: list[tuple[np.ndarray, np.ndarray]] = []

        def screen(keys: np.ndarray, first: int) -> None:
            # the slot fits in 24 bits: an int64 view spares numpy's uint64 index cast
            owner = slots[(keys >> shift).view(np.int64)]
            maybe = np.flatnonzero(owner != -1)
            if len(maybe):
                found.append(self._exact(keys, maybe, owner[maybe], first))

        keys = pair_keys(doc_id, topic, self.seed, screen if len(self.keys) else None)
        if not found:
            return keys, np.empty(0, np.int64), np.empty(0, np.int64)
        return (keys, np.concatenate([f[0] for f in found]),
                np.concatenate([f[1] for f in found]))

    @cached_property
    def _slots(self) -> tuple[np.ndarray, np.uint64]:
        """A direct-mapped table of the keys by their top bits: the judgment's row, -1 for an
        empty slot, -2 for a slot shared by several judgments. Most run rows are rejected,
        and most matches found, by one lookup."""
        bits = int(np.clip(np.ceil(np.log2(max(len(self.keys), 1) * 16)), 12, 22))
        shift = np.uint64(64 - bits)
        slot = (self.keys >> shift).astype(np.int64)
        table = np.full(1 << bits, -1, np.int32)
        table[slot] = np.arange(len(slot), dtype=np.int32)
        ordered = np.sort(slot)
        table[ordered[1:][ordered[1:] == ordered[:-1]]] = -2
        return table, shift

    def _exact(
        self, keys: np.ndarray, maybe: np.ndarray, owner: np.ndarray, first: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Of the candidate rows (slice-relative), those whose key equals a judgment's key,
        as (run row, judgment row)."""
        qrow = owner.astype(np.int64)
        shared = np.flatnonzero(owner == -2)
        if len(shared):  # several judgments in the slot: find the key among the sorted ones
            pos = np.searchsorted(self.sorted_keys, keys[maybe[shared]])
            qrow[shared] = self.key_order[np.minimum(pos, len(self.sorted_keys) - 1)]
        hit = self.keys[qrow] == keys[maybe]
        return maybe[hit] + first, qrow[hit]
