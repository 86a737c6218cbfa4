"""Schema nodes → named types and type expressions: every `$defs` entry, and every
inline schema that needs a name, becomes an object, enum, union or alias."""

from __future__ import annotations

from collections.abc import Iterable

from generator.errors import GenerationError
from generator.ir import naming, routes, scalars
from generator.ir.assertions import Checks
from generator.ir.checks import checks_of
from generator.ir.context import Context
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
    Route,
    TupleOf,
    TypeExpr,
)
from generator.ir.objects import Objects
from generator.ir.unions import Unions
from generator.schema import keywords, kinds
from generator.schema.load import Node, Schema


class Shapes:
    """Builds the named types of a schema; implements `context.Nested` for its parts."""

    def __init__(self, schema: Schema) -> None:
        self.context = Context(schema)
        self.building: set[str] = set()  # `$defs` names being built (an allOf cycle is an error)
        self.objects = Objects(self)
        self.unions = Unions(self, self.objects)

    def build(self) -> tuple[NamedType, ...]:
        context = self.context
        for name in context.definitions:
            self.definition(name)
        while context.pending:
            name, node = context.pending.pop(0)
            self.define(name, node)
        context.check_alias_cycles()
        context.check_module_names()
        return tuple(context.types.values())

    def definition(self, name: str) -> NamedType:
        python = self.context.python_names[name]
        if python not in self.context.types:
            node = self.context.definitions[name]
            if name in self.building:
                raise GenerationError(node.pointer, f"{name} includes itself through allOf")
            self.building.add(name)
            self.define(python, node, route=routes.route(node))
            self.building.discard(name)
        return self.context.types[python]

    def define(self, name: str, node: Node, route: Route | None = None, *, union_with_null: bool = False) -> Ref:
        """Turn `node` into the named type `name`."""
        context = self.context
        name = context.invent(node.pointer, name)
        keywords.check_supported(node)
        enum = scalars.enum_members(node)
        if enum is not None:
            members, other, used = enum
            checks = self.checks(node, used, name)
            return context.register(EnumType(name, node.pointer, node.description, members, other, route, checks))
        if kinds.is_object(node):
            fields, also, required = self.objects.object_fields(name, node)
            return context.register(
                self.objects.object_type(name, node, fields, route=route, also=also, required=required)
            )
        keyword, variants = kinds.variants(node)
        if variants and (union_with_null or not [v for v in variants if kinds.is_null(v)]):
            return self.union(name, node, variants, route, exclusive=keyword == "oneOf", used={keyword})
        target = self.expr(node, name + "Value")
        return context.register(Alias(name, node.pointer, node.description, target, route))

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
        return self.unions.union(name, node, variants, route, pointer, exclusive=exclusive, used=used)

    def expr(self, node: Node, hint: str, *, allow_not: bool = False) -> TypeExpr:
        """What a property, item or alias holds; `hint` names inline named types."""
        keywords.check_supported(node, allow_not=allow_not)
        if node.schema is False:
            return Checked(AnyValue(), Checks(valid=False))
        meaningful = {key for key in node.keywords - keywords.ANNOTATIONS if not key.startswith("x-")} - {
            "$id",
            "$schema",
        }
        if node.schema is True or not meaningful:
            return AnyValue()
        if node.ref:
            return self.checked(Ref(self.context.ref_name(node)), node, {"$ref"}, hint)
        if scalars.enum_members(node) is not None or kinds.is_object(node):
            return self.define(hint, node)
        keyword, variants = kinds.variants(node)
        if variants:
            rest = [v for v in variants if not kinds.is_null(v)]
            if len(rest) == len(variants):
                return self.define(hint, node)
            if not rest:
                if keyword == "oneOf" and len(variants) > 1:
                    return self.define(hint, node, union_with_null=True)
                return self.checked(Primitive("none"), node, {keyword}, hint)
            inner = self.expr(rest[0], hint) if len(rest) == 1 else self.unions.union_of(hint, node, rest, keyword)
            if keyword == "oneOf" and (len(variants) - len(rest) > 1 or self.accepts_null(inner)):
                return self.define(hint, node, union_with_null=True)
            return self.checked(inner if isinstance(inner, Nullable) else Nullable(inner), node, {keyword}, hint)
        parts = node.children("allOf")
        if parts:
            first = self.expr(parts[0], naming.class_name(hint, "all", "0"))
            return self.checked(first, node, {"allOf"}, hint, also=parts[1:])
        types = node.types
        nullable = "null" in types and len(types) == 2
        types = tuple(t for t in types if t != "null") if nullable else types
        if len(types) != 1:
            return self.checked(AnyValue(), node, set(), hint)
        expr, used = self.single_type(node, types[0], hint)
        return self.checked(Nullable(expr) if nullable else expr, node, used | {"type"}, hint)

    def accepts_null(self, expr: TypeExpr) -> bool:
        """Whether `expr` may decode `null` (conservatively: True when unsure)."""
        if isinstance(expr, Ref):
            named = self.context.types.get(expr.name)
            if isinstance(named, Alias):
                return self.accepts_null(named.target)
            return not isinstance(named, (ObjectType, EnumType))
        if isinstance(expr, Checked):
            return self.accepts_null(expr.inner)
        if isinstance(expr, Primitive):
            return expr.kind == "none"
        return isinstance(expr, (Nullable, AnyValue))

    def single_type(self, node: Node, json_type: str, hint: str) -> tuple[TypeExpr, set[str]]:
        """The structural type of a node with one `type`, and the keywords it enforces."""
        if json_type in scalars.PRIMITIVE_KINDS:
            return scalars.primitive(node, scalars.PRIMITIVE_KINDS[json_type])
        if json_type == "array":
            if "prefixItems" in node.keywords:
                return self.array_of_prefix_items(node, hint)
            items = node.child("items")
            min_items = keywords.count(node, "minItems")
            return ListOf(
                AnyValue() if items is None else self.expr(items, hint + "Item"),
                min_items=min_items,
                skip_invalid_items=node.value("x-deserialize-skip-invalid-items") is True,
            ), {"items", "minItems"}
        if json_type == "object":
            values = node.child("additionalProperties")
            if node.value("patternProperties") is not None:
                return JsonObject(), set()
            if values is None or values.is_true:
                return JsonObject(), {"additionalProperties"}
            return MapOf(self.expr(values, hint + "Value")), {"additionalProperties"}
        raise GenerationError(f"{node.pointer}/type", f"unknown type {json_type!r}")

    def array_of_prefix_items(self, node: Node, hint: str) -> tuple[TypeExpr, set[str]]:
        """A tuple when `prefixItems` fixes the length (`minItems` as many, and `items: false`
        or `maxItems` as many); otherwise any list, the keywords left to the checks."""
        prefix = node.children("prefixItems")
        most = keywords.count(node, "maxItems")
        closed = (node.value("items") is False and (most is None or most >= len(prefix))) or most == len(prefix)
        if keywords.count(node, "minItems") != len(prefix) or not closed:
            return ListOf(AnyValue()), set()
        items = [self.expr(item, naming.class_name(hint, "item", str(index))) for index, item in enumerate(prefix)]
        return TupleOf(tuple(items)), {"prefixItems", "items", "minItems", "maxItems"}

    def checks(
        self, node: Node, used: Iterable[str], hint: str, *, also: Iterable[Node] = (), required: Iterable[str] = ()
    ) -> Checks | None:
        """The keywords of `node` its structural type did not take (`used`), as run-time checks."""
        return checks_of(node, frozenset(used), hint, self.named, self.context.target, also=also, required=required)

    def checked(
        self, expr: TypeExpr, node: Node, used: Iterable[str], hint: str, also: Iterable[Node] = ()
    ) -> TypeExpr:
        checks = self.checks(node, used, hint, also=also)
        return expr if checks is None else Checked(expr, checks)

    def named(self, node: Node, hint: str) -> str:
        """A named type for a subschema that is only checked (allOf beside a type, not, if...)."""
        expr = self.expr(node, hint)
        if isinstance(expr, Ref):
            return expr.name
        name = self.context.invent(node.pointer, hint)
        return self.context.register(Alias(name, node.pointer, None, expr)).name
