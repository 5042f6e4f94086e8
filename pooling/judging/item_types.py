"""What is judged: the unit a person or a model is handed, the parts of it that are graded,
and the item types that declare both.

A *unit* is what is queued, assigned, claimed, handed out, counted toward a crowd round's K
and shown on one screen: a document for a topic (an answer for a topic and a pair of
documents for a topic are units of the same kind). What is graded is the unit itself or a
*part* of it: a subtopic of a document (a nugget of an answer, a cited segment of one of its
sentences). One submission grades a unit on every part at once and is stored as one
judgment row per part, under the column `judgments.part` (NULL: the unit graded whole).

An *item type* declares, once, what the rest of the core asks of it:
- its unit (a name and the `judgments` columns that name one unit) and its part (a name,
  and where a round records each topic's parts), or none;
- its scale: the words of its grades and whether the grades are ordinal. Weighted kappa, a
  relevance threshold and a unit's grade as the maximum over its parts assume a ladder;
  A / B / tie is not one, and those are refused for it;
- how a unit is shown to a person (the page template), where its text is read from, and
  what a model is asked (the fields its request carries);
- the form of version its judgments become (`VERSION_FORMS`).

A round records its item type (`rounds.item_type`). The core registers the document types
here; a package above it registers its own on import (`pooling.judging.plugins`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pooling.errors import StoreError
from pooling.judging.plugins import Registry

# The form of version an item type's judgments are derived into: a grade per (topic,
# document) (`qrels`), a grade per (topic, subtopic, document) with the plain rows the
# maximum (`subtopic qrels`, ndeval's four columns). A package adding an item type adds the
# form of its versions with `add_version_form` (e.g. nugget assignments).
VERSION_FORMS: list[str] = ["qrels", "subtopic qrels"]


def add_version_form(name: str) -> str:
    """Declare a form of version an item type of a package above the core derives into."""
    if name not in VERSION_FORMS:
        VERSION_FORMS.append(name)
    return name

# The word shown for a grade on the judging page, when the scale has none of its own.
GRADE_WORDS = {-2: "Junk", -1: "Spam", 0: "Not relevant", 1: "Relevant", 2: "Highly relevant",
               3: "Perfectly relevant", 4: "Navigational"}


@dataclass(frozen=True)
class Unit:
    """What is handed out and shown on one screen, and the `judgments` columns naming one."""

    name: str
    key: tuple[str, ...]


@dataclass(frozen=True)
class Scale:
    """How an item type's grades read: their words, and whether they are a ladder."""

    ordinal: bool = True
    words: Mapping[int, str] = field(default_factory=lambda: dict(GRADE_WORDS))

    def word(self, grade: int) -> str:
        """The word a page shows for `grade`."""
        return self.words.get(grade, f"Grade {grade}")

    def needs_ladder(self, what: str) -> None:
        """Refuse `what` (weighted kappa, a unit's grade over its parts, ...) on a scale whose
        grades are not ordinal, saying so."""
        if not self.ordinal:
            raise StoreError(f"{what} needs ordinal grades, and this scale's grades are "
                             "categories; compare them as labels instead")

    def over_parts(self, grades: Iterable[int]) -> int:
        """A unit's grade from its parts' grades: the highest (relevant to any part)."""
        self.needs_ladder("a unit's grade over its parts")
        return max(grades)


DOCUMENT = Unit("document", ("query_id", "doc_id"))


@dataclass(frozen=True)
class ItemType:
    """One kind of thing judged (module doc)."""

    name: str
    unit: Unit
    part: str | None  # the name of a part ("subtopic"); None: the unit is graded whole
    scale: Scale
    version_form: str
    page: str  # the template a person's page is drawn with
    asks: tuple[str, ...]  # the fields a model's request carries beyond the unit's texts
    parts_param: str | None = None  # the round parameter recording each topic's parts
    # Where a unit's text is read from: (store, [(query_id, unit id)]) -> {(query_id, unit id):
    # (title, text)}; None: the documents table (a unit id is a doc_id).
    unit_texts: Callable[[Any, Sequence[tuple[str, str]]], dict[tuple[str, str], tuple[str | None, str | None]]] | None = None
    # How a person's page shows one unit: (store, query_id, unit id) -> (title, text), or None
    # when the store has no text of it; None: as `unit_texts` gives it.
    unit_view: Callable[[Any, str, str], tuple[str | None, str | None] | None] | None = None
    words: tuple[str, str] = ("Document", "subtopic")  # what a page calls a unit and a part

    def view(self, store: Any, query_id: str, unit_id: str) -> tuple[str | None, str | None] | None:
        """A unit's (title, text) as a person's page shows it, or None when the store has
        none: the item type's own view, else its texts, else the documents table."""
        if self.unit_view is not None:
            return self.unit_view(store, query_id, unit_id)
        if self.unit_texts is not None:
            return self.unit_texts(store, [(query_id, unit_id)]).get((query_id, unit_id))
        return store.one("document text", "SELECT title, text FROM documents WHERE doc_id = ?",
                         [unit_id])

    def __post_init__(self) -> None:
        if self.version_form not in VERSION_FORMS:
            raise ValueError(f"version form {self.version_form!r} is not one of {VERSION_FORMS}")
        if (self.part is None) != (self.parts_param is None):
            raise ValueError(f"item type {self.name!r}: a part needs the round parameter that "
                             "records it, and only a part does")

    @property
    def has_parts(self) -> bool:
        """Whether a unit is graded on parts (one row each) rather than whole."""
        return self.part is not None

    def recorded_parts(self, params: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
        """A round's parts as recorded with it: query_id -> [(part id, text)] in the topic's
        order ({} for a type without parts)."""
        recorded = params.get(self.parts_param) if self.parts_param else None
        return {q: [(str(n), str(t or "")) for n, t in parts]
                for q, parts in (recorded or {}).items()}


ITEM_TYPES: Registry[ItemType] = Registry("pooling.item_types", "item type")

DOCUMENTS = ITEM_TYPES.register("document", ItemType(
    "document", DOCUMENT, None, Scale(), "qrels", page="judge.html", asks=()))
SUBTOPICS = ITEM_TYPES.register("subtopic", ItemType(
    "subtopic", DOCUMENT, "subtopic", Scale(), "subtopic qrels", page="judge.html",
    asks=("subtopic",), parts_param="subtopics"))


def item_type(name: str) -> ItemType:
    """The registered item type `name` (`StoreError` naming the known ones)."""
    return ITEM_TYPES.get(name)


def recorded_item_type(params: Mapping[str, Any]) -> str:
    """The item type of a round recorded before rounds named theirs: a round that recorded
    subtopics judged them, any other documents (what the store upgrade to schema 16 and a
    release's rebuild both apply)."""
    return SUBTOPICS.name if params.get(SUBTOPICS.parts_param or "") else DOCUMENTS.name
