"""The nugget item type: an answer for a topic, graded on each nugget of a frozen version.

The unit is an answer (`judgments.doc_id` holds its run_id: a run answers a topic once), its
parts the nuggets the round recorded from its nugget version (`nuggets` round parameter:
query_id -> [(nugget id, text)]), its scale support (2), partial support (1) and none (0),
or support and none on a two-grade round. The grades are a ladder, so kappa is weighted and
a threshold reads "at least partly supported". Judgments derive into an assignment version.
"""

from __future__ import annotations

from pooling.judging.item_types import ITEM_TYPES, ItemType, Scale, Unit, add_version_form

ANSWER = Unit("answer", ("query_id", "doc_id"))
ASSIGNMENTS_FORM = add_version_form("nugget assignments")
SUPPORT_WORDS = {0: "Not supported", 1: "Partly supported", 2: "Supported"}
THREE_GRADES = (0, 1, 2)
TWO_GRADES = (0, 2)  # nuggetizer's support_grade_2: support or not

NUGGET_ASSIGNMENT = ITEM_TYPES.register("nugget", ItemType(
    "nugget", ANSWER, "nugget", Scale(ordinal=True, words=SUPPORT_WORDS), ASSIGNMENTS_FORM,
    page="assign.html", asks=("answer", "nuggets"), parts_param="nuggets"))
