"""What a release holds: which qrels versions, which runs, which documents, and its title."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pooling.errors import PoolingError

PROCESS_LIMIT = 1 << 20  # an account of the process is prose: a megabyte is plenty


class RunsMode(StrEnum):
    """Which runs a release carries."""

    all = "all"
    pooled = "pooled"  # the runs marked pooled (the ones that built the pool)
    none = "none"


class DocsMode(StrEnum):
    """Which documents a release carries. Text only when asked: a collection's texts often
    come under a licence that forbids passing them on."""

    ids = "ids"
    text = "text"
    none = "none"


@dataclass(frozen=True)
class ReleaseOptions:
    """How to release a store.

    qrels: the versions to include (None: all of them; the store's default is marked as such).
    title: the collection's name in the datasheet, card and citation (default: the store
    file's name). authors: the citation's authors (default: the collection's organisers as one
    entity). license: an SPDX id or `other`/`unknown`, for the card and the citation.
    pool_bias: compute the leave-one-run-out pool bias for the datasheet (it re-scores every
    run; leave it out for very large stores and say so). force: replace an existing OUT.
    rounds: the judging rounds to release (None: all); exclude_rounds: rounds left out (test
    rounds, say): their pools, contributions, judgments and model calls are in no file and
    no figure. judgments: release the judgment history (and who judged); without it the
    release holds the qrels and the pool only. process: the organiser's own account of how
    the collection was pooled and judged (Markdown), included in the datasheet, its HTML
    escaped.
    """

    qrels: tuple[str, ...] | None = None
    runs: RunsMode = RunsMode.all
    documents: DocsMode = DocsMode.ids
    title: str | None = None
    authors: tuple[str, ...] = ()
    license: str = "unknown"
    version: str = "1.0"
    pool_bias: bool = True
    force: bool = False
    rounds: tuple[str, ...] | None = None
    exclude_rounds: tuple[str, ...] = ()
    judgments: bool = True
    process: str | None = None


def read_process(path: str | os.PathLike[str]) -> str:
    """The organiser's account of the process from a Markdown file (UTF-8, at most a
    megabyte); a file that cannot be read is refused, naming it."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(PROCESS_LIMIT + 1)
    except OSError as exc:
        raise PoolingError(f"{path}: cannot be read ({exc.strerror}); give the Markdown file "
                           "that tells how the collection was pooled and judged") from exc
    if len(data) > PROCESS_LIMIT:
        raise PoolingError(f"{path}: longer than {PROCESS_LIMIT:,} bytes; the account of the "
                           "process is prose for the datasheet, shorten it")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise PoolingError(f"{path}, line {line}: not UTF-8 text; save the account as UTF-8 "
                           "Markdown") from exc
