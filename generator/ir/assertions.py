"""The IR of assertions: what a value must satisfy beside its structural type.

`Checks` holds the JSON Schema keywords a type enforces at run time (bounds, lengths,
patterns, subschemas the value must also match...); `Evaluates` what a schema
evaluates, for `unevaluatedProperties`/`unevaluatedItems`. `ir.Checked` pairs a type
expression with its `Checks`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Evaluates:
    """What a schema evaluates of an object's keys or an array's items, for
    `unevaluatedProperties`/`unevaluatedItems` (the annotations of 2020-12)."""

    keys: tuple[str, ...] = ()  # `properties`
    patterns: tuple[str, ...] = ()  # `patternProperties` (Python patterns)
    everything: bool = False  # `additionalProperties`, `items` or a nested `unevaluated*`
    prefix: int = 0  # `prefixItems`: the first `prefix` items
    contains: tuple[str, ...] = ()  # `contains`: the items that match these types
    parts: tuple[EvaluatesWhen, ...] = ()  # in-place subschemas (allOf, anyOf, $ref, if...)

    @property
    def empty(self) -> bool:
        return self == Evaluates()


@dataclass(frozen=True)
class EvaluatesWhen:
    """A subschema's `Evaluates`, counted when the value matches `valid` (anyOf, oneOf,
    if) and has the key `present` (dependentSchemas); `otherwise` when it does not match."""

    evaluates: Evaluates
    valid: str | None = None
    present: str | None = None
    otherwise: Evaluates | None = None


@dataclass(frozen=True)
class Checks:
    """Assertions on the JSON value itself, beside its structural type.

    Each applies only to values of its JSON type, as in JSON Schema (`minimum`
    says nothing about a string). Constants are JSON texts (`const`, `enum`);
    subschemas the value must also match, or must not, are named types.
    """

    valid: bool = True  # False: the schema `false`, nothing is valid
    types: tuple[str, ...] = ()  # JSON type names the value must have; () = any
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    multiple_of: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None  # a Python regular expression (translated from ECMA-262)
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    prefix_items: tuple[str, ...] = ()  # item i must match type i
    items: str | None = None  # the items after `prefix_items` must match this type
    contains: str | None = None
    min_contains: int = 1
    max_contains: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    required: tuple[str, ...] = ()
    dependent_required: tuple[tuple[str, tuple[str, ...]], ...] = ()
    properties: tuple[tuple[str, str], ...] = ()  # (key, type) the value of key must match
    pattern_properties: tuple[tuple[str, str], ...] = ()  # (Python pattern, type)
    additional_properties: str | None = None  # the type of the other keys' values
    known_properties: tuple[str, ...] = ()  # keys `additional_properties` does not apply to
    property_names: str | None = None
    dependent_schemas: tuple[tuple[str, str], ...] = ()
    const: str | None = None  # JSON text
    enum: tuple[str, ...] | None = None  # JSON texts
    also: tuple[str, ...] = ()  # allOf parts beside the structural type
    never: tuple[str, ...] = ()  # `not`
    condition: tuple[str, str | None, str | None] | None = None  # if, then, else
    unevaluated_properties: tuple[str, Evaluates] | None = None  # (type, what the schema evaluates)
    unevaluated_items: tuple[str, Evaluates] | None = None
