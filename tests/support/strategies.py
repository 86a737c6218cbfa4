"""Hypothesis strategies for schema-valid JSON values, built from the IR; and for
schemas whose made-up names are likely to meet.

Every value they produce is checked against the schema itself with jsonschema
(see test_generated_roundtrip.py), so a misreading in the IR cannot hide here.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from enum import Enum
from typing import Any

from hypothesis import strategies as st

from generator.ir.model import (
    Alias,
    AnyValue,
    EnumType,
    JsonObject,
    ListOf,
    MapOf,
    Module,
    Nullable,
    ObjectType,
    Primitive,
    Ref,
    TypeExpr,
    UnionType,
)

SHORT_TEXT = st.text(max_size=12)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | SHORT_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)
# Undeclared properties: a prefix no schema property uses.
UNKNOWN_PROPERTIES = st.dictionaries(
    st.text("abc", min_size=1, max_size=4).map(lambda key: "_x_" + key), JSON_VALUES, max_size=2
)


class Strategies:
    def __init__(self, module: Module) -> None:
        self.types = module.by_name()
        self.cache: dict[str, st.SearchStrategy[Any]] = {}

    def named(self, name: str) -> st.SearchStrategy[Any]:
        if name not in self.cache:
            self.cache[name] = st.deferred(lambda: self._named(self.types[name]))
        return self.cache[name]

    def expr(self, expr: TypeExpr) -> st.SearchStrategy[Any]:
        if isinstance(expr, Primitive):
            return self.primitive(expr)
        if isinstance(expr, AnyValue):
            return JSON_VALUES
        if isinstance(expr, JsonObject):
            return st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)
        if isinstance(expr, MapOf):
            return st.dictionaries(st.text(max_size=6), self.expr(expr.value), max_size=2)
        if isinstance(expr, ListOf):
            return st.lists(self.expr(expr.item), min_size=expr.min_items or 0, max_size=max(2, expr.min_items or 0))
        if isinstance(expr, Nullable):
            return st.none() | self.expr(expr.inner)
        assert isinstance(expr, Ref)
        return self.named(expr.name)

    @staticmethod
    def primitive(expr: Primitive) -> st.SearchStrategy[Any]:
        if expr.kind == "str" and expr.pattern:
            return st.from_regex(expr.pattern).filter(lambda text: len(text) >= (expr.min_length or 0))
        if expr.kind == "str":
            return st.text(min_size=expr.min_length or 0, max_size=12)
        if expr.kind == "int":
            # an integer's bounds may be fractional in the schema: the integers between them
            low = None if expr.minimum is None else math.ceil(expr.minimum)
            high = None if expr.maximum is None else math.floor(expr.maximum)
            return st.integers(low, high)
        if expr.kind == "float":
            return st.floats(expr.minimum, expr.maximum, allow_nan=False, allow_infinity=False)
        if expr.kind == "bool":
            return st.booleans()
        return st.none()

    def _named(self, named: Any) -> st.SearchStrategy[Any]:
        if isinstance(named, Alias):
            return self.expr(named.target)
        if isinstance(named, EnumType):
            known = st.sampled_from([member.value for member in named.members])
            if named.other is None:
                return known
            values = {member.value for member in named.members}
            return known | self.primitive(named.other).filter(lambda value: value not in values)
        if isinstance(named, UnionType):
            choices = [self.expr(variant.type) for variant in named.variants]
            if named.fallback:
                tags = {variant.tag for variant in named.variants if variant.tag}
                key = named.tag_key
                choices.append(self.named(named.fallback).filter(lambda value: value[key] not in tags))
            return st.one_of(choices)
        return self.object(named)

    def object(self, obj: ObjectType) -> st.SearchStrategy[Any]:
        fields = obj.fields
        if obj.base:
            fields = self.types[obj.base].fields  # type: ignore[union-attr]
        own = [item for item in fields if not item.flatten]
        required = {item.wire_name: self.field(item) for item in own if item.required}
        optional = {item.wire_name: self.field(item) for item in own if not item.required}
        parts = [st.fixed_dictionaries(required, optional=optional)]
        if obj.tag:
            parts.insert(0, st.just({obj.tag.key: obj.tag.value}))
        parts += [self.expr(item.type) for item in fields if item.flatten]
        if obj.keep_unknown == "keep" and not any(item.flatten for item in fields):
            parts.append(UNKNOWN_PROPERTIES)
        return st.tuples(*parts).map(_merge)

    def field(self, item: Any) -> st.SearchStrategy[Any]:
        value = self.expr(item.type)
        return st.none() | value if item.nullable else value


def _merge(parts: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        merged.update(part)
    return merged


# --- values built in Python -------------------------------------------------


class Text(str):
    """A str subclass whose `str()` lies: an encoder must not call it."""

    def __str__(self) -> str:
        return "not the value"


class Integer(int):
    pass


class Number(float):
    pass


@st.composite
def built_in_python(draw: st.DrawFn, value: Any) -> Any:
    """`value` (a decoded value) rebuilt as a user would write it: every object
    through its constructor or its builder; enum members as members, as their
    plain values or as subclasses of them; other strings and numbers now and then
    as subclasses; lists given to setters that take iterables now and then as iterators."""
    if isinstance(value, Enum) and type(value).__name__ != "Undefined":  # UNDEFINED is a one-member Enum too
        return draw(st.sampled_from([value, value.value, _SUBCLASSES[type(value.value)](value.value)]))
    if type(value) in _SUBCLASSES:
        return draw(st.sampled_from([value, _SUBCLASSES[type(value)](value)]))
    if type(value) is list:
        return [draw(built_in_python(item)) for item in value]
    if type(value) is dict:
        return {draw(built_in_python(key)): draw(built_in_python(item)) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {item.name: draw(built_in_python(getattr(value, item.name))) for item in dataclasses.fields(value)}
        return type(value)(**fields) if draw(st.booleans()) else _build(draw, type(value), fields)
    return value  # None, booleans, UNDEFINED


_SUBCLASSES: dict[type, type] = {str: Text, int: Integer, float: Number}


def _build(draw: st.DrawFn, cls: Any, fields: dict[str, Any]) -> Any:
    """Through `cls.builder(required...)`, then one setter per optional field
    (undeclared properties have no setter: they are added to the built value's
    `unknown_properties`, as a user would, so that it encodes to the JSON it came from)."""
    unknown = fields.pop("unknown_properties", None)
    parameters = inspect.signature(cls.builder).parameters.values()
    builder = cls.builder(**{item.name: fields.pop(item.name) for item in parameters if item.kind == item.KEYWORD_ONLY})
    for name, value in fields.items():
        setter = getattr(builder, name)
        takes_iterables = str(inspect.signature(setter).parameters["value"].annotation).startswith("Iterable[")
        setter(iter(value) if takes_iterables and type(value) is list and draw(st.booleans()) else value)
    built = builder.build()
    if unknown is not None:  # a class that keeps them (flattened unions do not)
        built.unknown_properties.update(unknown)
    return built


# --- schemas whose made-up names are likely to meet --------------------------

# Property names whose words run together (`a` then `b` beside `aB`, `aItem` beside the
# items of a list under `a`, `value` beside the values of a map) and, beside `A`, `$defs`
# names that a name made up under `A` would take (`AB` for the property `b` of `A`).
MEETING_PROPERTIES = st.sampled_from(["a", "b", "aB", "aItem", "item", "value"])
MEETING_DEFS = st.sampled_from(["AA", "AB", "AItem", "AValue"])
_LEAVES = st.sampled_from([{"type": "string"}, {"type": "integer"}])
_NESTINGS = ["properties", "anyOf", "oneOf", "prefixItems", "items", "additionalProperties", "flattened"]


@st.composite
def nested_inline_schemas(draw: st.DrawFn, depth: int = 3) -> dict[str, Any]:
    """An inline object, or a schema with inline subschemas up to `depth` deep: sibling
    `anyOf`/`oneOf` variants, `prefixItems` (fixed length or not), list `items`,
    `additionalProperties`, and objects with properties and a flattened `anyOf`."""
    nesting = draw(st.sampled_from(_NESTINGS)) if depth else "properties"
    if nesting == "properties":
        return _inline_object(draw, depth)
    if nesting == "flattened":
        return {**_inline_object(draw, depth), "anyOf": [_inline_object(draw, depth - 1) for _ in range(2)]}
    if nesting in ("items", "additionalProperties"):
        return {"type": "array" if nesting == "items" else "object", nesting: draw(nested_inline_schemas(depth - 1))}
    siblings = [draw(nested_inline_schemas(depth - 1)) for _ in range(draw(st.integers(2, 3)))]
    if nesting == "prefixItems":
        closed = {"minItems": len(siblings), "items": False} if draw(st.booleans()) else {}
        return {"type": "array", "prefixItems": siblings, **closed}
    return {nesting: siblings}


def _inline_object(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    """An object whose properties are strings and integers, or (above depth 0) nested schemas."""
    names = draw(st.lists(MEETING_PROPERTIES, min_size=1, max_size=3, unique=True))
    nested = [depth > 0 and draw(st.booleans()) for _ in names]
    properties = {
        name: draw(nested_inline_schemas(depth - 1)) if inner else draw(_LEAVES)
        for name, inner in zip(names, nested, strict=True)
    }
    return {"type": "object", "properties": properties}


@st.composite
def schemas_with_nested_inline_types(draw: st.DrawFn) -> dict[str, Any]:
    """A document of `A` and up to two `MEETING_DEFS`, each a `nested_inline_schemas` of
    random depth (1 to 3)."""
    names = ["A", *draw(st.lists(MEETING_DEFS, max_size=2, unique=True))]
    return {"$defs": {name: draw(nested_inline_schemas(draw(st.integers(1, 3)))) for name in names}}


# --- lines a hostile peer sends (tests/package/test_hostile_peer.py) ----------------------

_HOSTILE_TEXT = st.text(st.characters(exclude_categories=()), max_size=6) | st.sampled_from(
    ["2.0", "session/new", "session/prompt", "initialize", "_test/echo", "$/cancel_request", "\ud800", "\udfff\x00"]
)
HOSTILE_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([2.0, -0.0, 1e308, 10**400])
    | _HOSTILE_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_HOSTILE_TEXT, children, max_size=3),
    max_leaves=8,
)
"""Any JSON value, lone surrogates, control characters and numbers no float holds included."""
_TYPICAL = {
    "jsonrpc": st.just("2.0"),
    "id": st.integers(0, 5) | st.text("ab", max_size=2),
    "method": st.sampled_from(["session/new", "session/prompt", "session/cancel", "_test/echo", "$/cancel_request"]),
    "params": st.sampled_from([{"cwd": "/w"}, {"sessionId": "s1"}, {"requestId": 1}, {}]),
    "result": st.sampled_from([{}, None, {"sessionId": "s1"}]),
    "error": st.sampled_from([{"code": -32000, "message": "m"}, {"code": "x"}, {}]),
}


@st.composite
def hostile_envelopes(draw: st.DrawFn) -> bytes:
    """A JSON-RPC-shaped line whose every member is absent, typical, or any JSON value, written
    ASCII-escaped or raw (lone surrogates then as the invalid UTF-8 a careless peer writes)."""
    message: dict[str, Any] = {}
    for member, typical in _TYPICAL.items():
        kind = draw(st.sampled_from(["absent", "typical", "typical", "any"]))
        if kind != "absent":
            message[member] = draw(typical if kind == "typical" else HOSTILE_JSON)
    text = json.dumps(message, ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass")


@st.composite
def deep_lines(draw: st.DrawFn) -> bytes:
    """Arrays or objects nested up to 200,000 deep, closed or not, alone or in an envelope."""
    depth = draw(st.sampled_from([10, 990, 1000, 5000, 200_000]))
    opening, closing = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    value = opening * depth + b"1" + closing * draw(st.sampled_from([depth, depth // 2]))
    member = draw(st.sampled_from([b"params", b"id", b"result", b"error", b"method", b"jsonrpc"]))
    wrapped = b'{"jsonrpc":"2.0","id":1,"method":"session/new","' + member + b'":' + value + b"}"
    return draw(st.sampled_from([value, wrapped]))


def hostile_lines(max_message_bytes: int) -> st.SearchStrategy[bytes]:
    """One line (no newline) of any of the kinds a hostile peer sends, around `max_message_bytes` too."""
    giant = st.sampled_from([max_message_bytes - 64, max_message_bytes, max_message_bytes + 1, 3 * max_message_bytes])
    return st.one_of(
        hostile_envelopes(),
        deep_lines(),
        st.binary(max_size=64).map(lambda data: data.replace(b"\n", b"")),
        st.sampled_from([b"", b" ", b"\r", b"1", b"{}", b"[]", b'""', b"null", b"\xef\xbb\xbf{}", b"\xff"]),
        giant.map(
            lambda size: (b'{"jsonrpc":"2.0","id":9,"method":"_test/echo","params":"' + b"x" * size)[:size] + b'"}'
        ),
    )
