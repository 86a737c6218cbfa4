"""What the templates print for each kind of IR type expression.

Every decision that depends on the kind of a type expression is a `match` over the closed
union `ir.TypeExpr`, here or in `exprs` (the answers that need no module), ending in `assert_never`:
mypy names each function a new kind is missing from. The answers are strings (annotations,
names, messages) and the frozen views of `views` (`Decoding`, `Encoding`, `Conversion`),
which the templates lay out without asking which kind they came from.
"""

from __future__ import annotations

from typing import assert_never

from generator.emit.exprs import describe, helper_name, string_expectation
from generator.emit.literals import python_literal
from generator.emit.views import Call, Container, Conversion, Decoding, Encoding, FieldView, IfInvalid, MemberRef
from generator.ir.model import (
    Alias,
    AnyValue,
    Checked,
    EnumType,
    Field,
    JsonObject,
    ListOf,
    MapOf,
    Module,
    Nullable,
    Primitive,
    Ref,
    TupleOf,
    TypeExpr,
    UnionType,
)


class Queries:
    """What the templates ask about the type expressions of one module, answered for each kind."""

    def __init__(self, module: Module) -> None:
        self.types = module.by_name()
        self.path_types = frozenset(module.path_types)

    def resolve(self, expr: TypeExpr) -> TypeExpr:
        """`expr` with references to aliases followed."""
        while isinstance(expr, Ref) and isinstance(alias := self.types[expr.name], Alias):
            expr = alias.target
        return expr

    def is_named(self, expr: TypeExpr) -> bool:
        """Whether `expr`, aliases followed, is a class, enum or union: its decoder returns it typed."""
        return isinstance(self.resolve(expr), Ref)

    def enum_member(self, expr: TypeExpr, value: object) -> MemberRef | None:
        """The member of `value` when `expr` is an enum that has it."""
        expr = self.resolve(expr)
        named = self.types.get(expr.name) if isinstance(expr, Ref) else None
        if isinstance(named, EnumType):
            member = next((member.name for member in named.members if member.value == value), None)
            return None if member is None else MemberRef(named.name, member)
        return None

    def annotation(self, expr: TypeExpr) -> str:
        """The Python annotation of the decoded value; an open enum also holds its plain values."""
        match expr:
            case Primitive():
                return "None" if expr.kind == "none" else expr.kind
            case AnyValue():
                return "Any"
            case JsonObject():
                return "dict[str, Any]"
            case MapOf():
                return f"dict[str, {self.annotation(expr.value)}]"
            case ListOf():
                return f"list[{self.annotation(expr.item)}]"
            case TupleOf():
                return f"tuple[{', '.join(self.annotation(item) for item in expr.items)}]"
            case Nullable():
                return f"{self.annotation(expr.inner)} | None"
            case Checked():
                return self.annotation(expr.inner)
            case Ref():
                named = self.types[expr.name]
                return f"{expr.name} | {named.value_kind}" if isinstance(named, EnumType) and named.open else expr.name
            case _:
                assert_never(expr)

    def input_annotation(self, expr: TypeExpr) -> str:
        """What a builder or setter accepts: the obvious conversions too (a plain value
        for an enum, any iterable for a list, a path for a path type)."""
        match expr:
            case Ref():
                named = self.types[expr.name]
                if isinstance(named, Alias) and expr.name in self.path_types:
                    return "str | os.PathLike[str]"
                if isinstance(named, Alias):
                    target = named.target
                    return self.annotation(target) if isinstance(target, Primitive) else self.input_annotation(target)
                if isinstance(named, EnumType):
                    return f"{expr.name} | {named.value_kind}"
                return expr.name
            case ListOf():
                return f"Iterable[{self.input_annotation(expr.item)}]"
            case TupleOf():
                # Stored as given, all items, for `build()` to check: what needs a conversion is not accepted.
                items = (
                    self.input_annotation(i) if self.conversion(i) is None else self.annotation(i) for i in expr.items
                )
                return f"tuple[{', '.join(items)}]"
            case JsonObject():
                return "Mapping[str, Any]"
            case MapOf():
                return f"Mapping[str, {self.input_annotation(expr.value)}]"
            case Nullable():
                return f"{self.input_annotation(expr.inner)} | None"
            case Checked():
                return self.input_annotation(expr.inner)
            case Primitive() | AnyValue():
                return self.annotation(expr)
            case _:
                assert_never(expr)

    def conversion(self, expr: TypeExpr) -> Conversion | None:
        """How a builder stores an accepted value; None when it stores it unchanged."""
        match expr:
            case Ref():
                named = self.types[expr.name]
                if not isinstance(named, Alias):
                    return None
                return Conversion("os.fspath") if expr.name in self.path_types else self.conversion(named.target)
            case ListOf():
                item = self.conversion(expr.item)
                return Conversion("list") if item is None else Conversion(items=item)
            case MapOf():
                value = self.conversion(expr.value)
                return Conversion("dict") if value is None else Conversion(values=value)
            case TupleOf():
                return None
            case JsonObject():
                return Conversion("dict")
            case Nullable():
                inner = self.conversion(expr.inner)
                return None if inner is None else Conversion(inner=inner)
            case Checked():
                return self.conversion(expr.inner)
            case Primitive() | AnyValue():
                return None
            case _:
                assert_never(expr)

    def decoding(self, expr: TypeExpr) -> Decoding:
        """How a value of `expr` is checked and decoded in place; aliases are inlined."""
        match expr:
            case Ref():
                named = self.types[expr.name]
                if isinstance(named, Alias):
                    return self.decoding(named.target)
                if isinstance(named, EnumType) and named.value_kind == "str" and named.checks is None:
                    # The decoder's first step, a member lookup, in place (see enum.jinja).
                    return Decoding(call=Call(f"_decode_{expr.name}", members=f"_MEMBERS_{expr.name}"))
                if isinstance(named, UnionType) and is_plain_tagged(named):
                    # The union decoder's first step, the variant's lookup by its tag, in place (see union.jinja).
                    variants = f"_VARIANTS_{expr.name}"
                    return Decoding(call=Call(f"_decode_{expr.name}", variants=variants, tag_key=named.tag_key))
                return Decoding(call=Call(f"_decode_{expr.name}"))
            case ListOf() | MapOf() | TupleOf():
                return Decoding(call=Call(f"_decode_{helper_name(expr)}"))
            case Checked():
                return Decoding(checks=expr.checks, inner=self.decoding(expr.inner))
            case Nullable():
                return Decoding(inner=self.decoding(expr.inner))
            case JsonObject():
                return Decoding(if_invalid=IfInvalid("object", "dict", or_strict=True))
            case AnyValue():
                return Decoding(if_invalid=IfInvalid(strict=True))
            case Primitive(kind="float"):
                return Decoding(call=Call("_rt.decode_number", (expr.minimum, expr.maximum)))
            case Primitive(kind="int"):
                call = Call("_rt.decode_int", (expr.minimum, expr.maximum))
                return Decoding(
                    if_invalid=IfInvalid(json_type="int", minimum=expr.minimum, maximum=expr.maximum, call=call)
                )
            case Primitive(kind="none"):
                return Decoding(if_invalid=IfInvalid("null"))
            case Primitive(kind="str") if expr.min_length or expr.pattern:
                expected = string_expectation(expr)
                return Decoding(if_invalid=IfInvalid(expected, "str", min_length=expr.min_length, pattern=expr.pattern))
            case Primitive():
                return Decoding(if_invalid=IfInvalid(describe(expr), expr.kind))
            case _:
                assert_never(expr)

    def encoding(self, expr: TypeExpr) -> Encoding:
        """How a value of `expr` is encoded; values of the declared type take a fast path."""
        match expr:
            case Ref():
                named = self.types[expr.name]
                if isinstance(named, Alias):
                    return self.encoding(named.target)
                if isinstance(named, EnumType):
                    return Encoding(exact_type=expr.name, member_value=True)
                return Encoding(f"_encode_{expr.name}")
            case Primitive(kind="none") | AnyValue() | JsonObject() | TupleOf():
                return Encoding("_rt.encode_value")  # a tuple of any length: every item, none dropped
            case Primitive():
                return Encoding(exact_type=expr.kind)
            case Checked():
                return self.encoding(expr.inner)
            case Nullable():
                return Encoding(inner=self.encoding(expr.inner))
            case ListOf():
                return Encoding(items=self.encoding(expr.item))
            case MapOf():
                return Encoding(values=self.encoding(expr.value))
            case _:
                assert_never(expr)

    def container(self, expr: TypeExpr) -> Container | None:
        """The decoder function of its own that a list or map type has; None for other kinds."""
        function, annotation = f"_decode_{helper_name(expr)}", self.annotation(expr)
        match expr:
            case ListOf():
                item = self.decoding(expr.item)
                return Container(function, annotation, item, True, expr.min_items, expr.skip_invalid_items)
            case MapOf():
                return Container(function, annotation, self.decoding(expr.value))
            case TupleOf():
                elements = tuple(self.decoding(item) for item in expr.items)
                return Container(function, annotation, elements=elements, expected=describe(expr))
            case Primitive() | AnyValue() | JsonObject() | Ref() | Nullable() | Checked():
                return None
            case _:
                assert_never(expr)

    def closed_enum(self, expr: TypeExpr) -> EnumType | None:
        """The closed enum `expr` is, aliases followed."""
        expr = self.resolve(expr)
        named = self.types[expr.name] if isinstance(expr, Ref) else None
        return named if isinstance(named, EnumType) and not named.open else None

    def field(self, item: Field) -> FieldView:
        """What an object's field prints: presence and nullability on top of its type's views."""
        annotation, accepted = self.annotation(item.type), self.input_annotation(item.type)
        enum = self.closed_enum(item.type)
        values = ", ".join(python_literal(member.value) for member in enum.members) if enum else ""
        init_annotation = _present(item, f"{enum.name} | Literal[{values}]" if enum else annotation)
        annotation = _present(item, annotation)
        if accepted == "None" and not item.required:
            accepted = "Undefined | None"
        else:
            accepted += (" | Undefined" if not item.required else "") + (" | None" if item.nullable else "")
        decoding, encoding = self.decoding(item.type), self.encoding(item.type)
        check = decoding.if_invalid if decoding.single_if else None
        plain = item.required and not (item.default_on_error or item.nullable or item.default_on_null)
        return FieldView(
            annotation,
            accepted,
            decoding,
            Encoding(inner=encoding) if item.nullable else encoding,
            self.conversion(item.type),
            describe(item.type),
            check if plain and check is not None and check.json_type is not None and check.call is None else None,
            init_annotation,
            None if enum is None else enum.name,
        )


def _present(item: Field, annotation: str) -> str:
    """The annotation of `item`'s attribute: its type's, with its presence and nullability."""
    if item.required:
        return annotation + (" | None" if item.nullable else "")
    if not item.nullable:
        return "Undefined | None" if annotation == "None" else f"{annotation} | Undefined"
    return f"MaybeUndefined[{annotation}]"


def is_plain_tagged(union: UnionType) -> bool:
    """Whether the decoder of `union` does nothing but call the variant its tag names when
    there is one: a tagged union without untagged variants or checks of its own."""
    return union.tag_key is not None and union.checks is None and all(v.tag is not None for v in union.variants)
