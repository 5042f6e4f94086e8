"""What a pooling strategy needs beyond the runs (its `needs`), read from the store: the
candidates' text for `cal`, automatic judges' current grades for `uncertain`.

Anything missing is refused here with what to do, before a round is created or served.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pooling.errors import StoreError
from pooling.judging.history import find_judge, judge_current
from pooling.store.core import Store
from pooling.strategies import Strategy, TopicRuns
from pooling.strategies.uncertain import JudgeGrade, judge_names


def strategy_inputs(store: Store, strategy: Strategy, topics: Mapping[str, TopicRuns],
                    judged: Mapping[str, Iterable[str]] | None = None, *,
                    load: bool = True) -> dict[str, Any]:
    """The inputs `strategy` needs for these topics, by name (empty when it needs none).

    judged: per topic, documents judged already whose text a learning strategy may also use.
    load=False only checks that the inputs are there (an adaptive round being created reads
    them later, a topic at a time) and returns nothing.
    """
    inputs: dict[str, Any] = {}
    if "texts" in strategy.needs:
        check_texts(store, strategy.name, topics)
        if load:
            inputs["texts"] = candidate_texts(store, topics, judged or {})
    if "judge_grades" in strategy.needs:
        names = judge_names(strategy.options.get("judges", ""))
        grades = {name: judge_grades(store, name, list(topics) if load else []) for name in names}
        if load:
            inputs["judge_grades"] = grades
    return inputs


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


def judge_grades(store: Store, name: str, query_ids: list[str]) -> dict[str, dict[str, JudgeGrade]]:
    """A judge's current judgment of each pair of these topics, in any round or outside
    rounds (the latest, after retractions): query_id -> doc_id -> JudgeGrade.

    The scale is 0..the judge's declared top grade (`declared_max_grade`), never the range
    of the grades it happened to give; the strategy's max_grade overrides it.
    """
    try:
        judge_id, params = find_judge(store, name)
    except StoreError as exc:
        raise StoreError(f"--judge {name}: {exc}") from None
    high = declared_max_grade(store, judge_id, params)
    latest = judge_current(store, judge_id, query_ids=query_ids)
    out: dict[str, dict[str, JudgeGrade]] = {}
    for (q, d), (grade, probability, _) in latest.items():
        out.setdefault(q, {})[d] = JudgeGrade(int(grade), probability, 0, high)
    return out


# Backends whose grades are 0 or 1 whatever their parameters: the learned judge grades 1
# when P(relevant) >= 0.5.
_BINARY_BACKENDS = frozenset({"learned"})


def declared_max_grade(store: Store, judge_id: str, params: Mapping[str, Any]) -> int | None:
    """The top of a judge's grade scale as the judge declares it: its max_grade parameter
    (an openai judge without one: the prompt's default), 1 for a binary backend, None for a
    judge that declares none (a command judge: its program's scale is not known here)."""
    if params.get("max_grade") is not None:
        return int(params["max_grade"])
    row = store.one("judge backend", "SELECT backend FROM assessors WHERE assessor_id = ?",
                    [judge_id])
    backend = row[0] if row else None
    if backend in _BINARY_BACKENDS:
        return 1
    # Here, not at the top: rounds import this module, and the backends package is needed
    # only to read a backend's declared default.
    from pooling.judge_backends.registry import BACKENDS

    spec = BACKENDS.get(backend or "")
    default = next((p.default for p in spec.params if p.name == "max_grade"), None) if spec else None
    return None if default is None else int(default)


def triage_topics(store: Store, strategy: Strategy, topics: list[str] | None
                  ) -> dict[str, TopicRuns]:
    """The topics a strategy that queues from its judges' grades covers without runs: every
    topic a named judge has a current judgment in (of `topics`, when given), with no
    rankings. Empty for a strategy that reads no judges' grades."""
    if "judge_grades" not in strategy.needs:
        return {}
    found: set[str] = set()
    for name in judge_names(strategy.options.get("judges", "")):
        try:
            judge_id, _ = find_judge(store, name)
        except StoreError as exc:
            raise StoreError(f"--judge {name}: {exc}") from None
        found |= {q for q, _ in judge_current(store, judge_id, query_ids=topics)}
    return {q: TopicRuns(q, {}) for q in sorted(found)}
