"""The typed contexts of the templates: what every template may use (`PackageContext`),
and what rpc.py and upserts.py need beyond it (connection.py's is in `peers`). A template
sees each field of the contexts it is rendered with as a variable (`variables`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.emit.pytypes import Queries
from generator.ir.model import Alias, EnumType, Method, Module, ObjectType, Ref, UnionType

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# The two peers of a connection (x-side values); methods of SHARED_SIDE go both ways.
PEER_SIDES = ("agent", "client")
SHARED_SIDE = "protocol"


def sort_key(name: str) -> tuple[int, list[str | int]]:
    """isort/ruff order: CONSTANTS, then Classes, then other names; digits compared as numbers."""
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def import_sort_key(name: str) -> tuple[int, list[str | int]]:
    """isort's order inside `from x import (...)`: by type, then case-insensitively."""
    group, parts = sort_key(name)
    return group, [part.lower() if isinstance(part, str) else part for part in parts]


# A string literal with its prefix, triple-quoted or not.
_STRING = r"""(?P<prefix>[rRbBuUfF]{0,2})(?P<string>'{3}(?:\\.|[^\\])*?'{3}|"{3}(?:\\.|[^\\])*?"{3}|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
_STRING_START = re.compile(_STRING, re.DOTALL)

# Python source as names, strings, comments and numbers: what `tokenize` calls NAME tokens,
# found by one regular expression instead of its Python-level tokenizer (a tenth of the time
# on the codec). Since 3.12 the tokenizer also yields the names inside f-strings; this finds
# them on every version (`_replacement_fields`).
_SOURCE_TOKENS = re.compile(
    rf"""
    {_STRING}
    | \#[^\n]*
    | \d\w*
    | (?P<name>[^\W\d]\w*)
    """,
    re.VERBOSE | re.DOTALL,
)


def names_in_code(units: list[str], candidates: list[str]) -> list[str]:
    """The `candidates` that `units` (Python source) use as names, outside strings and
    comments (but inside an f-string's replacement fields), in import order: what a module
    of those units imports."""
    found: set[str] = set()
    for unit in units:
        found.update(_names(unit))
    return sorted(found.intersection(candidates), key=import_sort_key)


def _names(source: str) -> Iterator[str]:
    for match in _SOURCE_TOKENS.finditer(source):
        if match["name"]:
            yield match["name"]
        elif match["string"] and "f" in match["prefix"].lower():
            quotes = 3 if match["string"][:3] in ("'''", '"""') else 1
            for expression in _replacement_fields(match["string"][quotes:-quotes]):
                yield from _names(expression)


def _replacement_fields(body: str) -> Iterator[str]:
    """The expressions of an f-string's body (its text between the quotes), those in its
    format specs included: `{x!r:>{width}}` holds `x` and `width`."""
    i = 0
    while i < len(body):
        if body.startswith(("{{", "}}"), i):
            i += 2
        elif body[i] == "{":
            end, split = _field_end(body, i + 1)
            yield body[i + 1 : split]
            yield from _replacement_fields(body[split:end])
            i = end + 1
        else:
            i += 1


def _field_end(body: str, start: int) -> tuple[int, int]:
    """Where the replacement field whose expression begins at `start` ends (its closing
    brace) and where its expression ends (at a conversion or format spec, if any)."""
    depth, split, i = 0, -1, start
    while i < len(body):
        string = _STRING_START.match(body, i) if split < 0 else None
        if string:
            i = string.end()
            continue
        char = body[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return i, i if split < 0 else split
            depth -= 1
        elif split < 0 and depth == 0 and (char == ":" or (char == "!" and body[i + 1 : i + 2] != "=")):
            split = i
        i += 1
    return i, i if split < 0 else split


def variables(*contexts: DataclassInstance) -> dict[str, Any]:
    """The fields of `contexts` (dataclass instances) as template variables; no two may share a name."""
    merged: dict[str, Any] = {}
    for context in contexts:
        for field in dataclasses.fields(context):
            if field.name in merged:
                raise ValueError(f"two template contexts define {field.name!r}")
            merged[field.name] = getattr(context, field.name)
    return merged


@dataclass(frozen=True)
class UpsertContext:
    """What upserts.py needs (and `__init__`, which re-exports the merge functions)."""

    upserts: list[ObjectType]
    upsert_variants: dict[str, list[str]]  # upsert type → its variant subclasses
    upsert_imports: list[str]
    merge_functions: list[str]


@dataclass(frozen=True)
class PackageContext:
    """What every template may use: the module, its types in definition order, the public names."""

    module: Module
    versions: dict[str, str]
    objects: list[ObjectType]  # base classes before their variants
    enums: list[EnumType]
    aliases_and_unions: list[Alias | UnionType]  # each after what it refers to
    decoder_keys: list[tuple[str, str]]  # (the key `decode` takes, the Python name)
    exported: list[str]  # the type names, in `__all__` order
    imported: list[str]  # the type names, in import order
    public: list[tuple[str, list[str]]]  # every name `__init__` re-exports, in groups: (comment, names)
    builders: bool
    rpc: bool
    rpc_imported: list[str]
    connection_exported: list[str]
    connection_imported: list[str]
    transports_imported: list[str]  # transports.py's public names (none without a connection)
    session_exported: list[str]  # session.py's public names (none without it)
    helpers_exported: list[str]  # helpers.py's public names (none without it)
    uses: dict[str, bool]  # which names of `typing` and `dataclasses` models.py uses


@dataclass(frozen=True)
class RpcContext:
    """What rpc.py needs beyond the package context."""

    requests_by_side: list[tuple[str, list[Method]]]
    shared_sides: list[str]
    notifications_by_side: list[tuple[str, list[Method]]]
    method_constants: list[tuple[str, str]]  # (constant, wire method)
    rpc_imports: list[str]
    request_id: str | None
    rpc_error: str | None


def upsert_context(objects: list[ObjectType], queries: Queries) -> UpsertContext:
    """What upserts.py.jinja needs: the upsert types, their variant subclasses, imports."""
    upserts = [obj for obj in objects if obj.upsert]
    variants = {obj.name: [other.name for other in objects if other.base == obj.name] for obj in upserts}
    enums = set()
    for obj in upserts:
        start = dict(obj.upsert.start)  # type: ignore[union-attr]
        for item in obj.fields:
            member = queries.enum_member(item.type, start[item.name]) if item.name in start else None
            if member:
                enums.add(member.enum)
    names = {obj.name for obj in upserts} | {name for subclasses in variants.values() for name in subclasses} | enums
    return UpsertContext(
        upserts=upserts,
        upsert_variants=variants,
        upsert_imports=sorted(names, key=import_sort_key),
        merge_functions=sorted(obj.upsert.function for obj in upserts),  # type: ignore[union-attr]
    )


def rpc_context(module: Module) -> RpcContext:
    """What rpc.py.jinja needs: routes grouped by side, method constants, imports."""
    methods = sorted(module.methods, key=lambda method: (method.side, method.name))
    sides = sorted({method.side for method in methods})
    names = (
        {module.request_id, module.rpc_error} | {m.params for m in methods} | {m.result for m in methods if m.result}
    )

    def by_side(kind: str) -> list[tuple[str, list[Method]]]:
        """(side, its methods of `kind`), every side included."""
        return [(side, [m for m in methods if m.side == side and m.kind == kind]) for side in sides]

    return RpcContext(
        requests_by_side=by_side("request"),
        shared_sides=[side for side in sides if side == SHARED_SIDE],
        notifications_by_side=by_side("notification"),
        method_constants=sorted({(m.constant, m.name) for m in methods}),
        rpc_imports=sorted({name for name in names if name}, key=import_sort_key),
        request_id=module.request_id,
        rpc_error=module.rpc_error,
    )


def rpc_code_enum(module: Module, queries: Queries) -> str | None:
    """The enum of the error object's `code`, when the schema has one."""
    error = queries.types.get(module.rpc_error or "")
    if not isinstance(error, ObjectType):
        return None
    code = next((queries.resolve(item.type) for item in error.fields if item.wire_name == "code"), None)
    return code.name if isinstance(code, Ref) and isinstance(queries.types[code.name], EnumType) else None
