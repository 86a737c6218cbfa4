"""What the templates ask about named types (objects, enums, unions) beyond their type expressions."""

from __future__ import annotations

from generator.emit.exprs import describe, expressions
from generator.emit.literals import python_literal
from generator.emit.pytypes import Queries
from generator.emit.views import EnumCodec
from generator.ir.model import Alias, EnumType, NamedType, ObjectType, Ref, TypeExpr, UnionType

ENUM_VALUES = {"str": "a string", "int": "an integer"}


class NamedQueries:
    """Questions about the named types of one module."""

    def __init__(self, queries: Queries) -> None:
        self.queries = queries
        self.types = queries.types
        # Objects some tagged variant subclasses: their encoders take the variant's dict, tag first.
        self.bases = {named.base for named in self.types.values() if isinstance(named, ObjectType) and named.base}

    def variant_decoder(self, variant: TypeExpr) -> str:
        """The decoder a tagged union calls for `variant`, with the variant's class and keys:
        the base type's for a variant that only adds its tag (the union has read the tag,
        which is all the variant's own decoder would check first)."""
        assert isinstance(variant, Ref), variant
        named = self.types[variant.name]
        if isinstance(named, ObjectType) and named.base and not named.checks:
            return f"_decode_{named.base}"
        return f"_decode_{variant.name}"

    @staticmethod
    def shares_object(named: NamedType) -> bool:
        """Whether the Python object of `named` may be another type's too: an alias
        or union evaluates to its annotation (`str`, `int | str`), while classes and
        enums are objects of their own."""
        return isinstance(named, (UnionType, Alias))

    def is_recursive(self, union: UnionType) -> bool:
        """Whether `union` can contain itself: trying its untagged variants in turn
        then repeats work at every level of nesting, unless each match is remembered."""
        seen: set[str] = set()
        pending = [union.name]
        while pending:
            for expr in expressions(self.types[pending.pop()]):
                if isinstance(expr, Ref) and expr.name not in seen:
                    if expr.name == union.name:
                        return True
                    seen.add(expr.name)
                    pending.append(expr.name)
        return False

    def holds_models_only(self, union: UnionType) -> bool:
        """Whether every value of `union` is an object class instance (so it encodes itself)."""

        def is_model(expr: TypeExpr) -> bool:
            named = self.types.get(expr.name) if isinstance(expr, Ref) else None
            if isinstance(named, Alias):
                return is_model(named.target)
            if isinstance(named, UnionType):
                return self.holds_models_only(named)
            return isinstance(named, ObjectType)

        fallback = [Ref(union.fallback)] if union.fallback else []
        return all(is_model(expr) for expr in [variant.type for variant in union.variants] + fallback)

    @staticmethod
    def wire_keys(obj: ObjectType) -> list[str]:
        keys = [item.wire_name for item in obj.fields if not item.flatten]
        return keys + ([obj.tag.key] if obj.tag else [])

    @staticmethod
    def unproven_keys(obj: ObjectType) -> int:
        """How many of `wire_keys(obj)` the decoder of `obj` does not prove present: those of
        optional fields, and of required ones that a lenient decoder may default.

        The keys it proves present are known, and so is the tag that a variant's caller
        checked before passing the variant's larger set of known keys: an object with
        `len(known) - unproven_keys(obj)` keys has no unknown key, which a length tells
        without looking any key up."""
        proven = sum(1 for item in obj.fields if item.required and not item.default_on_error and not item.flatten)
        return len(NamedQueries.wire_keys(obj)) - proven - (1 if obj.tag else 0)

    @staticmethod
    def proven_keys(obj: ObjectType) -> int:
        """How many of `wire_keys(obj)` the decoder of `obj` proves present (with the tag):
        an object of that many keys has no unknown key. A decoder takes it as `proven`,
        the default for its own known keys; a tagged union passes its variant's."""
        return len(NamedQueries.wire_keys(obj)) - NamedQueries.unproven_keys(obj)

    def variant_proven_keys(self, variant: TypeExpr) -> int:
        """`proven_keys` of the object class `variant` of a tagged union."""
        assert isinstance(variant, Ref), variant
        named = self.types[variant.name]
        assert isinstance(named, ObjectType), named
        return self.proven_keys(named)

    @staticmethod
    def required_only_path(obj: ObjectType) -> bool:
        """Whether the decoder of `obj` starts with a path for an object of its required keys
        alone, the commonest shape: no optional key looked up, no unknown key sought.

        It takes the path when the object has `len(known) - unproven_keys(obj)` keys and
        every required one is present (with its one-`if` check passed): then no other key
        is present, and decoding the required fields in schema order is all the general path
        would do. Those checks have no side effects, so a failing one falls through to the
        general path, which gives the error (or the salvage) with its path. Only for objects
        whose required fields a lenient decoder never defaults, without checks of the whole
        object or flattened unions, and with optional fields to skip."""
        fields = [item for item in obj.fields if not item.flatten]
        return (
            obj.checks is None
            and len(fields) == len(obj.fields)
            and any(not item.required for item in fields)
            and any(item.required for item in fields)
            and all(not (item.default_on_error or item.default_on_null) for item in fields if item.required)
        )

    @staticmethod
    def untagged_descriptions(union: UnionType) -> list[str]:
        return [describe(variant.type) for variant in union.variants if variant.tag is None]

    @staticmethod
    def tag_expectation(union: UnionType) -> str:
        return "one of " + ", ".join(repr(variant.tag) for variant in union.variants if variant.tag is not None)

    def enum_codec(self, enum: EnumType) -> EnumCodec:
        """How the decoder of `enum` reads a value and what its error expects."""
        if enum.other is None:
            expected = "one of " + ", ".join(python_literal(member.value) for member in enum.members)
        else:
            expected = f"{enum.name} ({ENUM_VALUES[enum.value_kind]})"
        return EnumCodec(
            self.queries.annotation(Ref(enum.name)),
            enum.value_kind,
            enum.value_kind == "int",
            expected,
            None if enum.other is None else self.queries.decoding(enum.other),
        )
