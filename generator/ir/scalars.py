"""Primitives with the bounds they enforce themselves, and enums made of constants.
Pure functions of the nodes."""

from __future__ import annotations

import math

from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.model import EnumMember, Primitive
from generator.schema import keywords, kinds
from generator.schema.load import Node
from generator.schema.patterns import python_pattern

# Bounds implied by integer formats (the schema's serde/schemars vocabulary).
INTEGER_FORMATS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
    "int": (-(2**63), 2**63 - 1),
}
PRIMITIVE_KINDS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "none"}


def primitive(node: Node, kind: str) -> tuple[Primitive, set[str]]:
    """A primitive with the bounds it enforces itself; the keywords it took."""
    used: set[str] = set()
    minimum = maximum = None
    if kind in ("int", "float"):
        minimum, maximum = keywords.number(node, "minimum"), keywords.number(node, "maximum")
        used |= {"minimum", "maximum"}
    form = node.value("format")
    if kind == "int" and form is not None:
        if form not in INTEGER_FORMATS:
            raise GenerationError(f"{node.pointer}/format", f"unknown integer format {form!r}")
        low, high = INTEGER_FORMATS[form]
        minimum = low if minimum is None else max(low, math.ceil(minimum))
        maximum = high if maximum is None else min(high, math.floor(maximum))
    if kind == "int":
        minimum = None if minimum is None else math.ceil(minimum)
        maximum = None if maximum is None else math.floor(maximum)
    min_length = pattern = None
    if kind == "str":
        min_length = keywords.count(node, "minLength")
        if node.value("pattern") is not None:
            pattern = python_pattern(f"{node.pointer}/pattern", node.value("pattern"))
        used |= {"minLength", "pattern"}
    return Primitive(kind, minimum, maximum, min_length, form if isinstance(form, str) else None, pattern), used


def enum_members(node: Node) -> tuple[tuple[EnumMember, ...], Primitive | None, set[str]] | None:
    """Constants as an enum; a last variant of the same type without a
    const (`{"type": "string"}`) makes it open. None: not an enum of strings or integers."""
    if node.properties():
        return None
    if "const" in node.keywords:
        if not kinds.is_const(node):
            return None
        return members(node, [node]), None, {"const", "type"}
    values = node.value("enum")
    if "enum" in node.keywords:
        if not isinstance(values, list) or not values or not all(isinstance(value, str) for value in values):
            return None
        if node.types not in ((), ("string",)) or "const" in node.keywords:
            return None
        unique = list(dict.fromkeys(values))
        return named_members(f"{node.pointer}/enum", unique, unique, [None] * len(unique)), None, {"enum", "type"}
    keyword, variants = kinds.variants(node)
    enum = enum_members_of(node, variants, exclusive=keyword == "oneOf") if variants else None
    return None if enum is None else (*enum, {keyword})


def enum_members_of(
    node: Node, variants: list[Node], *, exclusive: bool = False
) -> tuple[tuple[EnumMember, ...], Primitive | None] | None:
    """The members of an `anyOf`/`oneOf` of constants, and the open kind when a last plain variant makes it open."""
    *known, last = variants
    types = {v.types for v in variants}
    is_open = (
        bool(known)
        and len(types) == 1
        and last.value("const") is None
        and last.types in (("string",), ("integer",))
        and last.keywords <= {"type", "title", "description", "format"}
    )
    constants = known if is_open else variants
    if not constants or not all(kinds.is_const(v) for v in constants) or len(types) != 1:
        return None
    values = [v.value("const") for v in constants]
    if len(set(values)) != len(values) and exclusive:
        return None  # a constant listed twice in a oneOf matches two variants: not an enum
    first: dict[object, Node] = {}
    for constant in constants:
        first.setdefault(constant.value("const"), constant)
    named = members(node, list(first.values()))
    other = primitive(last, PRIMITIVE_KINDS[last.types[0]])[0] if is_open else None
    return named, other


def members(node: Node, constants: list[Node]) -> tuple[EnumMember, ...]:
    """Members are named by their value; integers by their title (`Parse error` → PARSE_ERROR)."""
    values = [constant.value("const") for constant in constants]
    labels = [
        value if isinstance(value, str) else c.title or str(value) for c, value in zip(constants, values, strict=True)
    ]
    return named_members(node.pointer, labels, values, [constant.description for constant in constants])


def named_members(
    pointer: str, labels: list[str], values: list[str | int], docs: list[str | None]
) -> tuple[EnumMember, ...]:
    """Members named by their labels; two labels that no name tells apart are an error."""
    names = naming.member_names(labels)
    for index, name in enumerate(names):
        if names.index(name) != index:
            first, second = values[names.index(name)], values[index]
            raise GenerationError(pointer, f"enum values {first!r} and {second!r} both map to the member {name}")
    return tuple(EnumMember(name, value, doc) for name, value, doc in zip(names, values, docs, strict=True))
