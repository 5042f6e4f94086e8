"""A small judge program for `pooling judges add … --backend command`: it reads one JSON request
per line on stdin (query_id, doc_id, title, description, narrative, doc_title, doc_text) and
writes one reply per line: a grade 0-2 from how many of the topic's title words the document
uses, the share of them as `probability`, and the words found as `rationale`. Asked about a
subtopic (a request with "subtopic", whose text is the description), it counts the subtopic's
words instead.

Asked to make nuggets (`{"task": "create_nuggets", "query", "segments", "nuggets",
"max_nuggets"}`, from `pooling nuggets create`), it adds each segment's first sentence, cut to
ten words, to the list so far; asked to label them (`"task": "label_nuggets"`), it calls a
nugget vital when it holds a word of the query, else okay.

It stands in for a real model in the demo (no network, no weights); any program that speaks
these JSON lines can judge the same way.
"""

from __future__ import annotations

import json
import re
import sys

WORD = re.compile(r"[a-z0-9]+")
STOP = {"a", "an", "and", "the", "of", "on", "in", "for", "to", "by", "with", "or", "at"}


def words(text: str | None) -> set[str]:
    return {w for w in WORD.findall((text or "").lower()) if w not in STOP}


def nugget_task(request: dict) -> dict:
    """The reply to a nugget request (module doc)."""
    if request["task"] == "create_nuggets":
        nuggets = list(request["nuggets"])
        for segment in request["segments"]:
            first = " ".join(segment["text"].split(". ")[0].split()[:10]).rstrip(".")
            if first and first not in nuggets:
                nuggets.append(first)
        return {"nuggets": nuggets[: request["max_nuggets"]]}
    query = words(request["query"])
    return {"importance": ["vital" if words(n) & query else "okay" for n in request["nuggets"]]}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "task" in request:
            print(json.dumps(nugget_task(request)), flush=True)
            continue
        wanted = words(request["title"])
        if "subtopic" in request:
            wanted = words(request.get("description")) or wanted
        found = wanted & words(f"{request.get('doc_title') or ''} {request.get('doc_text') or ''}")
        share = len(found) / len(wanted) if wanted else 0.0
        grade = 2 if share >= 0.99 else 1 if share >= 0.5 else 0
        reply = {"grade": grade, "probability": round(share, 4),
                 "rationale": "found: " + (", ".join(sorted(found)) or "none")}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
