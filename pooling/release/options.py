"""What a release holds: which qrels versions, which runs, which documents, and its title."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
