"""One run's per-topic rankings in trec_eval's order, reduced to what the measures need.

Order is score descending, ties broken by doc_id descending in byte order (SEMANTICS §2.1);
`-M` keeps the first n; a doc_id twice among the kept docs of a topic is an error. Only the
retrieved docs that have a qrels entry are kept, with their ranks: every other retrieved doc
is "non-pool" (rel -1) and is implied by `num_ret`. Measures therefore cost O(judged), not
O(retrieved). Runs are almost always already in score order, so the builder verifies that
in one pass and re-sorts only tie groups whose order can change a measure.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import EvaluationError
from pooling.evaluation.kernel import KernelScan
from pooling.evaluation.qrels_index import QrelsIndex, TopicQrels
from pooling.evaluation.topics import TopicPlan
from pooling.evaluation.trec_input import equal_runs


class DuplicateDocsError(EvaluationError):
    """A doc_id twice in one topic of a run (or of the qrels); exit 4 like trec_eval."""

    exit_code = 4


@dataclass(frozen=True)
class Ranking:
    """Judged retrieved docs of T topics as flat arrays sorted by (topic, rank).

    rel is trec_eval's value: the grade (>= 0) or -2 for a negative grade ("pooled,
    unjudged"); docs without a qrels entry (-1) are not stored. rank_asc is the rank under
    ir_measures' tie-break (doc_id ascending), used by Judged(ties=asc)@k only.
    """

    query_ids: list[str]
    num_ret: np.ndarray  # int64[T], after -M
    starts: np.ndarray  # int64[T+1]
    topic: np.ndarray  # int64[J]
    rank: np.ndarray  # int64[J], 1-based
    rel: np.ndarray  # int64[J]
    rank_asc: np.ndarray  # int64[J]
    qrels: TopicQrels
    missing: np.ndarray  # bool[T]: not in the run, scored on trec_eval's one-doc dummy ranking
    run_id: str

    @property
    def num_topics(self) -> int:
        return len(self.query_ids)

    def dense_rel(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts[T+1], rel) over every retrieved doc, -1 for non-pool: for rare measures."""
        starts = np.concatenate([[0], np.cumsum(self.num_ret)])
        rel = np.full(int(starts[-1]), -1, np.int64)
        rel[starts[self.topic] + self.rank - 1] = self.rel
        return starts, rel


def keep_judged(ranking: Ranking) -> Ranking:
    """trec_eval's -J: each topic's ranking keeps only its judged docs (grade >= 0), ranks
    closed up in their order, and num_ret counts them (form_res_rels.c, judged_docs_only_flag).

    Docs without a judgment (-1) and pooled-but-unjudged ones (-2) are gone, so are the
    dummy docs of topics a run lacks (-c).
    """
    keep = ranking.rel >= 0
    topic = ranking.topic[keep]
    T = ranking.num_topics
    starts = np.searchsorted(topic, np.arange(T + 1))
    rank = np.arange(len(topic), dtype=np.int64) - starts[topic] + 1
    order = np.lexsort((ranking.rank_asc[keep], topic))
    rank_asc = np.empty(len(topic), np.int64)
    rank_asc[order] = np.arange(len(topic)) - starts[topic[order]] + 1
    return replace(ranking, num_ret=np.bincount(topic, minlength=T).astype(np.int64),
                   starts=starts, topic=topic, rank=rank, rel=ranking.rel[keep],
                   rank_asc=rank_asc)


def run_topic_index(
    query_id: pa.ChunkedArray | pa.Array, qrels: QrelsIndex
) -> tuple[np.ndarray, np.ndarray]:
    """(qrels topic index of each run row or -1, bool per qrels topic: the run has lines).

    Runs list a topic's lines together, so each run of equal query_ids is looked up once.
    """
    chunks = query_id.chunks if isinstance(query_id, pa.ChunkedArray) else [query_id]
    topics = qrels.topic_array
    covered = np.zeros(len(qrels.topics) + 1, bool)  # the extra slot absorbs -1
    parts = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            values, codes, sizes = chunk.dictionary, chunk.indices.to_numpy(zero_copy_only=False), None
        else:
            if pa.types.is_run_end_encoded(chunk.type) and chunk.offset:
                chunk = pc.run_end_decode(chunk)  # a slice: its run ends are not its own
            if pa.types.is_run_end_encoded(chunk.type):
                values, ends = chunk.values, chunk.run_ends.to_numpy(zero_copy_only=False)
            else:
                values, ends = equal_runs(chunk)
            sizes = np.diff(ends, prepend=0)
        mapping = pc.fill_null(pc.index_in(pc.cast(values, pa.string()), value_set=topics), -1)
        mapping = mapping.to_numpy(zero_copy_only=False).astype(np.int32)
        if not len(mapping):
            continue
        if sizes is None:
            covered[mapping[np.bincount(codes, minlength=len(mapping)) > 0]] = True
            parts.append(mapping[codes])
        else:
            covered[mapping] = True
            parts.append(np.repeat(mapping, sizes))
    qtopic = np.concatenate(parts) if parts else np.empty(0, np.int32)
    return qtopic, covered[:-1]


def take_rows(array: pa.ChunkedArray | pa.Array, rows: np.ndarray) -> pa.Array:
    """array[rows] without concatenating the chunks of a large chunked array first."""
    if not isinstance(array, pa.ChunkedArray):
        return array.take(pa.array(rows))
    if array.num_chunks == 1:
        return array.chunk(0).take(pa.array(rows))
    bounds = np.cumsum([0] + [len(c) for c in array.chunks])
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    cuts = np.searchsorted(ordered, bounds)
    parts = [
        array.chunk(i).take(pa.array(ordered[cuts[i] : cuts[i + 1]] - bounds[i]))
        for i in range(array.num_chunks)
        if cuts[i + 1] > cuts[i]
    ]
    taken = pa.concat_arrays(parts) if parts else pa.array([], array.type)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return taken.take(pa.array(inverse))


class RunScan:
    """A run's rows as they stream in, with the per-row work done piece by piece.

    Each piece's rows get their qrels topic, their (topic, doc_id) key and their match in
    the qrels (confirmed on the strings) while the reader parses the next piece. The arrays
    are sized from the share of the file read so far: growing them by copies, or joining
    pieces at the end, would raise the memory peak by millions of keys.
    `unique=True` (a stored run: the store refuses a doc_id twice in a topic) keeps no keys
    and skips the duplicate check.
    """

    def __init__(self, qrels: QrelsIndex, *, unique: bool = False):
        self.qrels = qrels
        self.unique = unique
        self.rows = 0
        self.has_nan = False
        self.covered = np.zeros(len(qrels.topics), bool)
        self.doc_chunks: list[pa.Array] = []
        self._qtopic = np.empty(0, np.int32)
        self._keys = np.empty(0, np.uint64)
        self._score = np.empty(0, np.float64)
        self._matches: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, table: pa.Table, share: float = 1.0) -> None:
        """Take one piece (columns query_id, doc_id, score); `share` of the run seen so far."""
        n = table.num_rows
        qtopic, covered = run_topic_index(table.column("query_id"), self.qrels)
        self.covered |= covered
        doc_id = table.column("doc_id")
        keys, rows, qrow = self.qrels.keys_and_matches(doc_id, qtopic)
        rows, qrow = _confirm(self.qrels, rows, qrow, doc_id, qtopic)
        end = self.rows + n
        self._reserve(end, int(end / share * 1.02) + 1024 if 0 < share < 1 else end)
        self._qtopic[self.rows : end] = qtopic
        if not self.unique:
            self._keys[self.rows : end] = keys
        score = self._score[self.rows : end]
        score[:] = pc.cast(table.column("score"), pa.float64()).to_numpy()
        self.has_nan = self.has_nan or bool(np.isnan(score).any())
        self._matches.append((rows + self.rows, qrow))
        self.doc_chunks.extend(doc_id.chunks if isinstance(doc_id, pa.ChunkedArray) else [doc_id])
        self.rows = end

    def _reserve(self, size: int, expected: int) -> None:
        if size > len(self._score):  # np.empty: room never written takes no memory
            room = max(size, expected, int(1.25 * len(self._score)))
            for name in ("_qtopic", "_score") if self.unique else ("_qtopic", "_keys", "_score"):
                old = getattr(self, name)
                new = np.empty(room, old.dtype)
                new[: self.rows] = old[: self.rows]
                setattr(self, name, new)

    def take(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, pa.ChunkedArray]:
        """(qtopic, keys, score, doc_id) of every row, handed over: the scan lets go of them,
        so the ranking can free each one as soon as it is done with it. keys is None for a
        scan of unique rows."""
        n = self.rows
        kind = self.doc_chunks[0].type if self.doc_chunks else pa.string()
        taken = (self._qtopic[:n], self._keys[:n], self._score[:n],
                 pa.chunked_array(self.doc_chunks, kind))
        self._qtopic, self._keys, self._score = (np.empty(0, a.dtype) for a in taken[:3])
        self.doc_chunks = []
        return taken if not self.unique else (taken[0], None, *taken[2:])

    def matches(self) -> tuple[np.ndarray, np.ndarray]:
        """(run rows that are judged, their qrels rows)."""
        if not self._matches:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return (np.concatenate([m[0] for m in self._matches]),
                np.concatenate([m[1] for m in self._matches]))


def build_ranking(
    qrels: QrelsIndex,
    plan: TopicPlan,
    scan: RunScan,
    *,
    max_docs: int | None,
    run_id: str,
    run_name: str,
) -> Ranking:
    """Rank a scanned run's rows for the planned topics."""
    num_topics = len(plan.topics)
    rows, qrow = scan.matches()
    qtopic, keys, score, doc_id = scan.take()
    if num_topics == len(qrels.topics):  # every qrels topic: evaluated index = qrels index
        t = qtopic
    else:
        to_eval = np.full(len(qrels.topics) + 1, -1, np.int32)  # the extra slot maps -1 to -1
        to_eval[plan.topics] = np.arange(num_topics)
        t = to_eval[qtopic]
    keep = t >= 0
    if not keep.all():
        doc_id = doc_id.filter(pa.array(keep))
        t, score = t[keep], score[keep]
        keys = keys[keep] if keys is not None else None
        ok = keep[rows]
        rows, qrow = (np.cumsum(keep) - 1)[rows[ok]], qrow[ok]
    _check_qrels_duplicates(qrels, plan)
    del qtopic

    perm, topic_change = _score_order(t, score)
    if perm is not None:
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(len(perm))
        rows = inverse[rows]
        t, score = t[perm], score[perm]
        keys = keys[perm] if keys is not None else None
    duplicates = _DuplicateCheck(t, doc_id, perm, plan, qrels, run_name)
    with ThreadPoolExecutor(2) as pool:
        sorting = None
        if keys is not None and max_docs is None:  # sort the keys while the layout is made
            sorting = duplicates.sort(pool, keys, None, _topic_cut(t) if perm is None else 0)
            keys = None
        layout = _Layout(t, score, rows, doc_id, perm, max_docs, topic_change)
        del score
        if keys is not None and max_docs is not None:
            sorting = duplicates.sort(pool, keys, layout.kept(), 0)
        if sorting is not None:
            duplicates.check(*sorting)

    pos, pos_asc = layout.positions(rows)
    if max_docs is not None:
        ok = pos < max_docs
        rows, qrow, pos, pos_asc = rows[ok], qrow[ok], pos[ok], pos_asc[ok]
    return _judged_ranking(qrels, plan, t[rows].astype(np.int64), pos, pos_asc, qrow,
                           np.bincount(t, minlength=num_topics), max_docs=max_docs, run_id=run_id)


def _judged_ranking(
    qrels: QrelsIndex,
    plan: TopicPlan,
    topic: np.ndarray,
    pos: np.ndarray,
    pos_asc: np.ndarray,
    qrow: np.ndarray,
    retrieved: np.ndarray,
    *,
    max_docs: int | None,
    run_id: str,
) -> Ranking:
    """The Ranking of the judged retrieved docs (evaluated topic, 0-based positions, qrels
    row; those -M cuts already dropped), given each evaluated topic's retrieved docs."""
    order = np.lexsort((pos, topic))
    jt, grade = topic[order], qrels.grade[qrow[order]]
    num_ret = retrieved.astype(np.int64)
    num_ret[plan.missing] = 1  # trec_eval -c: one non-pool dummy document
    if max_docs is not None:
        num_ret = np.minimum(num_ret, max_docs)
    return Ranking(
        query_ids=[qrels.topics[i] for i in plan.topics],
        num_ret=num_ret,
        starts=np.searchsorted(jt, np.arange(len(plan.topics) + 1)),
        topic=jt,
        rank=pos[order] + 1,
        rel=np.where(grade < 0, -2, grade),
        rank_asc=pos_asc[order] + 1,
        qrels=qrels.for_topics(plan.topics),
        missing=plan.missing,
        run_id=run_id,
    )


def kernel_ranking(
    qrels: QrelsIndex,
    plan: TopicPlan,
    scan: KernelScan,
    *,
    max_docs: int | None,
    run_id: str,
) -> Ranking:
    """The ranking of a run the C kernel scanned (its judged documents already placed)."""
    to_eval = np.full(len(qrels.topics), -1, np.int64)
    to_eval[plan.topics] = np.arange(len(plan.topics))
    t = to_eval[scan.topic]
    keep = t >= 0
    if max_docs is not None:
        keep &= scan.pos < max_docs
    _check_qrels_duplicates(qrels, plan)
    return _judged_ranking(qrels, plan, t[keep], scan.pos[keep], scan.pos_asc[keep],
                           scan.qrow[keep], scan.num_ret[plan.topics], max_docs=max_docs,
                           run_id=run_id)


def _confirm(
    qrels: QrelsIndex,
    rows: np.ndarray,
    qrow: np.ndarray,
    doc_id: pa.ChunkedArray | pa.Array,
    qtopic: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Keep the key matches whose doc_id and topic really are the judgment's.

    So a key collision can never join a run row to the wrong judgment.
    """
    if len(rows):
        mine = pc.cast(take_rows(doc_id, rows), pa.binary())  # bytes, as trec_eval compares
        same = pc.equal(mine, qrels.doc_bytes.take(pa.array(qrow)))
        ok = same.to_numpy(zero_copy_only=False) & (qrels.topic[qrow] == qtopic[rows])
        rows, qrow = rows[ok], qrow[ok]
    return rows, qrow


def _score_order(t: np.ndarray, score: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(None, topic changes) when rows are already grouped by topic in descending score;
    else (a sorting permutation, None)."""
    if len(t) < 2:
        return None, None
    change = t[1:] != t[:-1]
    blocks = int(np.count_nonzero(change)) + 1
    topics = int(np.count_nonzero(np.bincount(t)))
    if blocks == topics and bool(np.all((score[1:] <= score[:-1]) | change)):
        return None, change
    return np.lexsort((-score, t)), None


class _Layout:
    """Topic blocks and score-tie groups of rows already in (topic, score desc) order.

    Positions within a topic follow row order, except inside tie groups, which are ordered
    by doc_id. Only groups holding a judged doc (or straddling the -M cut) are sorted: in a
    group of non-pool docs every order gives the same measures.
    """

    # A tie group with at most this many judged docs places them by counting, for each, the
    # group members with a greater doc_id (cost judged x size); bigger ones are sorted.
    _COUNT_LIMIT = 8

    def __init__(self, t, score, judged_rows, doc_id, perm, max_docs, topic_change=None):
        n = len(t)
        self.n, self.max_docs = n, max_docs
        self.doc_id, self.perm = doc_id, perm
        new_group = np.empty(n, bool)
        if n:
            new_group[0] = True
            if topic_change is not None:
                new_group[1:] = topic_change
            else:
                np.not_equal(t[1:], t[:-1], out=new_group[1:])
        self.block_start = np.flatnonzero(new_group)
        if n:
            new_group[1:] |= score[1:] != score[:-1]
        group_start = np.flatnonzero(new_group)
        del new_group
        # Only the groups of judged rows are measured: arrays over all of the millions of
        # groups would raise the memory peak.
        g = np.searchsorted(group_start, judged_rows, side="right") - 1
        size = self._group_end(group_start, g) - group_start[g]
        tied = size > 1
        groups, judged_in = np.unique(g[tied], return_counts=True)
        chosen = groups[judged_in > self._COUNT_LIMIT]
        if max_docs is not None:
            every = np.arange(len(group_start))
            sizes = self._group_end(group_start, every) - group_start
            first = group_start - self._block_start_of(group_start)
            cut = (sizes > 1) & (first < max_docs) & (first + sizes > max_docs)
            chosen = np.union1d(chosen, every[cut])
        count = tied & ~np.isin(g, chosen)
        placed = [self._sort_groups(group_start[chosen], self._group_end(group_start, chosen))]
        rows = judged_rows[count]
        placed.append(self._count_places(rows, group_start[g[count]], size[count]))
        rows_all = np.concatenate([p[0] for p in placed])
        order = np.argsort(rows_all)
        self.sorted_rows = rows_all[order]
        self.sorted_pos = np.concatenate([p[1] for p in placed])[order]
        self.sorted_pos_asc = np.concatenate([p[2] for p in placed])[order]

    def _group_end(self, group_start: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The row after the last of each given group."""
        later = groups + 1
        last = later >= len(group_start)
        return np.where(last, self.n, group_start[np.where(last, 0, later)])

    def _block_start_of(self, rows: np.ndarray) -> np.ndarray:
        return self.block_start[np.searchsorted(self.block_start, rows, side="right") - 1]

    def _docs(self, rows: np.ndarray) -> pa.Array:
        return take_rows(self.doc_id, self.perm[rows] if self.perm is not None else rows)

    def _count_places(self, rows, starts, sizes):
        """Positions of judged rows in their tie groups by counting greater / smaller doc_ids."""
        if len(rows) == 0:
            return rows, rows, rows
        order = np.argsort(rows, kind="stable")  # groups in row order, each gathered once
        rows, starts, sizes = rows[order], starts[order], sizes[order]
        first = np.ones(len(rows), bool)
        first[1:] = starts[1:] != starts[:-1]
        group = np.cumsum(first) - 1
        g_start, g_size = starts[first], sizes[first]
        g_off = np.cumsum(g_size) - g_size  # where each group's members begin in `local`
        members = np.repeat(g_start - g_off, g_size) + np.arange(int(g_size.sum()))
        local = self._docs(members)  # members ascend: one pass over the run column
        # Each judged row against every member of its group.
        owner = np.repeat(np.arange(len(rows)), sizes)
        p_off = np.cumsum(sizes) - sizes
        theirs = local.take(pa.array(g_off[group][owner] + np.arange(len(owner)) - p_off[owner]))
        mine = local.take(pa.array((g_off[group] + rows - starts)[owner]))
        greater = pc.greater(theirs, mine).to_numpy(zero_copy_only=False)
        less = pc.less(theirs, mine).to_numpy(zero_copy_only=False)
        base = starts - self._block_start_of(starts)
        above = np.bincount(owner, weights=greater, minlength=len(rows)).astype(np.int64)
        below = np.bincount(owner, weights=less, minlength=len(rows)).astype(np.int64)
        return rows, base + above, base + below

    def _sort_groups(self, starts, ends):
        """Rows of the given tie groups with their positions under doc_id desc / asc."""
        sizes = ends - starts
        total = int(sizes.sum())
        if total == 0:
            empty = np.empty(0, np.int64)
            return empty, empty, empty
        offsets = np.cumsum(sizes) - sizes
        gid = np.repeat(np.arange(len(starts)), sizes)
        rows = np.repeat(starts, sizes) + (np.arange(total) - offsets[gid])
        order = pc.sort_indices(
            pa.table({"g": gid, "d": self._docs(rows)}),
            sort_keys=[("g", "ascending"), ("d", "descending")],
        ).to_numpy()
        ordered, g = rows[order], gid[order]
        within = np.arange(total) - offsets[g]
        base = starts[g] - self._block_start_of(starts[g])
        return ordered, base + within, base + sizes[g] - 1 - within

    def positions(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """0-based positions within the topic of the given rows (doc_id desc, and asc)."""
        pos = rows - self._block_start_of(rows)
        pos_asc = pos.copy()
        if len(self.sorted_rows) and len(rows):
            i = np.minimum(np.searchsorted(self.sorted_rows, rows), len(self.sorted_rows) - 1)
            hit = self.sorted_rows[i] == rows
            pos[hit] = self.sorted_pos[i[hit]]
            pos_asc[hit] = self.sorted_pos_asc[i[hit]]
        return pos, pos_asc

    def kept(self) -> np.ndarray | None:
        """Rows kept by -M (None when every row is kept)."""
        if self.max_docs is None:
            return None
        sizes = np.diff(np.append(self.block_start, self.n))
        pos = np.arange(self.n, dtype=np.int64) - np.repeat(self.block_start, sizes)
        kept = pos < self.max_docs
        kept[self.sorted_rows] = self.sorted_pos < self.max_docs
        return kept


def _qrels_topic(t: np.ndarray, plan: TopicPlan) -> np.ndarray:
    """Qrels topic index of each row from its evaluated-topic index."""
    return plan.topics[t]


def _check_qrels_duplicates(qrels: QrelsIndex, plan: TopicPlan) -> None:
    dups = qrels.duplicate_docs
    for t in plan.topics:
        if int(t) in dups:
            raise DuplicateDocsError(
                f"qrels judge document {dups[int(t)]} twice in topic {qrels.topics[t]}; "
                "keep one judgment per (topic, document)"
            )


def _topic_cut(t: np.ndarray) -> int:
    """A row near the middle where a new topic starts (rows grouped by topic), or 0."""
    mid = len(t) // 2
    if mid == 0:
        return 0
    later = np.flatnonzero(t[mid:] != t[mid - 1])
    return mid + int(later[0]) if len(later) else 0


@dataclass
class _DuplicateCheck:
    """A doc_id twice among a topic's kept docs is an error (trec_eval exits 4)."""

    t: np.ndarray
    doc_id: pa.ChunkedArray | pa.Array
    perm: np.ndarray | None
    plan: TopicPlan
    qrels: QrelsIndex
    run_name: str

    def sort(
        self, pool: ThreadPoolExecutor, keys: np.ndarray, kept: np.ndarray | None, cut: int
    ) -> tuple[np.ndarray, np.ndarray | None, int, list[Future]]:
        """Start sorting `keys` in place (the caller is done with them: this spares a copy of
        millions); `check` waits for it.

        With `cut` at a topic boundary the two halves sort on both cores: a duplicate pair
        always shares its topic, so no pair straddles the cut.
        """
        ordered = keys[kept] if kept is not None else keys
        halves = [pool.submit(np.ndarray.sort, part) for part in (ordered[:cut], ordered[cut:])]
        return ordered, kept, cut, halves

    def check(
        self, ordered: np.ndarray, kept: np.ndarray | None, cut: int, halves: list[Future]
    ) -> None:
        """Once sorted, equal neighbours are duplicates (confirmed on the strings)."""
        for half in halves:
            half.result()
        same = ordered[1:] == ordered[:-1]
        if cut:
            same[cut - 1] = False
        if same.any():
            self._report(kept, np.unique(ordered[1:][same]))

    def _report(self, kept: np.ndarray | None, suspect_keys: np.ndarray) -> None:
        """Confirm suspected duplicates on the strings (keys can collide) and raise."""
        t, perm, doc_id = self.t, self.perm, self.doc_id
        docs_in_order = doc_id if perm is None else take_rows(doc_id, perm)
        keys = self.qrels.keys_for(docs_in_order, _qrels_topic(t, self.plan))
        suspect = np.isin(keys, suspect_keys)
        suspects = np.flatnonzero(suspect if kept is None else suspect & kept)
        docs = take_rows(docs_in_order, suspects).to_pylist()
        seen: set[tuple[int, str]] = set()
        found: list[tuple[int, str]] = []
        docs = [d.decode(errors="replace") if isinstance(d, bytes) else d for d in docs]
        for topic, doc in zip(t[suspects].tolist(), docs, strict=True):
            if (topic, doc) in seen:
                found.append((topic, doc))
            seen.add((topic, doc))
        if found:
            topic, doc = min(found)
            raise DuplicateDocsError(
                f"run {self.run_name} retrieves document {doc} twice for topic "
                f"{self.qrels.topics[self.plan.topics[topic]]} "
                f"({len(found)} duplicate line(s) in all); "
                "trec_eval refuses this too: keep one line per (topic, document), or read the run "
                "with --dedupe first to keep the first of each"
            )
