"""The nugget item type: an answer for a topic, graded on each nugget of a frozen version.

The unit is an answer (`judgments.doc_id` holds its run_id: a run answers a topic once), its
parts the nuggets the round recorded from its nugget version (`nuggets` round parameter:
query_id -> [(nugget id, text)]), its scale support (2), partial support (1) and none (0),
or support and none on a two-grade round. The grades are a ladder, so kappa is weighted and
a threshold reads "at least partly supported". Judgments derive into an assignment version.
A model judge is asked each (answer, nugget) as a pair whose text is the answer and whose
description is the nugget's text (`answer_texts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pooling.judging.item_types import ITEM_TYPES, ItemType, Scale, Unit, add_version_form

ANSWER = Unit("answer", ("query_id", "doc_id"))
ASSIGNMENTS_FORM = add_version_form("nugget assignments")
SUPPORT_WORDS = {0: "Not supported", 1: "Partly supported", 2: "Supported"}
THREE_GRADES = (0, 1, 2)
TWO_GRADES = (0, 2)  # nuggetizer's support_grade_2: support or not



def answer_texts(store: Any, units: Sequence[tuple[str, str]]
                 ) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    """Each answer (query_id, run_id) as (no title, its sentences joined by a space)."""
    if not units:
        return {}
    rows = store.sql("answer texts", """
        SELECT s.query_id, s.run_id, string_agg(trim(s.text), ' ' ORDER BY s.sentence)
        FROM answer_sentences s
        JOIN (SELECT UNNEST(?) AS query_id, UNNEST(?) AS run_id) u USING (query_id, run_id)
        GROUP BY s.query_id, s.run_id""", [[q for q, _ in units], [r for _, r in units]]).fetchall()
    return {(q, r): (None, text) for q, r, text in rows}


def answer_view(store: Any, query_id: str, run_id: str) -> tuple[str | None, str | None] | None:
    """An answer as the assignment page shows it: sentence by sentence, each with the
    segments it cites, numbered as the answer's references are."""
    rows = store.sql("answer sentences", """
        SELECT s.sentence, trim(s.text), s.citations, s.cited, a.response_length
        FROM answer_sentences s JOIN answers a USING (run_id, query_id)
        WHERE s.query_id = ? AND s.run_id = ? ORDER BY s.sentence""", [query_id, run_id]).fetchall()
    if not rows:
        return None
    lines = []
    for n, text, citations, cited, _ in rows:
        marks = " ".join(f"[{i + 1 if i is not None and i >= 0 else c}]"
                         for c, i in zip(citations, cited or [None] * len(citations), strict=True))
        lines.append(f"{n + 1}. {text}" + (f" {marks}" if marks else ""))
    length = rows[0][4]
    title = f"Answer of run {run_id}" + (f" ({length} words)" if length is not None else "")
    return title, "\n".join(lines)


NUGGET_ASSIGNMENT = ITEM_TYPES.register("nugget", ItemType(
    "nugget", ANSWER, "nugget", Scale(ordinal=True, words=SUPPORT_WORDS), ASSIGNMENTS_FORM,
    page="assign.html", asks=("answer", "nuggets"), parts_param="nuggets",
    unit_texts=answer_texts, unit_view=answer_view, words=("Answer", "nugget")))
