"""The judged item: item types declare their unit, parts, scale and version form, rounds
record theirs, and what assumes a ladder of grades is refused on a scale that is none."""

from __future__ import annotations

import pytest
from subtopic_fixtures import make_store, subtopic_round

from pooling.errors import StoreError
from pooling.judging import validation
from pooling.judging.item_types import (
    DOCUMENT,
    DOCUMENTS,
    ITEM_TYPES,
    SUBTOPICS,
    ItemType,
    Scale,
    item_type,
    recorded_item_type,
)
from pooling.judging.judgments import effective_judgments, record
from pooling.judging.plugins import Registry
from pooling.judging.rounds import create_round, get_round

# A scale of categories on the subtopic round's parts: what a preference's A / B / tie is.
CATEGORIES = ITEM_TYPES.register("categories-per-subtopic", ItemType(
    "categories-per-subtopic", DOCUMENT, "subtopic", Scale(ordinal=False, words={0: "A", 1: "B"}),
    "subtopic qrels", page="judge.html", asks=("subtopic",), parts_param="subtopics"))


@pytest.fixture
def store(tmp_path):
    s = make_store(tmp_path)
    yield s
    s.close()


def test_the_core_registers_documents_and_subtopics_of_documents():
    assert item_type("document") is DOCUMENTS and item_type("subtopic") is SUBTOPICS
    assert DOCUMENTS.unit == SUBTOPICS.unit == DOCUMENT
    assert DOCUMENT.key == ("query_id", "doc_id")
    assert (DOCUMENTS.part, DOCUMENTS.has_parts, DOCUMENTS.version_form) == (None, False, "qrels")
    assert (SUBTOPICS.part, SUBTOPICS.has_parts, SUBTOPICS.version_form) == (
        "subtopic", True, "subtopic qrels")
    assert DOCUMENTS.scale.ordinal and SUBTOPICS.scale.ordinal
    assert [DOCUMENTS.scale.word(g) for g in (0, 1, 2, 7)] == [
        "Not relevant", "Relevant", "Highly relevant", "Grade 7"]


def test_an_unknown_item_type_is_refused_with_the_known_ones():
    with pytest.raises(StoreError, match=r"no item type 'citation-support' is known \(known: "
                                         r"categories-per-subtopic, document, nugget, subtopic\)"):
        item_type("citation-support")


def test_a_registry_loads_what_its_entry_point_group_declares_once_and_refuses_two_claims():
    registry: Registry[int] = Registry("pooling.no-such-group", "thing")
    registry.register("a", 1)
    assert registry.register("a", 1) == 1  # the same entry again is no claim
    with pytest.raises(ValueError, match="thing 'a' is registered twice"):
        registry.register("a", 2)
    assert ("a" in registry, "b" in registry, list(registry)) == (True, False, ["a"])
    with pytest.raises(StoreError, match="entry-point group 'pooling.no-such-group'"):
        registry.get("b")


def test_an_item_type_with_a_part_names_where_rounds_record_it_and_its_version_form_exists():
    with pytest.raises(ValueError, match="a part needs the round parameter"):
        ItemType("x", DOCUMENT, "subtopic", Scale(), "qrels", page="judge.html", asks=())
    with pytest.raises(ValueError, match="version form 'nuggets' is not one of"):
        ItemType("x", DOCUMENT, None, Scale(), "nuggets", page="judge.html", asks=())


def test_a_round_records_its_item_type_and_rounds_before_that_are_told_by_their_subtopics(store):
    create_round(store, "plain", "depth", strategy_params={"depth": 1})
    subtopic_round(store)
    plain, div = get_round(store, "plain"), get_round(store, "div")
    assert (plain.item_type, plain.parts, plain.parts_of("1")) == ("document", None, [])
    assert (div.item_type, div.parts_of("2")) == ("subtopic", ["1", "2"])
    assert div.parts["2"][1] == ("2", "The car maker.")
    assert recorded_item_type(plain.params) == "document"
    assert recorded_item_type(div.params) == "subtopic"
    assert recorded_item_type({"subtopics": {}}) == "document"


def test_a_unit_is_graded_over_its_parts_only_on_a_ladder(store):
    subtopic_round(store)
    record(store, validation.part_submission(get_round(store, "div"), "ann", "1", "d1",
                                             grades_value={"1": 0, "2": 2, "3": 1},
                                             submission_id_value="a" * 16))
    assert [r["grade"] for r in effective_judgments(store, "div").to_pylist()] == [2]
    store.con.execute("UPDATE rounds SET item_type = 'categories-per-subtopic'")
    per_part = effective_judgments(store, "div", per_part=True).to_pylist()
    assert [(r["part"], r["grade"]) for r in per_part] == [("1", 0), ("2", 2), ("3", 1)]
    with pytest.raises(StoreError, match="a unit's grade over its parts needs ordinal grades"):
        effective_judgments(store, "div")
    with pytest.raises(StoreError, match="needs ordinal grades"):
        CATEGORIES.scale.over_parts([0, 1])
    assert SUBTOPICS.scale.over_parts([0, 2, 1]) == 2
