"""Which JSON Schema keywords the generator knows: annotations, keywords enforced
exactly, and the ones refused (with the pointer of the keyword and why).

Every keyword of a node is either an annotation (no effect on validity), taken
by the structural type `build` makes (a field, a list item type...), turned into
an `assertions.Checks` run on the JSON value (`checks`), or refused here.
"""

from __future__ import annotations

import json
import math
from typing import Any

from generator.errors import GenerationError
from generator.schema.load import Node, escape

# Keywords that never change what is valid (`format` is an annotation in 2020-12;
# integer formats are enforced as bounds, see scalars.INTEGER_FORMATS).
ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "discriminator",
        "format",
        "$anchor",
        "$id",  # a schema resource's URI: `load.Resources` resolves `$ref`s with it
        "$defs",
        "definitions",
    }
)
# Keywords the generated code enforces exactly.
VALIDATION = frozenset(
    {
        "type",
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "const",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "required",
        "dependentRequired",
        "dependentSchemas",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
# Keywords refused on purpose, and why.
REFUSED = {
    "$dynamicRef": "$dynamicRef is not implemented",
    "$dynamicAnchor": "$dynamicAnchor is not implemented",
    "$recursiveRef": "$recursiveRef is not part of draft 2020-12",
    "$vocabulary": "custom vocabularies ($vocabulary) are not implemented",
}
META_SCHEMA = "https://json-schema.org/draft/2020-12/schema"
JSON_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")


def refusal(node: Node, keyword: str) -> str | None:
    """Why `keyword` of `node` is refused, or None when it is supported."""
    if keyword in ANNOTATIONS or keyword in VALIDATION or keyword.startswith("x-"):
        return None
    if keyword == "$schema":
        return (
            None
            if node.value(keyword) == META_SCHEMA
            else f"only the draft 2020-12 meta-schema ({META_SCHEMA}) is supported"
        )
    return REFUSED.get(keyword, f"unsupported keyword {keyword!r}: acp-codegen does not know what it means")


def check_supported(node: Node, *, allow_not: bool = False) -> None:
    """Refuse `node` if one of its keywords is refused (`not` too, unless `allow_not`)."""
    if {"anyOf", "oneOf"} <= node.keywords and node.properties():
        raise GenerationError(f"{node.pointer}/oneOf", "anyOf and oneOf beside properties are not supported")
    for keyword in sorted(node.keywords):
        reason = None if keyword == "not" and allow_not else refusal(node, keyword)
        if reason is not None:
            raise GenerationError(f"{node.pointer}/{escape(keyword)}", reason)


def json_text(value: Any) -> str:
    """A JSON value as canonical text, for the IR (hashable, printable)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def number(node: Node, keyword: str) -> int | float | None:
    value = node.value(keyword)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise GenerationError(f"{node.pointer}/{keyword}", f"expected a number, found {value!r}")
    return value


def count(node: Node, keyword: str) -> int | None:
    """A non-negative integer keyword (`minLength`, `maxItems`...); 2.0 counts as 2."""
    value = number(node, keyword)
    if value is None:
        return None
    if value < 0 or value != int(value):
        raise GenerationError(f"{node.pointer}/{keyword}", f"expected a non-negative integer, found {value!r}")
    return int(value)
