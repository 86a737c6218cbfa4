"""The questions asked of a node before it is built: object, null, constant, tag, fallback."""

from __future__ import annotations

import pytest

from generator.schema import kinds
from generator.schema.load import Node

TAG_A = {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}}, "required": ["kind"]}
TAG_B = {"type": "object", "properties": {"kind": {"const": "b"}, "x": {}}, "required": ["kind", "x"]}
OPEN_TAG = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}


def node(schema: dict | bool, pointer: str = "#") -> Node:
    return Node(pointer, schema)


def test_variants_prefer_any_of_to_one_of():
    both = node({"anyOf": [{"type": "string"}], "oneOf": [{"type": "integer"}, {}]})
    keyword, variants = kinds.variants(both)
    assert keyword == "anyOf" and [v.pointer for v in variants] == ["#/anyOf/0"]
    assert kinds.variants(node({"oneOf": [{}]}))[0] == "oneOf"
    assert kinds.variants(node({"type": "string"})) == ("", [])


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": {"a": {}}}, True),
        ({"type": ["object", "null"], "properties": {"a": {}}}, True),
        ({"type": "object"}, False),
        ({"properties": {"a": {}}}, False),
        ({"type": "object", "allOf": [{}, {}]}, True),
        ({"type": "object", "allOf": [{}], "anyOf": [{}]}, True),
        ({"type": "object", "allOf": [{}]}, False),
    ],
)
def test_is_object(schema, expected):
    assert kinds.is_object(node(schema)) is expected


def test_is_null_allows_annotations_only():
    assert kinds.is_null(node({"type": "null", "description": "nothing"}))
    assert not kinds.is_null(node({"type": "null", "minimum": 1}))
    assert not kinds.is_null(node({"type": ["null", "string"]}))


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"const": "a"}, True),
        ({"const": 1, "type": "integer", "title": "One"}, True),
        ({"const": "a", "type": "integer"}, False),
        ({"const": True}, False),
        ({"const": 1.5}, False),
        ({"const": "a", "minLength": 1}, False),
    ],
)
def test_is_const_takes_strings_and_integers_with_annotations(schema, expected):
    assert kinds.is_const(node(schema)) is expected


def test_the_tag_is_the_first_const_key_every_tagged_variant_shares():
    variants = [node(TAG_A, "#/0"), node(TAG_B, "#/1"), node({"type": "string"}, "#/2")]
    assert kinds.const_keys(variants[0]) == ["kind"]
    assert kinds.tag_key(variants) == "kind"
    assert kinds.tag_key([node({"type": "string"})]) is None


def test_an_optional_const_property_is_no_tag():
    optional = {"type": "object", "properties": {"kind": {"const": "a"}}}
    assert kinds.const_keys(node(optional)) == []


def test_the_fallback_has_a_not_and_a_required_plain_string_tag():
    assert kinds.is_fallback(node({**OPEN_TAG, "not": {}}), "kind")
    assert not kinds.is_fallback(node(OPEN_TAG), "kind")
    assert not kinds.is_fallback(node({**OPEN_TAG, "not": {}, "required": []}), "kind")


@pytest.mark.parametrize(
    ("negated", "expected"),
    [
        ({"anyOf": [TAG_A, TAG_B]}, False),  # TAG_B says more than its tag
        ({"anyOf": [TAG_A, {"properties": {"kind": {"const": "b"}}}]}, True),
        ({"anyOf": [TAG_A]}, False),  # "b" is not excluded
        ({"anyOf": [TAG_A, {"properties": {"kind": {"const": "b"}}}], "minProperties": 1}, False),
    ],
)
def test_a_fallback_not_excludes_exactly_the_known_tags(negated, expected):
    fallback = node({**OPEN_TAG, "not": negated})
    assert kinds.excludes_exactly(fallback, "kind", {"a", "b"}) is expected
