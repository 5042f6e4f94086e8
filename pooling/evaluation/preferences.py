"""trec_eval's -R prefs and -R qrels_prefs: evaluating runs against preference judgments.

prefs file lines: `query_id jg jsg doc_id rel_level` (rel_level read with C `atof`). Within a
judgment sub-group (jsg), a doc with a higher rel_level is preferred to one with a lower;
a judgment group (jg) joins its sub-groups, with transitive preferences added. A rel_level
of 0 means non-relevant. qrels_prefs reads a qrels file as prefs: the 2nd column is the jg
and every line is in sub-group "0". Comment lines are skipped as in qrels files.

Each topic's counts follow form_prefs_counts.c: retrieved judged docs get internal ranks
0..njr-1 in rank order, unretrieved judged docs njr.. in doc_id order; a group with one
sub-group is counted by its equivalence classes (docs of equal rel_level), one with several
by a preference matrix closed under transitivity. The run is ranked by score descending
with ties broken by doc_id **ascending** (the prefs code's own comparison, the reverse of
the qrels measures'), then cut at -M. The measures are in `pooling.measures.preferences`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Unpack

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import EvaluationError
from pooling.evaluation.engine import assemble_run
from pooling.evaluation.inputs import (
    QrelsInput,
    RunInput,
    as_table,
    run_at,
    run_list,
    with_columns,
)
from pooling.evaluation.options import EvalInputs, EvalOptions
from pooling.evaluation.ranking import DuplicateDocsError
from pooling.evaluation.results import Evaluation, NoTopicsError
from pooling.evaluation.topics import candidate_topics, plan_topics
from pooling.evaluation.trec_input import (
    QRELS_LINE,
    TrecRun,
    atof_column,
    bom_lines,
    bom_warning,
    qrels_fields,
    read_run,
)
from pooling.formats.source import display_name, read_bytes
from pooling.measures import Kind, Measure
from pooling.measures.preferences import GroupCounts, PrefsContext, TopicPrefs

PREFS_COLUMNS = ["query_id", "jg", "jsg", "doc_id", "rel_level"]
PREFS_LINE = "a prefs line (query_id jg jsg doc_id rel_level)"
DUMMY_DOC = "ceci_nest_pas_un_docno"  # trec_eval's one-doc ranking for a topic a run lacks (-c)


class PrefsError(EvaluationError):
    """Preferences trec_eval cannot count (a doc both preferred and not within one judgment
    group); it exits 4 on them."""

    exit_code = 4


def read_prefs(path: str | os.PathLike[str], warnings: list[str] | None = None) -> pa.Table:
    """A prefs file as a table of PREFS_COLUMNS (rel_level float64)."""
    name, data = _read(path, warnings)
    tokens = qrels_fields(data, name, 5, PREFS_LINE,
                          "Prefs lines are: query_id jg jsg doc_id rel_level (no blank lines).")
    return pa.table({
        "query_id": pc.list_element(tokens, 0),
        "jg": pc.list_element(tokens, 1),
        "jsg": pc.list_element(tokens, 2),
        "doc_id": pc.list_element(tokens, 3),
        "rel_level": pa.array(atof_column(pc.list_element(tokens, 4)), pa.float64()),
    })


def read_qrels_prefs(path: str | os.PathLike[str], warnings: list[str] | None = None) -> pa.Table:
    """A qrels file read as prefs (trec_eval -R qrels_prefs): jg from the 2nd column, one
    sub-group "0", the grade as rel_level (C `atof`)."""
    name, data = _read(path, warnings)
    tokens = qrels_fields(data, name, 4, QRELS_LINE,
                          "Qrels lines are: query_id jg doc_id relevance (no blank lines).")
    n = len(tokens)
    return pa.table({
        "query_id": pc.list_element(tokens, 0),
        "jg": pc.list_element(tokens, 1),
        "jsg": pa.array(["0"] * n, pa.string()),
        "doc_id": pc.list_element(tokens, 2),
        "rel_level": pa.array(atof_column(pc.list_element(tokens, 3)), pa.float64()),
    })


def _read(path: str | os.PathLike[str], warnings: list[str] | None) -> tuple[str, bytes]:
    name = display_name(path)
    data = read_bytes(path)
    boms = bom_lines(data)
    if boms and warnings is not None:
        warnings.append(bom_warning(name, boms))
    return name, data


def evaluate_prefs(
    qrels: QrelsInput,
    run_or_runs: RunInput | Sequence[RunInput],
    wanted: list[Measure],
    options: EvalOptions | None = None,
    *,
    rel_format: str = "prefs",
    **inputs: Unpack[EvalInputs],
) -> Evaluation:
    """Evaluate runs against preferences: a prefs (or, rel_format "qrels_prefs", a qrels)
    file, or a table of PREFS_COLUMNS.

    The options are `evaluate`'s; of them, preferences use the missing-topics policy, -M,
    the topics and -Z (a preference has no relevance level: the result says 1)."""
    options = replace(options or EvalOptions(), **inputs)
    max_docs = options.max_docs
    warnings: list[str] = []
    if isinstance(qrels, (str, os.PathLike)):
        reader = read_qrels_prefs if rel_format == "qrels_prefs" else read_prefs
        table = reader(qrels, warnings)
    else:
        table = with_columns(as_table(qrels), "prefs", PREFS_COLUMNS, "")
    by_topic = _by_topic(table)
    qrels_topics = sorted(by_topic)
    candidates = candidate_topics(qrels_topics, options.topics)
    results = []
    for position, run in enumerate(run_list(run_or_runs)):
        parsed = read_run(run) if isinstance(run, (str, os.PathLike)) else run_at(run, position)
        if parsed.bom_lines:
            warnings.append(bom_warning(parsed.source, parsed.bom_lines))
        ranked = _rankings(parsed, max_docs)
        covered = np.array([q in ranked for q in qrels_topics], bool)
        plan = plan_topics(candidates, covered, qrels_topics, options.missing_topics,
                           parsed.source)
        if len(plan.topics) == 0:
            raise NoTopicsError(f"run {parsed.source} shares no topic with the preferences; "
                                "check the query_ids")
        evaluated = [qrels_topics[i] for i in plan.topics]
        ctx = PrefsContext([
            count_topic(*by_topic[q], ranked.get(q, [DUMMY_DOC]), q) for q in evaluated])
        values = []
        for m in wanted:
            if m.spec.kind in (Kind.RUNID, Kind.NUM_Q):
                values.append((m, m.columns, np.empty((ctx.T, 0))))
            else:
                values.append((m, m.columns, m.spec.compute(ctx, m)[:, None]))
        results.append(assemble_run(parsed.run_id, evaluated, plan.missing, values,
                                    zscores=options.zscores))
    columns = results[0].columns if results else []
    return Evaluation(results, wanted, options.missing_topics, 1, max_docs, columns, warnings)


def _by_topic(table: pa.Table) -> dict[str, tuple[list[str], list[str], list[str], np.ndarray]]:
    """Each topic's preference lines: (jg, jsg, doc_id, rel_level)."""
    table = table.sort_by([("query_id", "ascending")])
    qid = table["query_id"].to_pylist()
    cols = [table[c].to_pylist() for c in ("jg", "jsg", "doc_id")]
    level = table["rel_level"].to_numpy()
    out: dict[str, Any] = {}
    start = 0
    for i in range(1, len(qid) + 1):
        if i == len(qid) or qid[i] != qid[start]:
            out[str(qid[start])] = (*(c[start:i] for c in cols), level[start:i])
            start = i
    return out


def _rankings(run: TrecRun, max_docs: int | None) -> dict[str, list[str]]:
    """Each run topic's doc_ids in rank order: score descending, doc_id ascending on ties
    (form_prefs_counts.c), the first max_docs kept; a doc_id twice among them is an error."""
    table = run.table.select(["query_id", "doc_id", "score"])
    if not pa.types.is_string(table.schema.field("doc_id").type):
        table = table.set_column(1, "doc_id", pc.cast(table["doc_id"], pa.string()))
    table = table.sort_by([("query_id", "ascending"), ("score", "descending"),
                           ("doc_id", "ascending")])
    qid, doc = table["query_id"].to_pylist(), table["doc_id"].to_pylist()
    out: dict[str, list[str]] = {}
    start = 0
    for i in range(1, len(qid) + 1):
        if i == len(qid) or qid[i] != qid[start]:
            docs = doc[start:i][:max_docs] if max_docs is not None else doc[start:i]
            if len(set(docs)) != len(docs):
                twice = sorted(d for d in set(docs) if docs.count(d) > 1)
                raise DuplicateDocsError(
                    f"run {run.source} retrieves document {twice[0]} twice for topic "
                    f"{qid[start]}; trec_eval refuses this too: keep one line per (topic, "
                    "document)")
            out[str(qid[start])] = docs
            start = i
    return out


def count_topic(
    jg: list[str], jsg: list[str], doc: list[str], level: np.ndarray, ranked: list[str],
    query_id: str = "",
) -> TopicPrefs:
    """One topic's preference counts against a ranking (form_prefs_counts.c)."""
    judged = set(doc)
    judged_ret = [d for d in ranked if d in judged]
    njr = len(judged_ret)
    retrieved = set(judged_ret)
    unretrieved = sorted(judged - retrieved)
    internal = {d: i for i, d in enumerate(judged_ret + unretrieved)}
    nj = len(internal)
    rank = np.array([internal[d] for d in doc], np.int64)
    # Sorted by jg, jsg, rel_level descending, internal rank (comp_prefs_and_ranks_jg_rel_level).
    order = sorted(range(len(doc)), key=lambda i: (jg[i], jsg[i], -level[i], rank[i]))
    counts = np.zeros((nj, nj), np.int64)
    groups = []
    start = 0
    for i in range(1, len(order) + 1):
        if i == len(order) or jg[order[i]] != jg[order[start]]:
            rows = order[start:i]
            sub_groups = {jsg[r] for r in rows}
            entries = (rank[rows], level[rows], [jsg[r] for r in rows], [doc[r] for r in rows])
            if len(sub_groups) > 1:
                groups.append(_matrix_group(*entries, nj, njr, counts, query_id))
            else:
                groups.append(_class_group(entries[0], entries[1], entries[3], njr, counts,
                                           query_id))
            start = i
    return _topic(groups, counts, njr)


def _class_group(rank: np.ndarray, level: np.ndarray, doc: list[str], njr: int,
                 counts: np.ndarray, query_id: str) -> GroupCounts:
    """A group with one sub-group, by its equivalence classes (add_ec_pref_to_jg)."""
    a, b = rank[:, None], rank[None, :]
    pref = level[:, None] > level[None, :]  # a's class above b's
    clash = pref & (a == b)
    if clash.any():
        i = int(np.argwhere(clash)[0][0])
        raise PrefsError(f"topic {query_id}: document {doc[i]} has two different rel_levels in "
                         "one judgment sub-group; give each document one level per sub-group")
    np.add.at(counts, (np.broadcast_to(a, pref.shape)[pref], np.broadcast_to(b, pref.shape)[pref]), 1)
    above = pref & (a < b)
    below = pref & (a > b)
    ful_ret = int((above & (b < njr)).sum())
    ful_imp = int((above & (b >= njr) & (a < njr)).sum())
    notoccur = int((above & (a >= njr)).sum() + (below & (b >= njr)).sum())
    poss_ret = int((below & (a < njr)).sum()) + ful_ret
    poss_imp = int((below & (a >= njr) & (b < njr)).sum()) + ful_imp
    rel = level > 0.0  # any other level, negative ones too, counts as non-relevant here
    ret = rank < njr
    # The last class (the lowest level) stands for the non-relevant docs when they are cut.
    last = rank[level == level[-1]] if len(level) else rank
    ranks_by_class = [(rank[level == v], v) for v in _levels_desc(level)]
    num_rel, num_rel_ret = int(rel.sum()), int((rel & ret).sum())
    return GroupCounts(
        ful_ret, poss_ret, ful_imp, poss_imp, notoccur, num_rel, num_rel_ret,
        int((~rel).sum()), int((~rel & ret).sum()),
        rnonrel=_class_recount(ranks_by_class, last[:num_rel], njr, retrieved_only=False),
        rnonrel_ret=_class_recount(ranks_by_class, last[:num_rel_ret], njr, retrieved_only=True),
    )


def _levels_desc(level: np.ndarray) -> list[float]:
    seen: list[float] = []
    for v in level.tolist():
        if not seen or v != seen[-1]:
            seen.append(v)
    return seen


def _class_recount(classes: list[tuple[np.ndarray, float]], cut: np.ndarray, njr: int, *,
                   retrieved_only: bool) -> tuple[int, int]:
    """(fulfilled, possible) of a class-counted group with its last class (the non-relevant
    docs) cut to `cut`, as m_prefs_avgjg_Rnonrel[_ret].c recount: pairs between classes
    other than the last, then every class (the last included) against the cut class."""
    if retrieved_only:
        classes = [(r[r < njr], v) for r, v in classes]
        cut = cut[cut < njr]

    def tally(first: np.ndarray, second: np.ndarray) -> tuple[int, int]:
        a, b = first[:, None], second[None, :]
        ful = (a < b) if retrieved_only else ((a < b) & (a < njr))
        return int(ful.sum()), int((~ful).sum())

    ful = poss = 0
    last = len(classes) - 1
    for i, (first, _) in enumerate(classes):
        for second, _ in classes[i + 1 : last]:
            f, p = tally(first, second)
            ful, poss = ful + f, poss + p
        f, p = tally(first, cut)
        ful, poss = ful + f, poss + p
    return ful, poss + ful


def _matrix_group(rank: np.ndarray, level: np.ndarray, jsg: list[str], doc: list[str], nj: int,
                  njr: int, counts: np.ndarray, query_id: str) -> GroupCounts:
    """A group with several sub-groups, by its preference matrix (form_jg_pa,
    add_transitives, add_pa_pref_to_jg)."""
    rel_array = np.full(nj, -1.0)
    for r, v, d in zip(rank.tolist(), level.tolist(), doc, strict=True):
        if (rel_array[r] > 0.0 and v == 0.0) or (rel_array[r] == 0.0 and v > 0.0):
            raise PrefsError(f"topic {query_id}: document {d} has both 0 and non-0 rel_levels "
                             "in one judgment group; a group must agree on what is relevant")
        rel_array[r] = v
    prefers = np.zeros((nj, nj), bool)
    names = np.array(jsg, dtype=object)
    for sub in dict.fromkeys(jsg):
        rows = np.flatnonzero(names == sub)
        above, below = np.nonzero(level[rows][:, None] > level[rows][None, :])
        prefers[rank[rows][above], rank[rows][below]] = True
    closure = _transitive(prefers)
    if (closure & closure.T).any():
        i, j = np.argwhere(closure & closure.T)[0]
        raise PrefsError(f"topic {query_id}: its preferences within one judgment group go both "
                         f"ways between two documents (internal ranks {i} and {j}); a group "
                         "must be consistent: put conflicting preferences in different groups")
    counts += closure
    ful_ret, poss_ret, ful_imp, poss_imp, notoccur = _areas(closure, njr)
    rel_ret = int((rel_array[:njr] > 0.0).sum())
    num_rel = int((rel_array > 0.0).sum())
    return GroupCounts(
        ful_ret, poss_ret + ful_ret, ful_imp, poss_imp + ful_imp, notoccur, num_rel, rel_ret,
        int((rel_array == 0.0).sum()), int((rel_array[:njr] == 0.0).sum()),
        rnonrel=_matrix_recount(closure, rel_array, num_rel, njr, retrieved_only=False),
        rnonrel_ret=_matrix_recount(closure, rel_array, num_rel, njr, retrieved_only=True),
    )


def _transitive(prefers: np.ndarray) -> np.ndarray:
    """The transitive closure of a preference relation, without its diagonal."""
    n = len(prefers)
    reach = prefers | np.eye(n, dtype=bool)
    while True:
        step = reach.astype(np.float32) @ reach.astype(np.float32) > 0
        if (step == reach).all():
            break
        reach = step
    np.fill_diagonal(reach, False)
    return reach


def _areas(a: np.ndarray, njr: int) -> tuple[int, int, int, int, int]:
    """(fulfilled retrieved, not fulfilled retrieved, fulfilled implied, not fulfilled
    implied, not occurring): the preferences in the five areas of the matrix split at njr."""
    ret = a[:njr, :njr]
    return (int(np.triu(ret, 1).sum()), int(np.tril(ret, -1).sum()), int(a[:njr, njr:].sum()),
            int(a[njr:, :njr].sum()), int(a[njr:, njr:].sum()))


def _matrix_recount(a: np.ndarray, rel_array: np.ndarray, num_rel: int, njr: int, *,
                    retrieved_only: bool) -> tuple[int, int]:
    """(fulfilled, possible) of a matrix-counted group without the non-relevant docs after
    the (num_rel + 1)-th one (among the retrieved ones for the _ret form)."""
    scope = rel_array[:njr] if retrieved_only else rel_array
    zeros = np.flatnonzero(scope == 0.0)
    first_dropped = zeros[num_rel] if len(zeros) > num_rel else len(scope)
    keep = ~((np.arange(len(rel_array)) >= first_dropped) & (rel_array == 0.0))
    kept = a & keep[:, None] & keep[None, :]
    ful_ret, poss_ret, ful_imp, poss_imp, notoccur = _areas(kept, njr)
    if retrieved_only:
        return ful_ret, poss_ret + ful_ret
    ful = ful_ret + ful_imp
    return ful, poss_ret + poss_imp + notoccur + ful


def _topic(groups: list[GroupCounts], counts: np.ndarray, njr: int) -> TopicPrefs:
    """The topic's groups with its doc pairs' preference shares, in trec_eval's loop order."""
    upper = np.triu_indices(njr, 1)
    mine, theirs = counts[:njr, :njr][upper], counts[:njr, :njr].T[upper]
    both = mine + theirs
    pair_ret = mine[both > 0] / both[both > 0]
    mine, theirs = counts[:njr, njr:].ravel(), counts[njr:, :njr].T.ravel()
    both = mine + theirs
    pair_imp = mine[both > 0] / both[both > 0]
    unret = counts[njr:, njr:]
    pairs_unret = int(np.triu((unret + unret.T) > 0, 1).sum())
    return TopicPrefs(groups, pair_ret.astype(np.float64), pair_imp.astype(np.float64),
                      pairs_unret)
