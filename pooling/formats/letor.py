"""LETOR / SVMlight feature files: `label qid:Q 1:v 2:v ... # comment`, one document a line.

The label becomes the relevance grade. The document id comes from the comment:
`# docid = GX000-00-0000000 inc = 1 prob = 0.0` (LETOR 4.0) or `# X` (the first token).
Lines without a comment (MSLR-WEB, Yahoo! LTR) get the id `<qid>-<n>`, n being the line's
1-based position among its query's lines: it depends only on that query's lines, so the ids
are the same in every file (fold) that holds the query. As in SVMlight, a feature absent
from a line is 0.0. A (query_id, doc_id) pair seen twice is a problem.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pooling.errors import FormatError, Problem
from pooling.formats.common import FirstSeen, ProblemLog, iter_lines
from pooling.formats.schemas import QRELS_SCHEMA, RUN_SCHEMA
from pooling.formats.source import PathLike, display_name

DOCID_COMMENT = re.compile(r"\bdocid\s*=\s*(\S+)")
HINT = (
    "Expected LETOR/SVMlight lines like `2 qid:10 1:0.5 2:0.1 # docid = D1`: an integer "
    "label, qid:, then feature:value pairs with distinct positive integer features."
)


@dataclass(frozen=True)
class LetorData:
    """A parsed LETOR file.

    qrels:    QRELS_SCHEMA, one row per line, the label as relevance.
    features: query_id, doc_id, then one float64 column per feature id ("1", "2", ...), in
              numeric order; rows in file order, aligned with qrels.
    """

    source: str
    qrels: pa.Table
    features: pa.Table

    @property
    def feature_ids(self) -> list[str]:
        return self.features.column_names[2:]


def read_letor(path: PathLike) -> LetorData:
    """Read a LETOR/SVMlight file; raises `FormatError` listing every bad line."""
    log = ProblemLog(display_name(path))
    seen = FirstSeen(log, "document")
    per_query: Counter[str] = Counter()
    query_ids: list[str] = []
    doc_ids: list[str] = []
    labels: list[int] = []
    values: list[dict[int, float]] = []
    for number, line in iter_lines(path, log):
        data, _, comment = line.partition("#")
        if not data.strip():
            continue  # blank or comment-only line
        parsed = _parse_data(data, number, log)
        if parsed is None:
            continue
        label, query_id, features = parsed
        per_query[query_id] += 1
        doc_id = _doc_id(comment) or f"{query_id}-{per_query[query_id]}"
        if seen.is_new((query_id, doc_id), number, shown=f"{doc_id!r} for qid {query_id}"):
            query_ids.append(query_id)
            doc_ids.append(doc_id)
            labels.append(label)
            values.append(features)
    if not query_ids and not log.problems:
        log.add(None, "file is empty: expected `label qid:Q feature:value ...` lines")
    log.raise_if_any(HINT)

    qrels = pa.table(
        {"query_id": query_ids, "doc_id": doc_ids, "relevance": labels}, schema=QRELS_SCHEMA
    )
    columns: dict[str, object] = {"query_id": query_ids, "doc_id": doc_ids}
    for fid in sorted({f for row in values for f in row}):
        columns[str(fid)] = np.array([row.get(fid, 0.0) for row in values], dtype=np.float64)
    return LetorData(log.source, qrels, pa.table(columns))


def _parse_data(data: str, line: int, log: ProblemLog) -> tuple[int, str, dict[int, float]] | None:
    """(label, query_id, {feature: value}) of a line's data part, or None after logging."""
    tokens = data.split()
    problems: list[str] = []
    label: int | None = None
    try:
        number = float(tokens[0])
        if number.is_integer():
            label = int(number)
    except ValueError:
        pass
    if label is None:
        problems.append(f"label should be an integer, found {tokens[0]!r}")
    query_id = None
    if len(tokens) > 1 and tokens[1].startswith("qid:") and len(tokens[1]) > 4:
        query_id = tokens[1][4:]
    else:
        problems.append(
            f"expected qid:<id> after the label, found {' '.join(tokens[1:2]) or 'nothing'!r}"
        )
    features: dict[int, float] = {}
    for token in tokens[2:]:
        fid_text, sep, value_text = token.partition(":")
        try:
            fid, value = int(fid_text), float(value_text)
            if fid < 1 or not sep or math.isnan(value):
                raise ValueError
        except ValueError:
            problems.append(
                f"expected feature:value with a positive integer feature, found {token!r}"
            )
            continue
        if fid in features:
            problems.append(f"feature {fid} given twice")
        features[fid] = value
    for message in problems:
        log.add(line, message)
    if problems or label is None or query_id is None:
        return None
    return label, query_id, features


def _doc_id(comment: str) -> str | None:
    """The document id in a line's comment, if it names one."""
    found = DOCID_COMMENT.search(comment)
    if found:
        return found.group(1)
    tokens = comment.split()
    return tokens[0] if tokens else None


def feature_run(letor: LetorData, feature_id: int | str, tag: str | None = None) -> pa.Table:
    """A run (RUN_SCHEMA) ranking each query's documents by one feature, highest first.

    score = the feature's value; rank = 1, 2, ... by score descending then doc_id descending
    (trec_eval's tie order), so the rank field agrees with the order evaluation uses.
    """
    column = str(feature_id)
    if column not in letor.feature_ids:
        shown = ", ".join(letor.feature_ids[:10]) + (" ..." if len(letor.feature_ids) > 10 else "")
        raise FormatError(
            [Problem(letor.source, None, f"no feature {column}")],
            hint=f"Choose one of the file's features: {shown or 'none'}.",
        )
    table = pa.table(
        {
            "query_id": letor.features.column("query_id"),
            "doc_id": letor.features.column("doc_id"),
            "score": letor.features.column(column),
        }
    )
    order = pc.sort_indices(
        table, [("query_id", "ascending"), ("score", "descending"), ("doc_id", "descending")]
    )
    table = table.take(order)
    query_ids = table.column("query_id").to_numpy(zero_copy_only=False)
    positions = np.arange(len(query_ids), dtype=np.int64)
    starts = np.ones(len(query_ids), dtype=bool)
    starts[1:] = query_ids[1:] != query_ids[:-1]
    group_start = np.maximum.accumulate(np.where(starts, positions, 0))
    ranks = positions - group_start + 1
    tags = pa.array([tag or f"feature_{column}"] * len(query_ids), pa.string())
    return pa.table(
        [
            table.column("query_id"),
            table.column("doc_id"),
            pa.array(ranks),
            table.column("score"),
            tags,
        ],
        schema=RUN_SCHEMA,
    )
