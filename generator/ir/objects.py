"""Object types: fields from `properties`, from the `allOf` parts that merge exactly and
from a flattened `anyOf`/`oneOf`; what is left of the object becomes its checks."""

from __future__ import annotations

from collections.abc import Iterable

from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.context import Nested
from generator.ir.model import Field, ListOf, Nullable, ObjectType, Ref, Route, Tag, UnionType
from generator.schema import keywords, kinds
from generator.schema.load import Node


class Objects:
    def __init__(self, shapes: Nested) -> None:
        self.shapes = shapes
        self.context = shapes.context

    def object_type(
        self,
        name: str,
        node: Node,
        fields: list[Field],
        *,
        tag: Tag | None = None,
        route: Route | None = None,
        also: Iterable[Node] = (),
        required: Iterable[str] = (),
        allow_not: bool = False,
    ) -> ObjectType:
        flattened = any(item.flatten for item in fields)
        used = {"type", "properties", "required", "allOf", "anyOf", "oneOf"} | ({"not"} if allow_not else set())
        extra = node.child("additionalProperties")
        closed = False
        if extra is not None and isinstance(extra.schema, bool) and not node.value("patternProperties"):
            used.add("additionalProperties")
            closed = extra.schema is False
        if flattened and closed:
            raise GenerationError(node.pointer, "additionalProperties: false beside anyOf/oneOf is not supported")
        unknown = "flatten" if flattened else "reject" if closed else "keep"
        check_attribute_names(node, fields, tag)
        checks = self.shapes.checks(node, used, name, also=also, required=required)
        return ObjectType(name, node.pointer, node.description, tuple(fields), tag, unknown, route, checks=checks)

    def object_fields(
        self, owner: str, node: Node, skip: frozenset[str] = frozenset()
    ) -> tuple[list[Field], list[Node], list[str]]:
        """Fields from `properties`, then from each `allOf` part that merges
        exactly, then a flattened `anyOf`/`oneOf`; also the parts that are only
        checked and the required keys no field declares."""
        required = set(node.required)
        fields: list[Field] = []
        keyword, variants = kinds.variants(node)
        tag_key = kinds.tag_key(variants) if variants else None
        for wire_name, child in node.properties():
            if wire_name in skip or wire_name == tag_key:  # the flattened union owns its tag
                continue
            fields.append(self.field(owner, wire_name, child, wire_name in required))
        checked_parts = []
        for part in node.children("allOf"):
            merged = self.part_fields(owner, part)
            by_wire = {item.wire_name: item for item in fields}
            if merged is None or any(by_wire.get(item.wire_name, item) != item for item in merged):
                checked_parts.append(part)
                continue
            fields.extend(item for item in merged if item.wire_name not in by_wire and item.wire_name not in skip)
        declared = {item.wire_name for item in fields} | skip | ({tag_key} if tag_key else set())
        undeclared = [key for key in node.required if key not in declared]
        if variants:
            fields.append(self.flattened(owner, node, variants, tag_key, exclusive=keyword == "oneOf"))
        return fields, checked_parts, undeclared

    def part_fields(self, owner: str, part: Node) -> list[Field] | None:
        """The fields an `allOf` part adds, or None when it cannot be merged exactly (then it is checked)."""
        keywords.check_supported(part)
        if part.ref:
            if part.keywords - keywords.ANNOTATIONS - {"$ref"} - {k for k in part.keywords if k.startswith("x-")}:
                return None
            name = self.context.resolve_ref(part)
            target = self.shapes.definition(name) if name in self.context.definitions else None
            if isinstance(target, UnionType) and target.checks is None:
                return [flatten_field(target.tag_key, Ref(target.name))]
            if not isinstance(target, ObjectType) or target.keep_unknown == "reject" or target.checks or target.tag:
                return None
            return list(target.fields)
        mergeable = {"type", "properties", "required"} | keywords.ANNOTATIONS
        if part.types == ("object",) and part.keywords <= mergeable:
            fields, checked, undeclared = self.object_fields(owner, part)
            return None if checked or undeclared else fields
        return None

    def field(self, owner: str, wire_name: str, node: Node, required: bool) -> Field:
        expr = self.shapes.expr(node, naming.part_name(owner, wire_name, "value"))
        nullable = isinstance(expr, Nullable)
        if isinstance(expr, Nullable):
            expr = expr.inner
        default_on_error = node.value("x-deserialize-default-on-error") is True
        if default_on_error and required and not isinstance(expr, ListOf):
            raise GenerationError(
                node.pointer, "x-deserialize-default-on-error on a required property needs an array type (default [])"
            )
        return Field(
            name=naming.attribute_name(wire_name),
            wire_name=wire_name,
            type=expr,
            required=required,
            nullable=nullable,
            doc=node.description,
            default_on_error=default_on_error,
            default_on_null=node.value("x-deserialize-default-on-null") is True,
        )

    def flattened(self, owner: str, node: Node, variants: list[Node], tag_key: str | None, *, exclusive: bool) -> Field:
        """The union part of an object that has both `properties` and `anyOf`/`oneOf`."""
        name = naming.class_name(owner, tag_key or "variant")
        pointer = variants[0].pointer.rsplit("/", 1)[0]
        union = self.shapes.union(name, node, variants, None, pointer=pointer, exclusive=exclusive, used=None)
        return flatten_field(tag_key, union)


def flatten_field(tag_key: str | None, union: Ref) -> Field:
    """The field that holds an object's flattened union (decoded from the object itself)."""
    return Field(
        name=naming.attribute_name(tag_key or "variant"),
        wire_name="",
        type=union,
        required=True,
        nullable=False,
        doc=None,
        flatten=True,
    )


def check_attribute_names(node: Node, fields: list[Field], tag: Tag | None) -> None:
    """Two properties (the tag and a flattened union included) must not share an attribute."""
    pointers = {wire_name: child.pointer for wire_name, child in node.properties()}
    seen: dict[str, str] = {}
    named = [(item.name, item.wire_name) for item in fields] + ([(tag.attribute, tag.key)] if tag else [])
    for name, wire_name in named:
        if name in seen:
            first, second = (pointers.get(key, node.pointer) for key in (seen[name], wire_name))
            raise GenerationError(
                second, f"properties {seen[name]!r} and {wire_name!r} both map to {name} (the first at {first})"
            )
        seen[name] = wire_name
