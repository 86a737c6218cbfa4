"""Unions: tagged variants dispatched on their tag, an open fallback for unknown tags,
untagged variants tried in schema order; and the names of the variants."""

from __future__ import annotations

from dataclasses import replace

from generator.errors import GenerationError
from generator.ir import naming, scalars
from generator.ir.context import Nested
from generator.ir.model import EnumType, ObjectType, Ref, Route, Tag, UnionType, Variant
from generator.ir.objects import Objects
from generator.schema import keywords, kinds
from generator.schema.load import Node


class Unions:
    def __init__(self, shapes: Nested, objects: Objects) -> None:
        self.shapes = shapes
        self.context = shapes.context
        self.objects = objects

    def union(
        self,
        name: str,
        node: Node,
        variants: list[Node],
        route: Route | None,
        pointer: str | None = None,
        *,
        exclusive: bool,
        used: set[str] | None,
    ) -> Ref:
        """Tagged variants dispatch on `tag_key`; an open fallback takes unknown tags
        (when its `not` excludes exactly the known ones; otherwise it is untagged);
        the remaining (untagged) variants are tried in schema order. `used`: the
        keywords the union takes from `node` (None: `node` is an object that owns the rest)."""
        context, objects = self.context, self.objects
        pointer = pointer or node.pointer
        name = context.invent(pointer, name)
        tag_key = kinds.tag_key(variants)
        untagged = [
            variant
            for variant in variants
            if tag_key is None or not (tag_key in kinds.const_keys(variant) or kinds.is_fallback(variant, tag_key))
        ]
        hints = naming.variant_names(
            name, [variant_words(variant) for variant in untagged], [position(variant) for variant in untagged]
        )
        hint_of = {variant.pointer: hint for variant, hint in zip(untagged, hints, strict=True)}
        tags = {dict(v.properties())[tag_key].value("const") for v in variants if tag_key in kinds.const_keys(v)}
        choices: list[Variant] = []
        fallback_name = None
        seen: dict[str, str] = {}
        for variant in variants:
            if tag_key is not None and tag_key in kinds.const_keys(variant):
                keywords.check_supported(variant)
                value = dict(variant.properties())[tag_key].value("const")
                if value in seen:
                    raise GenerationError(variant.pointer, f"tag {tag_key}={value!r} is also used by {seen[value]}")
                seen[value] = variant.pointer
                target = self.wrapped_target(variant, tag_key)
                variant_name = context.invent(
                    variant.pointer, naming.part_name(name, value, "variant"), naming.class_name(name, value, "variant")
                )
                tag = Tag(tag_key, naming.attribute_name(tag_key), value)
                if target is None:
                    fields, also, required = objects.object_fields(variant_name, variant, skip=frozenset({tag_key}))
                else:
                    fields, also, required = list(context.types[target].fields), [], []  # type: ignore[union-attr]
                obj = objects.object_type(variant_name, variant, fields, tag=tag, also=also, required=required)
                obj = replace(obj, doc=variant.description or self.wrapped_doc(variant), base=target)
                choices.append(Variant(context.register(obj), tag=value))
            elif tag_key is not None and kinds.is_fallback(variant, tag_key):
                if fallback_name is not None:
                    raise GenerationError(variant.pointer, f"a second open fallback variant (first: {fallback_name})")
                keywords.check_supported(variant, allow_not=True)
                other_name = context.invent(variant.pointer, naming.class_name(name, variant.title or "other"))
                fields, also, required = objects.object_fields(other_name, variant)
                exact = kinds.excludes_exactly(variant, tag_key, tags)
                other = context.register(
                    objects.object_type(other_name, variant, fields, also=also, required=required, allow_not=exact)
                )
                if exact:
                    fallback_name = other_name
                else:  # its `not` is checked, and it is tried like an untagged variant
                    choices.append(Variant(other))
            else:
                tag_schema = dict(variant.properties()).get(tag_key) if tag_key is not None else None
                if tag_schema is not None and tag_schema.types != ("null",):
                    raise GenerationError(variant.pointer, f"variant declares the tag {tag_key!r} without a const")
                choices.append(Variant(self.shapes.expr(variant, hint_of[variant.pointer])))
        checks = None if used is None else self.shapes.checks(node, used, name)
        return context.register(
            UnionType(name, pointer, node.description, tuple(choices), tag_key, fallback_name, route, exclusive, checks)
        )

    def union_of(self, name: str, node: Node, variants: list[Node], keyword: str) -> Ref:
        """The non-null `variants` of `node`'s `keyword`: an enum when they are constants, else a union."""
        name = self.context.invent(node.pointer, name)
        enum = scalars.enum_members_of(node, variants, exclusive=keyword == "oneOf")
        if enum is not None:
            return self.context.register(EnumType(name, node.pointer, node.description, enum[0], enum[1]))
        return self.union(name, node, variants, None, exclusive=keyword == "oneOf", used=None)

    def wrapped_target(self, variant: Node, tag_key: str | None) -> str | None:
        """The object a tagged variant wraps when it adds nothing but its tag."""
        parts = variant.children("allOf")
        if tag_key is None or len(parts) != 1 or not parts[0].ref:
            return None
        if [key for key, _ in variant.properties()] != [tag_key]:
            return None
        if variant.keywords - {"type", "properties", "required", "allOf"} - keywords.ANNOTATIONS:
            return None
        name = self.context.resolve_ref(parts[0])
        target = self.shapes.definition(name) if name in self.context.definitions else None
        if not isinstance(target, ObjectType) or tag_key in {item.wire_name for item in target.fields}:
            return None
        if target.keep_unknown == "reject" or target.checks or target.tag:
            return None
        return target.name

    def wrapped_doc(self, variant: Node) -> str | None:
        for part in variant.children("allOf"):
            if part.ref:
                return self.context.schema.resolve(f"{part.pointer}/$ref", part.ref).description
        return None


def variant_words(variant: Node) -> list[tuple[str, ...] | None]:
    """What an untagged variant may be named after, most telling first: its title,
    its constant, its required keys, its property names, its JSON type."""
    const = variant.value("const")
    keys = tuple(key for key, _ in variant.properties())
    return [
        (variant.title,) if variant.title else None,
        (const,) if isinstance(const, str) else None,
        ("with", *variant.required) if variant.required else None,
        ("with", *keys) if keys else None,
        variant.types or None,
        ("variant",),
    ]


def position(variant: Node) -> list[str]:
    """Where a variant is in its union: its keyword and index (`anyOf`, `1`)."""
    return variant.pointer.split("/")[-2:]
