"""Which keywords are known, and the refusal of the others at their pointer."""

from __future__ import annotations

import pytest

from generator.errors import GenerationError
from generator.schema import keywords
from generator.schema.load import Node
from tests.support.helpers import error_for


def test_an_unimplemented_keyword_is_refused_at_its_pointer(tmp_path):
    for keyword, value in (("$vocabulary", {}), ("$dynamicRef", "#x"), ("frobnicate", 1)):
        error = error_for({"$defs": {"A": {"type": "array", keyword: value}}}, tmp_path)
        assert error.pointer == f"#/$defs/A/{keyword}"


def test_an_embedded_id_is_not_refused_but_an_id_that_is_not_a_uri_reference_is(tmp_path):
    assert keywords.refusal(Node("#/$defs/A", {"$id": "http://example.com/a"}), "$id") is None
    error = error_for({"$defs": {"A": {"$id": 1, "type": "string"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/$id" and "expected a string" in error.message


def test_a_meta_schema_other_than_2020_12_is_refused(tmp_path):
    error = error_for({"$defs": {"A": {"$schema": "http://example.com/meta", "type": "string"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/$schema"


def test_annotations_validation_keywords_and_extensions_are_not_refused():
    node = Node("#", {"title": "t", "minimum": 1, "x-anything": 1, "$schema": keywords.META_SCHEMA})
    assert [keywords.refusal(node, keyword) for keyword in ("title", "minimum", "x-anything", "$schema")] == [None] * 4
    assert "unsupported keyword 'frobnicate'" in (keywords.refusal(node, "frobnicate") or "")


@pytest.mark.parametrize(("value", "expected"), [(2, 2), (2.0, 2), (0, 0), (None, None)])
def test_counts_are_non_negative_integers_and_two_point_zero_counts_as_two(value, expected):
    assert keywords.count(Node("#", {"minLength": value}), "minLength") == expected


@pytest.mark.parametrize("value", [-1, 1.5, True, "2", float("inf")])
def test_a_count_that_is_not_a_non_negative_integer_is_refused_at_its_pointer(value):
    with pytest.raises(GenerationError) as caught:
        keywords.count(Node("#/$defs/A", {"minLength": value}), "minLength")
    assert caught.value.pointer == "#/$defs/A/minLength"


def test_any_of_and_one_of_beside_properties_are_refused(tmp_path):
    schema = {"type": "object", "properties": {"x": {}}, "anyOf": [{}], "oneOf": [{}]}
    error = error_for({"$defs": {"A": schema}}, tmp_path)
    assert error.pointer == "#/$defs/A/oneOf" and "anyOf and oneOf beside properties" in error.message
