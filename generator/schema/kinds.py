"""What shape a schema node has: the questions the builders ask before they build
(an object? a null? a constant? which property tags a union, which variant is its
open fallback?). Pure functions of the nodes."""

from __future__ import annotations

from generator.schema import keywords
from generator.schema.load import Node


def variants(node: Node) -> tuple[str, list[Node]]:
    """`anyOf` (or else `oneOf`) and its subschemas; a second one is checked beside."""
    for keyword in ("anyOf", "oneOf"):
        if keyword in node.keywords:
            return keyword, node.children(keyword)
    return "", []


def is_object(node: Node) -> bool:
    if "object" not in node.types:
        return False
    if node.properties():
        return True
    has_parts = bool(node.children("allOf")) and bool(node.children("anyOf") or node.children("oneOf"))
    return node.types == ("object",) and (has_parts or len(node.children("allOf")) > 1)


def is_null(node: Node) -> bool:
    return node.types == ("null",) and node.keywords <= keywords.ANNOTATIONS | {"type"}


def is_const(node: Node) -> bool:
    """A string or integer `const` and nothing else that matters."""
    value = node.value("const")
    kind = "string" if isinstance(value, str) else "integer" if type(value) is int else None
    return (
        kind is not None
        and node.types in ((), (kind,))
        and node.keywords <= {"type", "const", "title", "description", "format"}
    )


def const_keys(variant: Node) -> list[str]:
    """Required properties a variant fixes to a string (and says nothing else about)."""
    return [
        key
        for key, child in variant.properties()
        if isinstance(child.value("const"), str) and is_const(child) and key in variant.required
    ]


def tag_key(variants: list[Node]) -> str | None:
    """The property that tagged variants fix with a `const`, if any."""
    shared: list[str] | None = None
    for variant in variants:
        keys = const_keys(variant)
        if keys:
            shared = keys if shared is None else [key for key in shared if key in keys]
    return shared[0] if shared else None


def is_fallback(variant: Node, tag_key: str) -> bool:
    """The open variant: a `not` clause and a required plain string tag."""
    tag = dict(variant.properties()).get(tag_key)
    return (
        "not" in variant.keywords
        and tag_key in variant.required
        and tag is not None
        and tag.value("const") is None
        and tag.types == ("string",)
    )


def excludes_exactly(variant: Node, tag_key: str, tags: set[str]) -> bool:
    """Whether the fallback's `not` rejects exactly the known tags, which tag
    dispatch already does (otherwise the `not` is checked like any other)."""
    negated = variant.child("not")
    if negated is None or negated.keywords - keywords.ANNOTATIONS - {"anyOf"}:
        return False
    excluded = set()
    for part in negated.children("anyOf"):
        meaningful = part.keywords - keywords.ANNOTATIONS
        if meaningful - {"type", "properties", "required"} or part.types not in ((), ("object",)):
            return False
        if [key for key, _ in part.properties()] != [tag_key] or part.required not in ((), (tag_key,)):
            return False
        tag = dict(part.properties())[tag_key]
        if not (is_const(tag) and isinstance(tag.value("const"), str)):
            return False
        excluded.add(tag.value("const"))
    return excluded == tags
