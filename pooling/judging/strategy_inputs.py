"""What a pooling strategy needs beyond the runs (its `needs`), read from the store: the
candidates' text for `cal` (here), automatic judges' current grades for `uncertain` and the
triage strategies (`pooling.judges.grades_input`, registered from the model judges' package:
the core knows no backend).

Each need names a `StrategyInput` in `STRATEGY_INPUTS`. Anything missing is refused by it,
with what to do, before a round is created or served.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from pooling.errors import StoreError
from pooling.judging.plugins import Registry
from pooling.store.core import Store
from pooling.strategies import Strategy, TopicRuns


class StrategyInput(Protocol):
    """One input a strategy may need beyond the runs (a name of `Strategy.needs`), read
    from the store."""

    def read(self, store: Store, strategy: Strategy, topics: Mapping[str, TopicRuns],
             judged: Mapping[str, Iterable[str]], *, load: bool) -> Any:
        """The input for these topics (refused, saying what to do, when the store lacks it);
        load=False only checks that it is there and returns None."""
        ...

    def topics_without_runs(self, store: Store, strategy: Strategy, topics: list[str] | None
                            ) -> dict[str, TopicRuns]:
        """The topics the input covers when the strategy reads no runs (with no rankings):
        empty for an input that covers none by itself."""
        ...


STRATEGY_INPUTS: Registry[StrategyInput] = Registry("pooling.strategy_inputs", "strategy input")


def strategy_inputs(store: Store, strategy: Strategy, topics: Mapping[str, TopicRuns],
                    judged: Mapping[str, Iterable[str]] | None = None, *,
                    load: bool = True) -> dict[str, Any]:
    """The inputs `strategy` needs for these topics, by name (empty when it needs none).

    judged: per topic, documents judged already whose text a learning strategy may also use.
    load=False only checks that the inputs are there (an adaptive round being created reads
    them later, a topic at a time) and returns nothing.
    """
    inputs: dict[str, Any] = {}
    for need in strategy.needs:
        value = STRATEGY_INPUTS.get(need).read(store, strategy, topics, judged or {}, load=load)
        if load:
            inputs[need] = value
    return inputs


def topics_without_runs(store: Store, strategy: Strategy, topics: list[str] | None
                        ) -> dict[str, TopicRuns]:
    """The topics a strategy that reads no runs covers through its inputs (of `topics`, when
    given), with no rankings: those a named judge has a current judgment in, for one that
    queues from its judges' grades. Empty when none of its inputs covers topics."""
    covered: dict[str, TopicRuns] = {}
    for need in strategy.needs:
        covered.update(STRATEGY_INPUTS.get(need).topics_without_runs(store, strategy, topics))
    return {q: covered[q] for q in sorted(covered)}


class CandidateTexts:
    """`texts`: the candidates' (and judged documents') titles and text, for a strategy that
    learns from them; refused when no candidate of a topic has any."""

    def read(self, store: Store, strategy: Strategy, topics: Mapping[str, TopicRuns],
             judged: Mapping[str, Iterable[str]], *, load: bool) -> dict[str, str] | None:
        check_texts(store, strategy.name, topics)
        return candidate_texts(store, topics, judged) if load else None

    def topics_without_runs(self, store: Store, strategy: Strategy, topics: list[str] | None
                            ) -> dict[str, TopicRuns]:
        return {}


def check_texts(store: Store, strategy: str, topics: Mapping[str, TopicRuns]) -> None:
    """Refuse topics none of whose candidates has a title or text in the store."""
    pairs = [(q, d) for q, t in topics.items() for d in t.candidates()]
    with_text = {r[0] for r in store.con.execute(
        "SELECT DISTINCT c.query_id FROM (SELECT UNNEST(?) AS query_id, UNNEST(?) AS doc_id) c "
        "JOIN documents d ON d.doc_id = c.doc_id "
        "WHERE regexp_matches(coalesce(d.title, '') || coalesce(d.text, ''), '\\S')",
        [[q for q, _ in pairs], [d for _, d in pairs]]).fetchall()}
    bare = [q for q in topics if q not in with_text]
    if bare:
        shown = ", ".join(bare[:10]) + (f" and {len(bare) - 10} more" if len(bare) > 10 else "")
        raise StoreError(
            f"strategy {strategy!r} reads the documents' text, but the store has none for the "
            f"candidates of topic(s) {shown}; import the documents with `pooling import docs "
            "STORE FILE` (or choose another --strategy)")


def candidate_texts(store: Store, topics: Mapping[str, TopicRuns],
                    judged: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """doc_id -> title and text of every candidate (and judged document) that has some."""
    # Here, not at the top: rounds import this module, and the backends package (HTTP client,
    # subprocess driver) is needed only by a round that reads text.
    from pooling.strategies.text_classifier import document_text

    wanted = sorted({d for t in topics.values() for d in t.candidates()}
                    | {d for docs in judged.values() for d in docs})
    rows = store.con.execute(
        "SELECT doc_id, title, text FROM documents WHERE doc_id IN (SELECT UNNEST(?))",
        [wanted]).fetchall()
    texts = {d: document_text(title, text) for d, title, text in rows}
    return {d: t for d, t in texts.items() if t.strip()}


STRATEGY_INPUTS.register("texts", CandidateTexts())
