"""A small judge program for `pooling judges add … --backend command`: it reads one JSON request
per line on stdin (query_id, doc_id, title, description, narrative, doc_title, doc_text) and
writes one reply per line: a grade 0-2 from how many of the topic's title words the document
uses, the share of them as `probability`, and the words found as `rationale`. Asked about a
subtopic (a request with "subtopic", whose text is the description), it counts the subtopic's
words instead.

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


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
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
