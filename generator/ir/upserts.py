"""Upserts: the merge rules of `[tool.acp-codegen.upserts]` added to the object types
they name, and a warning for each type whose description speaks of upserts but has none."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from generator.config import CONFIG, SchemaOptions, UpsertRule
from generator.errors import UNCONFIGURED_UPSERT, GenerationError, SchemaWarning
from generator.ir import naming
from generator.ir.model import JsonObject, NamedType, ObjectType, Upsert
from generator.schema.load import Schema

# A type description that speaks of these is an upsert, or says why not (`not-upserts`).
UPSERT_WORDS = re.compile(r"patch semantics|\bupsert", re.IGNORECASE)


def with_upserts(
    types: dict[str, NamedType], python_names: dict[str, str], rules: dict[str, UpsertRule]
) -> dict[str, NamedType]:
    """`types` (by Python name) with the merge rules of each row of `rules` (by `$defs` name)."""
    types = dict(types)
    merge_owners: dict[str, str] = {}  # merge function → `$defs` name
    for name, rule in rules.items():
        named = with_upsert(types.get(python_names.get(name, name)), name, rule)
        function = naming.merge_function_name(named.name)
        if merge_owners.setdefault(function, name) != name:
            raise GenerationError(
                f"{CONFIG} upserts.{name}", f"its merge function {function} is also that of {merge_owners[function]}"
            )
        types[named.name] = named
    return types


def with_upsert(named: NamedType | None, name: str, rule: UpsertRule) -> ObjectType:
    """`named` with the merge rules of its `[tool.acp-codegen.upserts]` row."""
    where = f"{CONFIG} upserts.{name}"
    if not isinstance(named, ObjectType) or named.base is not None:
        raise GenerationError(where, f"{name} is not an object type of the schema")
    by_wire = {item.wire_name: item for item in named.fields if not item.flatten}

    def attributes(key: str, wire_names: Iterable[str]) -> tuple[str, ...]:
        wire_names = list(wire_names)
        for wire_name in wire_names:
            if wire_name not in by_wire:
                raise GenerationError(f"{where}.{key}", f"{name} has no property {wire_name!r}")
        return tuple(by_wire[wire_name].name for wire_name in wire_names)

    identity = attributes("identity", rule.identity)
    for wire_name in rule.identity:
        if not by_wire[wire_name].required:
            raise GenerationError(f"{where}.identity", f"identity property {wire_name!r} is not required")
    snapshot = attributes("snapshot", rule.snapshot)
    for wire_name, value in rule.start.items():
        if not (value == [] or value == {} or isinstance(value, (str, int, float, bool))):
            raise GenerationError(f"{where}.start.{wire_name}", "a start value must be a scalar, [] or {}")
    for wire_name in rule.null_resets:
        if wire_name not in rule.start:
            raise GenerationError(f"{where}.null-resets", f"{wire_name!r} resets to its start value, but has none")
    upsert = Upsert(
        function=naming.merge_function_name(named.name),
        identity=identity,
        start=tuple(zip(attributes("start", rule.start), rule.start.values(), strict=True)),
        null_resets=attributes("null-resets", rule.null_resets),
        empty_clears=attributes("empty-clears", rule.empty_clears),
        snapshot=snapshot,
        by_key=tuple(
            item.name for item in by_wire.values() if isinstance(item.type, JsonObject) and item.name not in snapshot
        ),
    )
    return replace(named, upsert=upsert)


def drift_warnings(
    types: dict[str, NamedType], schema: Schema, options: SchemaOptions, python_names: dict[str, str]
) -> list[SchemaWarning]:
    """`$defs` objects whose description speaks of upserts but have no merge rules."""
    return [
        SchemaWarning(
            UNCONFIGURED_UPSERT,
            name,
            f"{name} ({schema.definitions[name].pointer}): its description mentions upserts or patch semantics, "
            f"but it is not in [tool.acp-codegen.upserts] (or not-upserts)",
        )
        for name, python in python_names.items()
        if isinstance(types[python], ObjectType)
        and UPSERT_WORDS.search(types[python].doc or "")
        and name not in options.upserts
        and name not in options.not_upserts
    ]
