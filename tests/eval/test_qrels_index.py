"""The qrels index: run rows are joined to their judgments by key, exactly."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pooling.evaluation.qrels_index import QrelsIndex


def test_every_judged_run_row_finds_its_judgment_even_in_shared_slots():
    # 6,000 judgments in a table of 2^17 slots: dozens of slots hold two judgments, and
    # most run rows are not judged at all.
    rng = np.random.default_rng(3)
    topics = rng.integers(0, 40, size=6000).astype(str)
    docs = np.array([f"doc-{i}" for i in rng.permutation(6000)])
    index = QrelsIndex(pa.table({"query_id": topics, "doc_id": docs,
                                 "relevance": rng.integers(0, 3, size=6000)}))
    table, _ = index._slots
    assert (table == -2).sum() > 10
    run_docs = np.concatenate([docs, [f"other-{i}" for i in range(20000)]])
    run_topics = np.concatenate([topics, rng.integers(0, 40, size=20000).astype(str)])
    order = rng.permutation(len(run_docs))
    qtopic = np.array([index.topics.index(t) for t in run_topics[order]])
    _, rows, qrow = index.keys_and_matches(pa.array(run_docs[order]), qtopic)
    judged = np.flatnonzero(order < 6000)
    assert sorted(rows.tolist()) == judged.tolist()
    got = dict(zip(rows.tolist(), qrow.tolist(), strict=True))
    for row in judged:
        q = got[int(row)]
        assert index.doc_id[q].as_py() == run_docs[order][row]
        assert index.topics[index.topic[q]] == run_topics[order][row]
