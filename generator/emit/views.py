"""The views templates print: frozen values computed by `pytypes` and `pynamed`.

A view says what to write (names, annotations, messages, which statement form) and
never which IR kind it came from; the macros in `templates/macros/` lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.ir.assertions import Checks

Bound = int | float | None


@dataclass(frozen=True)
class Call:
    """`var = function(var, ctx, path)`; the runtime's number decoders take the bounds instead of `ctx`."""

    function: str
    bounds: tuple[Bound, Bound] | None = None
    members: str | None = None
    """A string enum's member table: a string it holds is looked up in place, without the call."""
    variants: str | None = None
    """A tagged union's table of variants (by the value of `tag_key`): a dict whose tag it
    holds is decoded by its variant's decoder in place, without the call into the union's."""
    tag_key: str | None = None


@dataclass(frozen=True)
class IfInvalid:
    """One `if` whose condition holds for an invalid value, then the failure: `call`
    when given (it converts or raises), else a DecodeError expecting `expected`.
    The condition is `type(var) is not <json_type>` or one of the bounds
    (`json_type` None: `var is not None`); `strict` alone: any JSON value, checked
    only in strict mode. `or_strict`: a valid value is checked in strict mode too."""

    expected: str = ""
    json_type: str | None = None
    minimum: Bound = None
    maximum: Bound = None
    min_length: int | None = None
    pattern: str | None = None
    call: Call | None = None
    strict: bool = False
    or_strict: bool = False


@dataclass(frozen=True)
class Decoding:
    """Statements that check a value and replace it by the decoded one; exactly one
    of `if_invalid`, `call` and `inner` is the way: `if_invalid` (one `if`), `call`, or `inner`
    after the `checks` when given, else `inner` when the value is not None."""

    if_invalid: IfInvalid | None = None
    call: Call | None = None
    checks: Checks | None = None
    inner: Decoding | None = None

    @property
    def single_if(self) -> bool:
        """Whether this is one `if` statement without `elif`, which a guard can join."""
        return self.if_invalid is not None and not self.if_invalid.or_strict


@dataclass(frozen=True)
class Encoding:
    """The expression that encodes a value to plain JSON types, one of: `function(var)`;
    the value itself (an enum member's `_value_`) when its type is `exact_type`, else
    `_rt.encode_value`; None or `inner`; a list of `items`; a dict of `values`."""

    function: str | None = None
    exact_type: str | None = None
    member_value: bool = False
    inner: Encoding | None = None
    items: Encoding | None = None
    values: Encoding | None = None


@dataclass(frozen=True)
class Conversion:
    """How a builder turns an accepted value into the stored one, one of:
    `function(var)`; a list of converted `items`; a dict of converted `values`; None or `inner`."""

    function: str | None = None
    items: Conversion | None = None
    values: Conversion | None = None
    inner: Conversion | None = None


@dataclass(frozen=True)
class FieldView:
    """What an object's field prints: its annotations, decoding, encoding (None kept as None
    when the field is nullable), builder conversion."""

    annotation: str
    setter_annotation: str
    decoding: Decoding
    encoding: Encoding
    conversion: Conversion | None  # None: the builder stores what it is given
    expected: str  # what an error about the field's value says the schema expects
    # A required field's one `if` that finds its value missing (UNDEFINED is of no JSON
    # type) or invalid, when one does: no default, no null, a type test and no conversion.
    required_check: IfInvalid | None = None
    # What `__init__` takes, and the closed enum whose plain values it turns into members
    # (an open enum keeps them as they are): `kind="read"` is natural code.
    init_annotation: str = ""
    init_enum: str | None = None


@dataclass(frozen=True)
class Container:
    """The decoder function of a list, map or tuple, one of: a list of `item` values
    (`array`), an object of `item` values, an array of exactly the `elements` (`expected`
    in errors)."""

    function: str
    annotation: str
    item: Decoding | None = None
    array: bool = False
    min_items: int | None = None
    skip_invalid_items: bool = False
    elements: tuple[Decoding, ...] = ()
    expected: str = ""


@dataclass(frozen=True)
class MemberRef:
    """An enum member, as `enum.member`."""

    enum: str
    member: str


@dataclass(frozen=True)
class EnumCodec:
    """The decoder of an enum: values of `value_type` that are members, else (an open enum)
    values that decode as `other`; `integral`: a float such as 1.0 is the integer 1 too (the
    member 1, or as an `other` value a float that encodes as it came, like plain integers)."""

    annotation: str
    value_type: str
    integral: bool
    expected: str
    other: Decoding | None
