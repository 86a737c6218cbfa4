"""The keywords a node's structural type does not express, as `assertions.Checks` run on the
JSON value; and what a schema evaluates, for `unevaluatedProperties`/`unevaluatedItems`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.assertions import Checks, Evaluates, EvaluatesWhen
from generator.schema.keywords import ANNOTATIONS, JSON_TYPES, count, json_text, number
from generator.schema.load import Node, pointer_tokens
from generator.schema.patterns import python_pattern


def checks_of(
    node: Node,
    used: frozenset[str],
    hint: str,
    named: Callable[[Node, str], str],
    resolve: Callable[[Node], Node],
    *,
    also: Iterable[Node] = (),
    required: Iterable[str] = (),
) -> Checks | None:
    """The keywords of `node` its structural type did not take (`used`), as run-time
    checks; `named(subschema, hint)` gives the named type a subschema is checked with."""
    rest = {key for key in node.keywords - used if key not in ANNOTATIONS and not key.startswith("x-")}
    rest -= {"$id", "$schema"}  # checked by keywords.check_supported
    also = list(also)
    required = tuple(required)
    if not rest and not also and not required:
        return None
    found: dict[str, Any] = {
        "also": tuple(named(part, naming.class_name(hint, "all", part.pointer.rsplit("/", 1)[1])) for part in also)
    }
    where = node.pointer
    if "type" in rest:
        for name in node.types:
            if name not in JSON_TYPES:
                raise GenerationError(f"{where}/type", f"unknown type {name!r}")
        found["types"] = node.types
    for key, field_name in (
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("exclusiveMinimum", "exclusive_minimum"),
        ("exclusiveMaximum", "exclusive_maximum"),
        ("multipleOf", "multiple_of"),
    ):
        if key in rest:
            found[field_name] = number(node, key)
    if found.get("multiple_of") is not None and found["multiple_of"] <= 0:
        raise GenerationError(f"{where}/multipleOf", "expected a number greater than 0")
    for key, field_name in (
        ("minLength", "min_length"),
        ("maxLength", "max_length"),
        ("minItems", "min_items"),
        ("maxItems", "max_items"),
        ("minProperties", "min_properties"),
        ("maxProperties", "max_properties"),
    ):
        if key in rest:
            found[field_name] = count(node, key)
    if "pattern" in rest:
        found["pattern"] = python_pattern(f"{where}/pattern", node.value("pattern"))
    if "uniqueItems" in rest:
        if not isinstance(node.value("uniqueItems"), bool):
            raise GenerationError(f"{where}/uniqueItems", "expected a boolean")
        found["unique_items"] = node.value("uniqueItems")
    if "prefixItems" in rest:
        found["prefix_items"] = tuple(
            named(item, naming.class_name(hint, "item", str(index)))
            for index, item in enumerate(node.children("prefixItems"))
        )
    if "items" in rest:
        found["items"] = named(node.child("items"), naming.class_name(hint, "items"))  # type: ignore[arg-type]
    if "contains" in rest:
        found["contains"] = named(node.child("contains"), naming.class_name(hint, "contains"))  # type: ignore[arg-type]
        for key, field_name in (("minContains", "min_contains"), ("maxContains", "max_contains")):
            if key in rest:
                found[field_name] = count(node, key)
    if "properties" in rest:
        found["properties"] = tuple(
            (key, named(child, naming.class_name(hint, "property", str(index))))
            for index, (key, child) in enumerate(node.properties())
        )
    if "patternProperties" in rest:
        found["pattern_properties"] = tuple(
            (python_pattern(child.pointer, key), named(child, naming.class_name(hint, "pattern", str(index))))
            for index, (key, child) in enumerate(node.properties("patternProperties"))
        )
    if "additionalProperties" in rest:
        additional = node.child("additionalProperties")
        assert additional is not None  # "additionalProperties" is in `rest`
        found["additional_properties"] = named(additional, naming.class_name(hint, "additional"))
        found["known_properties"] = tuple(key for key, _ in node.properties())
        found.setdefault(
            "pattern_properties",
            tuple((python_pattern(child.pointer, key), "") for key, child in node.properties("patternProperties")),
        )
    if "propertyNames" in rest:
        found["property_names"] = named(node.child("propertyNames"), naming.class_name(hint, "name"))  # type: ignore[arg-type]
    if "required" in rest or required:
        found["required"] = tuple(dict.fromkeys((*node.required, *required))) if "required" in rest else required
    if "dependentRequired" in rest:
        found["dependent_required"] = _dependent_required(node)
    if "dependentSchemas" in rest:
        found["dependent_schemas"] = tuple(
            (key, named(child, naming.class_name(hint, "dependent", str(index))))
            for index, (key, child) in enumerate(node.properties("dependentSchemas"))
        )
    if "const" in rest:
        found["const"] = json_text(node.value("const"))
    if "enum" in rest:
        values = node.value("enum")
        if not isinstance(values, list):
            raise GenerationError(f"{where}/enum", "expected an array")
        found["enum"] = tuple(json_text(value) for value in values)
    for key in ("anyOf", "oneOf", "allOf", "$ref"):
        if key in rest:
            found["also"] += (named(node.only(frozenset({key})), naming.class_name(hint, key)),)
    if "not" in rest:
        found["never"] = (named(node.child("not"), naming.class_name(hint, "not")),)  # type: ignore[arg-type]
    if "if" in rest:
        branches = [node.child(key) for key in ("if", "then", "else")]
        found["condition"] = tuple(
            None if branch is None else named(branch, naming.class_name(hint, key))
            for key, branch in zip(("if", "then", "else"), branches, strict=True)
        )
    for key, kind in (("unevaluatedProperties", "properties"), ("unevaluatedItems", "items")):
        child = node.child(key)
        if key in rest and child is not None and child.schema is not True:
            plan = evaluates(node, kind, named, resolve, nested=False)
            found[f"unevaluated_{kind}"] = (named(child, naming.class_name(hint, key)), plan)
    return Checks(**found)


def _dependent_required(node: Node) -> tuple[tuple[str, tuple[str, ...]], ...]:
    raw = node.value("dependentRequired")
    if not isinstance(raw, dict) or not all(
        isinstance(keys, list) and all(isinstance(key, str) for key in keys) for keys in raw.values()
    ):
        raise GenerationError(f"{node.pointer}/dependentRequired", "expected an object of arrays of strings")
    return tuple((key, tuple(keys)) for key, keys in raw.items())


# --- unevaluatedProperties / unevaluatedItems ----------------------------------


def evaluates(
    node: Node,
    kind: str,
    named: Callable[[Node, str], str],
    resolve: Callable[[Node], Node],
    *,
    nested: bool = True,
    seen: frozenset[str] = frozenset(),
) -> Evaluates:
    """What `node` evaluates of an object ("properties") or array ("items"), through its
    in-place subschemas; `nested` is False for the node whose `unevaluated*` this is for."""
    if not isinstance(node.schema, dict):
        return Evaluates()
    if node.pointer in seen:
        raise GenerationError(
            node.pointer, f"unevaluated{kind.title()} through a recursive in-place $ref is not supported"
        )
    seen = seen | {node.pointer}

    def sub(child: Node) -> Evaluates:
        return evaluates(child, kind, named, resolve, seen=seen)

    def condition(child: Node) -> str:
        """The type a value is tested against, named after the subschema's pointer."""
        return named(child, naming.pointer_name("Valid", pointer_tokens(child.pointer)))

    parts = [EvaluatesWhen(sub(part)) for part in node.children("allOf")]
    for keyword in ("anyOf", "oneOf"):
        parts += [EvaluatesWhen(sub(branch), valid=condition(branch)) for branch in node.children(keyword)]
    if node.ref:
        parts.append(EvaluatesWhen(sub(resolve(node))))
    test, then, otherwise = (node.child(key) for key in ("if", "then", "else"))
    if test is not None:
        when_valid = Evaluates(parts=tuple(EvaluatesWhen(sub(child)) for child in (test, then) if child is not None))
        parts.append(
            EvaluatesWhen(when_valid, valid=condition(test), otherwise=None if otherwise is None else sub(otherwise))
        )
    parts += [EvaluatesWhen(sub(child), present=key) for key, child in node.properties("dependentSchemas")]
    parts = [part for part in parts if not (part.evaluates.empty and (part.otherwise is None or part.otherwise.empty))]
    if kind == "properties":
        return Evaluates(
            keys=tuple(key for key, _ in node.properties()),
            patterns=tuple(python_pattern(child.pointer, key) for key, child in node.properties("patternProperties")),
            everything="additionalProperties" in node.keywords or (nested and "unevaluatedProperties" in node.keywords),
            parts=tuple(parts),
        )
    contains = node.child("contains")
    return Evaluates(
        everything="items" in node.keywords or (nested and "unevaluatedItems" in node.keywords),
        prefix=len(node.children("prefixItems")),
        contains=() if contains is None else (condition(contains),),
        parts=tuple(parts),
    )
