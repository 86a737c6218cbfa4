"""What IR type expressions print and are made of, without the module: error texts, helper
names, their parts, and how `diff` shows and compares them.

Like `pytypes`, each function is a `match` over the closed union `ir.TypeExpr` ending in
`assert_never`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from typing import assert_never

from generator.ir.model import (
    Alias,
    AnyValue,
    Checked,
    EnumType,
    JsonObject,
    ListOf,
    MapOf,
    NamedType,
    Nullable,
    ObjectType,
    Primitive,
    Ref,
    TupleOf,
    TypeExpr,
    UnionType,
)

JSON_NAMES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "none": "null"}


def describe(expr: TypeExpr) -> str:
    """What an error message says the schema expects."""
    match expr:
        case Primitive():
            return JSON_NAMES[expr.kind]
        case AnyValue():
            return "any JSON value"
        case JsonObject() | MapOf():
            return "object"
        case ListOf():
            return "array"
        case TupleOf():
            return f"array of {len(expr.items)} item{'s' if len(expr.items) > 1 else ''}"
        case Nullable():
            return f"{describe(expr.inner)} or null"
        case Checked():
            return describe(expr.inner)
        case Ref():
            return expr.name
        case _:
            assert_never(expr)


def string_expectation(expr: Primitive) -> str:
    """What an error says a constrained string must be."""
    parts = [f"at least {expr.min_length} characters"] if expr.min_length else []
    parts += [f"matching {expr.pattern!r}"] if expr.pattern else []
    return "string " + " and ".join(parts)


def helper_name(expr: TypeExpr) -> str:
    """A readable, deterministic name for the decoder of a list or map."""
    match expr:
        case Primitive():
            bounds = "" if expr.minimum is None and expr.maximum is None else f"_{expr.minimum}_{expr.maximum}"
            name = (expr.format or expr.kind) + bounds.replace("-", "m")
            name += f"_min{expr.min_length}" if expr.min_length else ""
            return name + (f"_re{hashlib.sha256(expr.pattern.encode()).hexdigest()[:8]}" if expr.pattern else "")
        case AnyValue():
            return "any"
        case JsonObject():
            return "object"
        case MapOf():
            return f"map_of_{helper_name(expr.value)}"
        case ListOf():
            suffix = (f"_min{expr.min_items}" if expr.min_items else "") + (
                "_skip_invalid" if expr.skip_invalid_items else ""
            )
            return f"list_of_{helper_name(expr.item)}{suffix}"
        case TupleOf():
            return f"tuple{len(expr.items)}_of_" + "_and_".join(helper_name(item) for item in expr.items)
        case Nullable():
            return f"optional_{helper_name(expr.inner)}"
        case Checked():
            digest = hashlib.sha256(repr(expr.checks).encode()).hexdigest()[:8]
            return f"{helper_name(expr.inner)}_checked{digest}"
        case Ref():
            return expr.name
        case _:
            assert_never(expr)


def children(expr: TypeExpr) -> tuple[TypeExpr, ...]:
    """The type expressions `expr` is made of."""
    match expr:
        case ListOf():
            return (expr.item,)
        case MapOf():
            return (expr.value,)
        case TupleOf():
            return expr.items
        case Nullable() | Checked():
            return (expr.inner,)
        case Primitive() | AnyValue() | JsonObject() | Ref():
            return ()
        case _:
            assert_never(expr)


def expressions(named: NamedType) -> Iterator[TypeExpr]:
    """Every type expression of a named type, outermost first, depth first."""
    match named:
        case ObjectType():
            roots: list[TypeExpr] = [item.type for item in named.fields]
        case UnionType():
            roots = [variant.type for variant in named.variants]
        case Alias():
            roots = [named.target]
        case EnumType():
            roots = []
        case _:
            assert_never(named)
    stack = list(reversed(roots))
    while stack:
        expr = stack.pop()
        yield expr
        stack.extend(reversed(children(expr)))


def bounds(expr: Primitive) -> str:
    """The bounds a primitive validates, for `diff`: `0..10, length >= 1`, or `none`."""
    parts = []
    if expr.minimum is not None or expr.maximum is not None:
        low = "" if expr.minimum is None else expr.minimum
        high = "" if expr.maximum is None else expr.maximum
        parts.append(f"{low}..{high}")
    if expr.min_length:
        parts.append(f"length >= {expr.min_length}")
    return ", ".join(parts) or "none"


def show(expr: TypeExpr) -> str:
    """A type expression as its Python annotation with the bounds it validates (for `diff`)."""
    match expr:
        case Primitive():
            shown = "None" if expr.kind == "none" else expr.kind
            return shown if bounds(expr) == "none" else f"{shown}({bounds(expr)})"
        case Ref():
            return expr.name
        case ListOf():
            rules = [f"min {expr.min_items}"] * bool(expr.min_items) + ["skip invalid"] * expr.skip_invalid_items
            return f"list[{show(expr.item)}]" + (f"({', '.join(rules)})" if rules else "")
        case MapOf():
            return f"dict[str, {show(expr.value)}]"
        case TupleOf():
            return f"tuple[{', '.join(show(item) for item in expr.items)}]"
        case Nullable():
            return f"{show(expr.inner)} | None"
        case JsonObject():
            return "dict[str, Any]"
        case Checked():
            return f"{show(expr.inner)}(checked)"
        case AnyValue():
            return "Any"
        case _:
            assert_never(expr)


def normal(expr: TypeExpr, renames: dict[str, str]) -> TypeExpr:
    """`expr` as `diff` compares it: renamed types under their new name, `format` dropped."""
    match expr:
        case Primitive():
            return replace(expr, format=None)
        case Ref():
            return Ref(renames.get(expr.name, expr.name))
        case ListOf():
            return replace(expr, item=normal(expr.item, renames))
        case MapOf():
            return MapOf(normal(expr.value, renames))
        case TupleOf():
            return TupleOf(tuple(normal(item, renames) for item in expr.items))
        case Nullable():
            return Nullable(normal(expr.inner, renames))
        case AnyValue() | JsonObject() | Checked():
            return expr
        case _:
            assert_never(expr)


def breaking(old: TypeExpr, new: TypeExpr) -> bool:
    """Whether a type change breaks: only looser bounds and list rules, at any depth, do not."""
    if old == new:
        return False
    match old, new:
        case Primitive(), Primitive() if old.kind == new.kind:
            return narrowed(old, new)
        case ListOf(), ListOf():
            stricter = (new.min_items or 0) > (old.min_items or 0) or (
                old.skip_invalid_items and not new.skip_invalid_items
            )
            return stricter or breaking(old.item, new.item)
        case MapOf(), MapOf():
            return breaking(old.value, new.value)
        case TupleOf(), TupleOf() if len(old.items) == len(new.items):
            return any(breaking(before, after) for before, after in zip(old.items, new.items, strict=True))
        case Nullable(), Nullable():
            return breaking(old.inner, new.inner)
        case _:
            return True


def narrowed(old: Primitive, new: Primitive) -> bool:
    """Whether `new` rejects a value `old` accepts (a missing bound is no bound)."""
    inf = float("inf")
    low = (new.minimum if new.minimum is not None else -inf) > (old.minimum if old.minimum is not None else -inf)
    high = (new.maximum if new.maximum is not None else inf) < (old.maximum if old.maximum is not None else inf)
    return low or high or (new.min_length or 0) > (old.min_length or 0)
