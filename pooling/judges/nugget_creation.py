"""Nuggets made by a model judge, as AutoNuggetizer makes them, into a bank people edit.

For each topic the judge reads the topic's relevant documents (from a qrels version, with
their text), `window` at a time, most relevant first, and each time returns the updated list
of nuggets (at most `max_nuggets`, 30 by default), given the list so far: the list grows and
is rewritten as the documents are read. Then it labels the nuggets vital or okay, `window`
at a time. The bank gets them vital first, each group in the model's order, capped at
`max_nuggets`, as edits of provenance `model` by the judge, and is frozen into a version;
people then edit it (every edit kept) and freeze the version a round judges.

Every step goes through the judge's backend (`ask`): a chat model reads the prompts below
(`{query}`, `{context}`, `{nuggets}`, `{max_nuggets}`) and answers with a list; a program
reads a JSON line `{"task": "create_nuggets" | "label_nuggets", "query_id", "query",
"segments": [{"doc_id", "title", "text"}] | "nuggets": [...], ...}` and replies `{"nuggets": [...]}`
or `{"importance": [...]}`. Each call is recorded in `judge_calls` (its doc_id names the step,
`part` the sha256 of what was asked, its answer, tokens and time), so a job killed and run
again asks nothing it has an answer for. A topic whose step fails is left out and reported.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pooling.errors import StoreError
from pooling.judges.backends.base import OK, Ask, Reply, Verdict
from pooling.judges.model_judges import get_judge, judge_backend, record_calls
from pooling.store.core import Store
from pooling.store.nugget_banks import freeze, live_nuggets
from pooling.terminal.progress import NoProgress, Progress

MAX_NUGGETS = 30
WINDOW = 10

CREATE_PROMPT = """\
You are building the list of information nuggets a good answer to a search query must \
contain. A nugget is one atomic fact, 1 to 12 words. Update the list below, if needed, so \
that it best gives the information the query asks for, using only the list and the \
documents that follow; this is one step of several over the query's relevant documents. \
Keep at most {max_nuggets} nuggets, no redundant ones, in decreasing order of importance.

Query: {query}
Documents:
{context}
Nuggets so far: {nuggets}

Answer with the full updated list only, as a JSON list of strings."""

LABEL_PROMPT = """\
Label each nugget by how important it is for answering the search query: "vital" if an \
answer must contain it to be good, "okay" if it is worth having but not required.

Query: {query}
Nuggets: {nuggets}

Answer with a JSON list of "vital" or "okay", one per nugget, in the same order."""


@dataclass
class CreationReport:
    """What `create_nuggets` did."""

    bank: str
    version: str | None
    topics: int = 0
    nuggets: int = 0
    vital: int = 0
    calls: int = 0
    cached: int = 0
    failures: list[str] = field(default_factory=list)  # a line per topic left out
    prompt_tokens: int = 0
    completion_tokens: int = 0


def create_nuggets(store: Store, judge_name: str, bank: str, *, qrels: str | None = None,
                   topics: Sequence[str] | None = None, max_nuggets: int = MAX_NUGGETS,
                   window: int = WINDOW, relevant_from: int = 1, replace: bool = False,
                   version: str | None = None, progress: Progress | None = None) -> CreationReport:
    """Let a judge make each topic's nuggets from its relevant documents (module doc)."""
    if not 1 <= max_nuggets <= 1000 or not 1 <= window <= 100:
        raise StoreError(f"--max-nuggets must be 1 to 1000 and --window 1 to 100, got "
                         f"{max_nuggets} and {window}")
    judge = get_judge(store, judge_name)
    segments, titles = _relevant_texts(store, store.resolve_qrels(qrels), topics, relevant_from)
    if not segments:
        raise StoreError("no topic has a relevant document with text in the store; import the "
                         "documents (`pooling import docs`) or name another qrels version")
    existing = live_nuggets(store, bank)
    taken = sorted(q for q in segments if existing.get(q))
    if taken and not replace:
        raise StoreError(f"bank {bank!r} has nuggets already for {len(taken)} topic(s) "
                         f"({', '.join(map(repr, taken[:5]))}); make them into another bank, "
                         "or pass --replace (their deletion is recorded)")
    model = judge_backend(store, judge, list(segments))
    if not hasattr(model, "ask"):
        model.close()
        raise StoreError(f"judge {judge.judge_id!r} ({judge.backend}) answers grades only; nuggets "
                         "are made by a chat model (openai) or a program (command)")
    report = CreationReport(bank, None)
    progress = progress or NoProgress()
    lists: dict[str, list[str]] = {q: [] for q in segments}
    failed: dict[str, str] = {}
    steps = max(-(-len(docs) // window) for docs in segments.values())
    progress.start(f"making nuggets with {judge.judge_id}", total=steps + 1)
    try:
        for step in range(steps):
            asks = []
            for q, docs in segments.items():
                chunk = docs[step * window:(step + 1) * window]
                if q in failed or not chunk:
                    continue
                context = "\n".join(f"[{i + 1}] {title + '. ' if title else ''}{text}"
                                     for i, (_, title, text) in enumerate(chunk))
                asks.append(_ask(q, f"create:{step * window}-{step * window + len(chunk)}",
                                 CREATE_PROMPT.format(query=titles[q], context=context,
                                                      nuggets=json.dumps(lists[q]),
                                                      max_nuggets=max_nuggets),
                                 {"task": "create_nuggets", "query_id": q, "query": titles[q],
                                  "segments": [{"doc_id": d, "title": h, "text": t}
                                               for d, h, t in chunk],
                                  "nuggets": lists[q], "max_nuggets": max_nuggets}))
            for reply in _answers(store, judge, model, asks, report):
                got = _strings(reply, "nuggets") if reply.status == OK else None
                if got is None:
                    failed[reply.query_id] = reply.error or f"its answer holds no list of nuggets: {reply.text!r:.120}"
                else:
                    lists[reply.query_id] = got[:max_nuggets]
            progress.advance(1)
        labels: dict[str, list[str]] = {q: [] for q in lists}
        for start in range(0, max_nuggets, window):
            asks = [_ask(q, f"label:{start}-{start + len(ns[start:start + window])}",
                         LABEL_PROMPT.format(query=titles[q], nuggets=json.dumps(ns[start:start + window])),
                         {"task": "label_nuggets", "query_id": q, "query": titles[q],
                          "nuggets": ns[start:start + window]})
                    for q, ns in lists.items() if q not in failed and ns[start:start + window]]
            for reply in _answers(store, judge, model, asks, report):
                got = _strings(reply, "importance") if reply.status == OK else None
                n = len(lists[reply.query_id][start:start + window])
                if got is None or len(got) != n:
                    # a label the model could not give is okay, as nuggetizer keeps the nugget
                    got = (got or [])[:n] + ["okay"] * (n - len(got or []))
                labels[reply.query_id] += [g.lower() if g.lower() in ("vital", "okay") else "okay"
                                           for g in got]
        progress.advance(1)
    finally:
        model.close()
        progress.finish()
    report.failures = [f"topic {q}: {why}" for q, why in sorted(failed.items())]
    made = {q: ns for q, ns in lists.items() if q not in failed and ns}
    if not made:
        raise StoreError("the judge made no nugget for any topic:\n" + "\n".join(report.failures[:5]))
    _write(store, bank, judge.judge_id, made, labels, existing if replace else {}, max_nuggets)
    report.topics = len(made)
    report.nuggets = sum(min(len(ns), max_nuggets) for ns in made.values())
    report.vital = sum(labels[q][:len(made[q])].count("vital") for q in made)
    report.version = freeze(store, bank, version, method=f"model:{judge.judge_id}",
                            source=store.resolve_qrels(qrels), topics=list(made),
                            params={"max_nuggets": max_nuggets, "window": window,
                                    "relevant_from": relevant_from})
    return report


def _ask(query_id: str, key: str, prompt: str, fields: dict) -> Ask:
    return Ask(query_id, key, prompt, fields)


def _asked(a: Ask) -> str:
    """The sha256 of what an ask sends (its prompt and its fields): its answer is reused only
    for the very same question."""
    return hashlib.sha256((a.prompt + "\0" + json.dumps(a.fields, sort_keys=True)).encode()).hexdigest()


def _answers(store: Store, judge, model, asks: list[Ask], report: CreationReport) -> list[Reply]:
    """Each ask's reply: from the judge's recorded calls when it was asked before, else from
    the model (the calls recorded at once, so a kill loses nothing answered)."""
    replies, todo = [], []
    for a in asks:
        row = store.one("asked before", "SELECT answer FROM judge_calls WHERE judge_id = ? AND "
                        "query_id = ? AND doc_id = ? AND part = ? AND status = 'ok' ORDER BY "
                        "called_at DESC LIMIT 1", [judge.judge_id, a.query_id, a.key, _asked(a)])
        if row is not None:
            replies.append(Reply(a.query_id, a.key, OK, row[0], None))
            report.cached += 1
        else:
            todo.append(a)
    if todo:
        by_key = {(a.query_id, a.key): a for a in todo}
        fresh = list(model.ask(todo))
        record_calls(store, judge, None, [
            (r.query_id, r.key, _asked(by_key[(r.query_id, r.key)]),
             Verdict(r.query_id, r.key, r.status, None, None, r.text, r.error, r.prompt_tokens,
                     r.completion_tokens, r.seconds)) for r in fresh])
        report.calls += len(fresh)
        report.prompt_tokens += sum(r.prompt_tokens or 0 for r in fresh)
        report.completion_tokens += sum(r.completion_tokens or 0 for r in fresh)
        replies += fresh
    return replies


_FENCE = re.compile(r"```(?:json|python)?", re.IGNORECASE)


def _strings(reply: Reply, key: str) -> list[str] | None:
    """The list of strings a reply holds: a JSON object's `key`, or the first list literal
    in the text (JSON or Python, code fences dropped); None when there is none."""
    text = _FENCE.sub("", reply.text or "").strip()
    found = None
    try:
        value = json.loads(text)
        found = value.get(key) if isinstance(value, dict) else value
    except ValueError:
        start, end = text.find("["), text.rfind("]")
        if 0 <= start < end:
            try:
                found = ast.literal_eval(text[start:end + 1])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                found = None
    if not isinstance(found, list) or not all(isinstance(x, str) for x in found):
        return None
    return [x.strip() for x in found if x.strip()]


def _relevant_texts(store: Store, qrels: str, topics: Sequence[str] | None, relevant_from: int
                    ) -> tuple[dict[str, list[tuple[str, str | None, str]]], dict[str, str]]:
    """Each topic's relevant documents (doc_id, title, text), most relevant first (then by
    doc_id), and each topic's query text (its title, else its id)."""
    rows = store.sql("relevant texts", """
        SELECT q.query_id, q.doc_id, nullif(trim(d.title), ''), d.text
        FROM qrels q JOIN documents d USING (doc_id)
        WHERE q.version = ? AND q.relevance >= ? AND d.text IS NOT NULL
        ORDER BY q.query_id, q.relevance DESC, q.doc_id""", [qrels, relevant_from]).fetchall()
    wanted = set(topics) if topics else None
    segments: dict[str, list[tuple[str, str | None, str]]] = {}
    for q, d, title, text in rows:
        if wanted is None or q in wanted:
            segments.setdefault(q, []).append((d, title, text))
    titles = dict(store.sql("titles", "SELECT query_id, coalesce(title, query_id) FROM topics").fetchall())
    return segments, {q: titles.get(q, q) for q in segments}


def _write(store: Store, bank: str, judge_id: str, made: dict[str, list[str]],
           labels: dict[str, list[str]], replaced: dict[str, list[str]], max_nuggets: int) -> None:
    """The nuggets as the bank's edits: vital first, each group in the model's order."""
    from pooling.store.nugget_banks import add_nugget, delete_nugget

    with store.transaction():
        for q, state in replaced.items():
            if q in made:
                for n in state:
                    delete_nugget(store, bank, q, n, made_by=judge_id, provenance="model",
                                  note="replaced by the judge's nuggets")
        for q, nuggets in made.items():
            tagged = list(zip(nuggets, labels[q] + ["okay"] * (len(nuggets) - len(labels[q])),
                              strict=True))
            ordered = [t for t in tagged if t[1] == "vital"] + [t for t in tagged if t[1] != "vital"]
            for text, importance in ordered[:max_nuggets]:
                add_nugget(store, bank, q, text, importance, made_by=judge_id, provenance="model")

