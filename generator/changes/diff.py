"""The changelog of the generated Python API between two IRs: what changed, and what breaks.

Compatibility rule, one for every kind of change: a change is BREAKING when code
written against the old package can fail against the new one, on either side
of the wire:

- building messages: a name it uses is gone or renamed, a constructor needs a
  new argument, or a value it sends is no longer accepted (narrower bounds, a
  removed member or variant, a closed enum or union, None no longer allowed);
- reading decoded messages: a value may now arrive that its old annotations
  excluded (None in a newly nullable field, a member or variant added to a
  closed enum or union, any value of one that became open).

One exception, as the schema-update workflow asks: a required field that
becomes optional is compatible (old code that sends it still works; readers
see UNDEFINED only from peers that use the new schema).

Old code must already cope with values it does not know in *open* enums and
unions, so their new members and variants are compatible; so are new types,
routes and optional fields, and wider bounds (Python's `int` has none).

What is compared: types by Python name (a removed and an added type with the
same JSON pointer, and the same tag if they are tagged variants, are one
rename); fields by wire name (flattened unions by attribute), enum members by
value, tagged variants by tag and untagged ones by type. Type expressions are
compared structurally, with renamed types followed and `format` ignored (the
generated code uses only the bounds it implies). Docstrings and the order of
untagged variants are not compared, nor what the configuration adds (upserts,
path types): only what the schema decides.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from generator.emit.exprs import bounds, breaking, narrowed, normal, show
from generator.ir.assertions import Checks
from generator.ir.model import (
    Alias,
    EnumMember,
    EnumType,
    Field,
    Module,
    NamedType,
    ObjectType,
    Primitive,
    Route,
    TypeExpr,
    UnionType,
    Variant,
)

KINDS = {ObjectType: "object", EnumType: "enum", UnionType: "union", Alias: "alias"}
UNKNOWN_PROPERTIES = {
    "keep": "kept in unknown_properties",
    "reject": "rejected",
    "flatten": "left to the flattened union",
}
DECODING_HINTS = (("default_on_error", "an invalid value"), ("default_on_null", "null"))


@dataclass(frozen=True)
class Change:
    """One changelog entry about the named type `type`; `kind` is a stable identifier."""

    type: str
    kind: str
    breaking: bool
    message: str


# --- comparing modules and named types ---------------------------------------


def diff_modules(old: Module, new: Module) -> list[Change]:
    """Every API change from `old` to `new`, sorted by type name."""
    old_types, new_types = old.by_name(), new.by_name()
    renames = _renames(old_types, new_types)
    changes: list[Change] = []
    for name in sorted(old_types.keys() - new_types.keys() - renames.keys()):
        changes.append(Change(name, "type-removed", True, f"{_describe_type(old_types[name])} removed"))
    for name in sorted(new_types.keys() - old_types.keys() - set(renames.values())):
        changes.append(Change(name, "type-added", False, f"{_describe_type(new_types[name])} added"))
    pairs = [(name, name) for name in sorted(old_types.keys() & new_types.keys())] + sorted(renames.items())
    for old_name, new_name in pairs:
        changes.extend(_compare_types(old_types[old_name], new_types[new_name], renames))
    return sorted(changes, key=lambda change: change.type)


def _renames(old_types: dict[str, NamedType], new_types: dict[str, NamedType]) -> dict[str, str]:
    """Old name → new name, for removed and added types with the same identity."""
    added = {_identity(named): name for name, named in new_types.items() if name not in old_types}
    return {
        name: added[_identity(named)]
        for name, named in old_types.items()
        if name not in new_types and _identity(named) in added
    }


def _identity(named: NamedType) -> tuple[str, object]:
    """The JSON pointer, and the tag of a tagged variant: its pointer is only a position
    (`#/$defs/Shape/anyOf/1`), so a variant replaced in place is no rename."""
    tag = named.tag if isinstance(named, ObjectType) else None
    return named.pointer, None if tag is None else (tag.key, tag.value)


def _describe_type(named: NamedType) -> str:
    route = f" ({_describe_route(named.route)})" if named.route else ""
    return f"{KINDS[type(named)]} {named.name}{route}"


def _describe_route(route: Route | None) -> str:
    if route is None:
        return "none"
    return f"method {route.method}, {route.side} side"


def _compare_types(old: NamedType, new: NamedType, renames: dict[str, str]) -> list[Change]:
    name = new.name
    changes = []
    if old.name != name:
        message = f"{KINDS[type(old)]} renamed {old.name} → {name} (pointer {old.pointer})"
        changes.append(Change(name, "type-renamed", True, message))
    if type(old) is not type(new):
        changes.append(Change(name, "type-kind", True, f"changed from {KINDS[type(old)]} to {KINDS[type(new)]}"))
        return changes
    if isinstance(old, ObjectType) and isinstance(new, ObjectType):
        changes += _compare_objects(old, new, renames)
    elif isinstance(old, EnumType) and isinstance(new, EnumType):
        changes += _compare_enums(old, new)
    elif isinstance(old, UnionType) and isinstance(new, UnionType):
        changes += _compare_unions(old, new, renames)
    elif isinstance(old, Alias) and isinstance(new, Alias):
        changes += _compare_exprs(name, "alias", "target", old.target, new.target, renames)
    if not isinstance(old, Alias) and not isinstance(new, Alias) and old.checks != new.checks:
        message = f"checks {_describe_checks(old.checks)} → {_describe_checks(new.checks)}"
        changes.append(Change(name, "checks", new.checks is not None, message))
    return changes + _compare_routes(name, old.route, new.route)


def _describe_checks(checks: Checks | None) -> str:
    """The keywords a named type checks beside its structure, as `name=value` pairs."""
    if checks is None:
        return "none"
    default = Checks()
    pairs = [
        f"{item.name}={getattr(checks, item.name)!r}"
        for item in dataclasses.fields(checks)
        if getattr(checks, item.name) != getattr(default, item.name)
    ]
    return "(" + ", ".join(pairs) + ")"


def _compare_routes(name: str, old: Route | None, new: Route | None) -> list[Change]:
    if old == new:
        return []
    if old is None:
        return [Change(name, "route-added", False, f"route added: {_describe_route(new)}")]
    if new is None:
        return [Change(name, "route-removed", True, f"route removed: {_describe_route(old)}")]
    return [Change(name, "route-changed", True, f"route changed: {_describe_route(old)} → {_describe_route(new)}")]


# --- objects ------------------------------------------------------------------


def _compare_objects(old: ObjectType, new: ObjectType, renames: dict[str, str]) -> list[Change]:
    name = new.name
    changes = []
    new_fields = {_field_key(item): item for item in new.fields}
    old_keys = {_field_key(item) for item in old.fields}
    for item in old.fields:
        match = new_fields.get(_field_key(item))
        if match is None:
            changes.append(Change(name, "field-removed", True, f"{_describe_field(item)} removed"))
        else:
            changes += _compare_fields(name, item, match, renames)
    for item in new.fields:
        if _field_key(item) not in old_keys:
            presence = "required" if item.required else "optional"
            changes.append(Change(name, "field-added", item.required, f"{_describe_field(item)} added ({presence})"))
    if old.tag != new.tag:
        changes.append(Change(name, "tag", True, f"tag {_describe_tag(old)} → {_describe_tag(new)}"))
    changes += _compare_bases(name, old.base, new.base, renames)
    if old.keep_unknown != new.keep_unknown:
        now, were = UNKNOWN_PROPERTIES[new.keep_unknown], UNKNOWN_PROPERTIES[old.keep_unknown]
        message = f"unknown properties now {now} (were {were})"
        changes.append(Change(name, "unknown-properties", new.keep_unknown != "keep", message))
    return changes


def _compare_bases(name: str, old: str | None, new: str | None, renames: dict[str, str]) -> list[Change]:
    """A lost base class breaks `isinstance` checks; a new one breaks nothing."""
    if (renames.get(old, old) if old else None) == new:
        return []
    lost = [Change(name, "base", True, f"no longer subclasses {old}")] if old else []
    return lost + ([Change(name, "base", False, f"now subclasses {new}")] if new else [])


def _field_key(item: Field) -> str:
    """Fields match by wire name; flattened unions (which have none) by attribute."""
    return f"flattened {item.name}" if item.flatten else item.wire_name


def _describe_field(item: Field) -> str:
    return f"field {item.name} ({'flattened union' if item.flatten else f'wire {item.wire_name!r}'})"


def _describe_tag(obj: ObjectType) -> str:
    return "none" if obj.tag is None else f"{obj.tag.key}={obj.tag.value!r}"


def _compare_fields(name: str, old: Field, new: Field, renames: dict[str, str]) -> list[Change]:
    label = _describe_field(new)
    changes = []
    if old.name != new.name:
        message = f"field renamed {old.name} → {new.name} (wire {new.wire_name!r})"
        changes.append(Change(name, "field-renamed", True, message))
    changes += _compare_exprs(name, "field", label, old.type, new.type, renames)
    if old.required != new.required:
        change = "now required" if new.required else "now optional"
        changes.append(Change(name, "field-presence", new.required, f"{label} {change}"))
    if old.nullable != new.nullable:
        change = "now nullable: readers may receive None" if new.nullable else "no longer nullable: None is rejected"
        changes.append(Change(name, "field-nullable", True, f"{label} {change}"))
    for hint, value in DECODING_HINTS:
        if getattr(old, hint) != getattr(new, hint):
            change = "now decodes" if getattr(new, hint) else "no longer decodes"
            breaking = not getattr(new, hint)
            changes.append(Change(name, "field-decoding", breaking, f"{label} {change} {value} to its default"))
    return changes


# --- enums and unions ---------------------------------------------------------


def _compare_enums(old: EnumType, new: EnumType) -> list[Change]:
    name = new.name
    changes = []
    new_members = {member.value: member for member in new.members}
    old_values = {member.value for member in old.members}
    for member in old.members:
        match = new_members.get(member.value)
        if match is None:
            changes.append(Change(name, "member-removed", True, f"{_describe_member(member)} removed"))
        elif match.name != member.name:
            message = f"member renamed {member.name} → {match.name} ({member.value!r})"
            changes.append(Change(name, "member-renamed", True, message))
    for member in new.members:
        if member.value not in old_values:
            note = "" if old.open else ": the enum was closed, old code may not handle it"
            changes.append(Change(name, "member-added", not old.open, f"{_describe_member(member)} added{note}"))
    return changes + _compare_openness(name, "enum", old.open, new.open, "values that are not members")


def _describe_member(member: EnumMember) -> str:
    return f"member {member.name} ({member.value!r})"


def _compare_unions(old: UnionType, new: UnionType, renames: dict[str, str]) -> list[Change]:
    name = new.name
    changes = []
    new_keys = {_variant_key(variant, {}) for variant in new.variants}
    old_keys = {_variant_key(variant, renames) for variant in old.variants}
    for variant in old.variants:
        if _variant_key(variant, renames) not in new_keys:
            changes.append(Change(name, "variant-removed", True, f"{_describe_variant(variant)} removed"))
    if old.exclusive != new.exclusive:
        rule = "exactly one variant must match (oneOf)" if new.exclusive else "any variant may match (anyOf)"
        changes.append(Change(name, "union-exclusive", new.exclusive, f"now {rule}"))
    was_open = old.fallback is not None
    for variant in new.variants:
        if _variant_key(variant, {}) not in old_keys:
            note = "" if was_open else ": the union was closed, old code may not handle it"
            changes.append(Change(name, "variant-added", not was_open, f"{_describe_variant(variant)} added{note}"))
    return changes + _compare_openness(name, "union", was_open, new.fallback is not None, "unknown variants")


def _variant_key(variant: Variant, renames: dict[str, str]) -> object:
    return ("tag", variant.tag) if variant.tag is not None else ("type", normal(variant.type, renames))


def _describe_variant(variant: Variant) -> str:
    shown = show(variant.type)
    return f"variant {shown}" if variant.tag is None else f"variant {variant.tag!r} ({shown})"


def _compare_openness(name: str, kind: str, was_open: bool, is_open: bool, unknown: str) -> list[Change]:
    if was_open == is_open:
        return []
    if is_open:
        message = f"{kind} now open: readers may receive {unknown}"
    else:
        message = f"{kind} now closed: {unknown} are rejected"
    return [Change(name, f"{kind}-openness", True, message)]


# --- type expressions ---------------------------------------------------------


def _compare_exprs(
    name: str, prefix: str, label: str, old: TypeExpr, new: TypeExpr, renames: dict[str, str]
) -> list[Change]:
    """A changed type, or changed bounds of the same primitive (only narrowing breaks)."""
    old, new = normal(old, renames), normal(new, {})
    if old == new:
        return []
    if isinstance(old, Primitive) and isinstance(new, Primitive) and old.kind == new.kind:
        narrower = narrowed(old, new)
        message = f"{label} bounds {bounds(old)} → {bounds(new)} ({'narrowed' if narrower else 'widened'})"
        return [Change(name, f"{prefix}-bounds", narrower, message)]
    return [Change(name, f"{prefix}-type", breaking(old, new), f"{label} type {show(old)} → {show(new)}")]
