#!/usr/bin/env python
"""Runs of real retrieval models over the Cranfield collection, for pooling replays.

Cranfield has real text and near-exhaustive judgments but no submitted runs, so this makes
ten, of varied quality: BM25 in four settings (one on titles only), TF-IDF cosine over words,
word bigrams and character n-grams, query likelihood with Dirichlet smoothing, and two weak
ones (BM25 on each query's first three terms; raw term overlap). Top 100 per query, ties
broken by doc_id. Deterministic; needs scikit-learn (the dev or bench extra).

Writes OUTDIR/cranfield.qrels (TREC qrels; Cranfield grade g in 1..4 becomes 5 - g, -1 becomes
0; query ids are cranqrel's 1..225), OUTDIR/topics.tsv, OUTDIR/runs/<tag>.run,
OUTDIR/runs.tsv, then OUTDIR/DONE; it prints each run's MAP and P@10.

    .venv/bin/python scripts/make_cranfield_runs.py OUTDIR [--cranfield ../shared/data/cranfield]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.formats.smart import read_smart_documents, read_smart_qrels, read_smart_topics  # noqa: E402

DEPTH = 100


def bm25(counts: sp.csr_matrix, queries: sp.csr_matrix, k1: float, b: float) -> np.ndarray:
    """BM25 scores (queries x docs) from term counts (docs x terms) and query term counts."""
    n_docs = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
    tf = counts.tocoo()
    weights = tf.data * (k1 + 1) / (tf.data + norm[tf.row]) * idf[tf.col]
    doc_term = sp.csr_matrix((weights, (tf.row, tf.col)), shape=counts.shape)
    q = queries.copy()
    q.data = np.ones_like(q.data, dtype=np.float64)  # each query term once
    return (q @ doc_term.T).toarray()


def dirichlet(counts: sp.csr_matrix, queries: sp.csr_matrix, mu: float) -> np.ndarray:
    """Query likelihood with Dirichlet smoothing (log p(q|d)), documents without any query
    term scored at the floor."""
    collection = np.asarray(counts.sum(axis=0)).ravel() + 1.0
    p_c = collection / collection.sum()
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    q = queries.tocsr()
    out = np.zeros((q.shape[0], counts.shape[0]))
    dense_counts = counts.T.tocsr()  # terms x docs
    for i in range(q.shape[0]):
        terms, qtf = q[i].indices, q[i].data
        if len(terms) == 0:
            continue
        tf = dense_counts[terms].toarray()  # terms x docs
        probs = (tf + mu * p_c[terms, None]) / (lengths[None, :] + mu)
        out[i] = (qtf[:, None] * np.log(probs)).sum(axis=0)
    return out


def overlap(counts: sp.csr_matrix, queries: sp.csr_matrix) -> np.ndarray:
    q = queries.copy()
    q.data = np.ones_like(q.data, dtype=np.float64)
    return (q @ counts.T).toarray().astype(np.float64)


def make_runs(cranfield: Path) -> tuple[dict[str, tuple[str, np.ndarray]], list[str], list[str]]:
    """{tag: (description, scores queries x docs)}, query ids, doc ids."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    docs = read_smart_documents(cranfield / "cran.all.1400").to_pylist()
    topics = read_smart_topics(cranfield / "cran.qry").to_pylist()
    doc_ids = [d["doc_id"] for d in docs]
    query_ids = [t["query_id"] for t in topics]
    full = [f"{d['title'] or ''} {d['text'] or ''}" for d in docs]
    titles = [d["title"] or "" for d in docs]
    queries = [t["title"] for t in topics]
    words = CountVectorizer(stop_words="english")
    counts = words.fit_transform(full).tocsr()
    q_counts = words.transform(queries).tocsr()
    short = words.transform([" ".join([w for w in q.split() if w not in words.get_stop_words()][:3])
                             for q in queries]).tocsr()
    title_words = CountVectorizer(stop_words="english")
    title_counts = title_words.fit_transform(titles).tocsr()
    runs: dict[str, tuple[str, np.ndarray]] = {
        "bm25": ("BM25 k1=1.2 b=0.75, title and text", bm25(counts, q_counts, 1.2, 0.75)),
        "bm25-flat": ("BM25 k1=0.9 b=0.4", bm25(counts, q_counts, 0.9, 0.4)),
        "bm25-steep": ("BM25 k1=2.0 b=1.0", bm25(counts, q_counts, 2.0, 1.0)),
        "bm25-title": ("BM25 k1=1.2 b=0.75 on titles only",
                       bm25(title_counts, title_words.transform(queries).tocsr(), 1.2, 0.75)),
        "ql-dir": ("query likelihood, Dirichlet mu=300", dirichlet(counts, q_counts, 300.0)),
        "bm25-3terms": ("BM25 on each query's first three terms (weak)", bm25(counts, short, 1.2, 0.75)),
        "overlap": ("raw term overlap (weak)", overlap(counts, q_counts)),
    }
    for tag, description, vectorizer in (
        ("tfidf", "TF-IDF cosine, words, sublinear tf", TfidfVectorizer(stop_words="english", sublinear_tf=True)),
        ("tfidf-bigram", "TF-IDF cosine, words and bigrams",
         TfidfVectorizer(stop_words="english", ngram_range=(1, 2), sublinear_tf=True)),
        ("tfidf-char", "TF-IDF cosine, character 3-5 grams",
         TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)),
    ):
        matrix = vectorizer.fit_transform(full)
        runs[tag] = (description, (vectorizer.transform(queries) @ matrix.T).toarray())
    return runs, query_ids, doc_ids


def write_run(path: Path, tag: str, scores: np.ndarray, query_ids: list[str], doc_ids: list[str]) -> None:
    ids = np.array(doc_ids)
    numeric = np.array([int(d) for d in doc_ids])
    lines = []
    for i, q in enumerate(query_ids):
        row = scores[i]
        # score descending, then doc id ascending: a fixed order for tied scores
        order = np.lexsort((numeric, -row))[:DEPTH]
        order = [j for j in order if np.isfinite(row[j])]
        for rank, j in enumerate(order, start=1):
            lines.append(f"{q} Q0 {ids[j]} {rank} {row[j]:.6f} {tag}\n")
    path.write_text("".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--cranfield", type=Path, default=ROOT.parent / "shared" / "data" / "cranfield")
    args = ap.parse_args()
    out: Path = args.outdir
    if (out / "DONE").exists():
        print(f"{out}: already made")
        return
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "runs").mkdir(parents=True)
    runs, query_ids, doc_ids = make_runs(args.cranfield)
    qrels = read_smart_qrels(args.cranfield / "cranqrel")
    (tmp / "cranfield.qrels").write_text("".join(
        f"{q} 0 {d} {r}\n" for q, d, r in zip(qrels["query_id"].to_pylist(), qrels["doc_id"].to_pylist(),
                                              qrels["relevance"].to_pylist(), strict=True)))
    topics = read_smart_topics(args.cranfield / "cran.qry").to_pylist()
    (tmp / "topics.tsv").write_text("".join(f"{t['query_id']}\t{t['title']}\n" for t in topics))
    meta = ["file\trun_id\tteam\tdescription\n"]
    for tag, (description, scores) in runs.items():
        write_run(tmp / "runs" / f"{tag}.run", tag, scores, query_ids, doc_ids)
        meta.append(f"runs/{tag}.run\t{tag}\t{tag.split('-')[0]}\t{description}\n")
    (tmp / "runs.tsv").write_text("".join(meta))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    (out / "DONE").write_text("ok\n")
    from pooling.evaluation import evaluate

    result = evaluate(str(out / "cranfield.qrels"), [str(p) for p in sorted((out / "runs").glob("*.run"))],
                      ["map", "P.10"], missing_topics="zero")
    print(f"{'run':14} {'MAP':>6} {'P@10':>6}")
    means: dict[str, dict[str, float]] = {}
    for r in result.means.to_pylist():
        means.setdefault(r["run_id"], {})[r["measure"]] = r["value"]
    for run_id, m in sorted(means.items(), key=lambda kv: -kv[1]["map"]):
        print(f"{run_id:14} {m['map']:6.4f} {m['P_10']:6.4f}")


if __name__ == "__main__":
    main()
