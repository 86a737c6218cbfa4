"""Shared runtime of the generated package: tri-state presence, errors, and
the decode/encode helpers the generated code calls. Standard library only."""

from __future__ import annotations

import decimal
import importlib
import json
import json.encoder
import json.scanner
import math
import re
import reprlib
from collections.abc import Callable, Iterator
from enum import Enum, EnumMeta
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Literal, TypeAlias, TypeVar, cast

if TYPE_CHECKING:
    import dataclasses

__all__ = [
    "UNDEFINED",
    "Builder",
    "DecodeError",
    "MaybeUndefined",
    "Model",
    "Salvage",
    "Undefined",
]

LOGGER: Final = __name__.rpartition(".")[0]
"""The logger that lenient decoding reports salvages to (`logging` is imported on the first)."""


class _UndefinedType(EnumMeta):
    """`Undefined()` returns the one member, as it did before `Undefined` was an Enum."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return super().__call__(*args, **kwargs) if args or kwargs else cls.UNDEFINED  # type: ignore[attr-defined]


class Undefined(Enum, metaclass=_UndefinedType):
    """The type of `UNDEFINED`: a property that is absent from the JSON object.

    A one-member Enum, so `x is not UNDEFINED` narrows `T | Undefined` to `T`
    in mypy and pyright. Falsy; `copy`, `deepcopy` and `pickle` keep the member."""

    UNDEFINED = "UNDEFINED"

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> Literal[False]:  # so that `value or default` drops Undefined in mypy
        return False


UNDEFINED: Final = Undefined.UNDEFINED

T = TypeVar("T")
MaybeUndefined: TypeAlias = T | Undefined | None
"""A value, `None` for JSON `null`, or `UNDEFINED` for an absent property."""

Path: TypeAlias = "tuple[()] | tuple[Path, str | int]"
"""Where a value sits, built lazily as (parent, key) pairs; only errors print it."""

ROOT: Final[Path] = ()


class _Missing:
    """`found` of a DecodeError about a required property that is absent."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "nothing (the property is missing)"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def format_path(path: Path) -> str:
    """`$.update.content[2].type` for a (parent, key) chain."""
    keys: list[str | int] = []
    while path:
        path, key = path
        keys.append(key)
    parts = ["$"]
    for key in reversed(keys):
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif key.isidentifier():
            parts.append(f".{key}")
        else:
            parts.append(f"[{json.dumps(key, ensure_ascii=False)}]")
    return "".join(parts)


DESCRIBE_WIDTH: Final = 60
"""The characters of a value a description shows before `...`."""
_PRINTABLE_INT_BITS: Final = 4 * DESCRIBE_WIDTH
"""Past this many bits an integer has more digits than a description shows (and past Python's
limit on digits converted to text, it cannot be converted at all)."""


def describe(value: object) -> str:
    """A short description of a decoded JSON value, for error messages: its JSON type, and its
    first `DESCRIBE_WIDTH` characters in Python's notation. Bounded in time and size whatever the
    value: only the part shown is visited (a whole `repr()` of a deep or wide message under the
    size limit took seconds to minutes, longest on the newest Pythons)."""
    if value is MISSING:
        return repr(value)
    if value is None:
        return "null"
    kinds = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string"}
    kind = kinds.get(type(value))
    if kind is None:
        kind = "array" if isinstance(value, list) else "object" if isinstance(value, dict) else type(value).__name__
    if type(value) is int and value.bit_length() > _PRINTABLE_INT_BITS:
        return f"{kind} too large to print"
    text = ""
    for piece in _pieces(value):
        text += piece
        if len(text) > DESCRIBE_WIDTH:
            return f"{kind} {text[:DESCRIBE_WIDTH]}..."
    return f"{kind} {text}"


class _Punctuation(str):
    """Text of a container's notation (brackets, separators), as opposed to a value."""


def _pieces(value: object) -> Iterator[str]:
    """`repr(value)` piece by piece, depth first with a stack of its own (no recursion limit),
    each container's items taken lazily: a caller that stops early visits nothing more."""
    stack: list[Iterator[object]] = [iter((value,))]
    while stack:
        item = next(stack[-1], _Punctuation())
        if type(item) is _Punctuation:
            if item:
                yield item
            else:  # the end of that iterator
                stack.pop()
        elif type(item) is str:
            yield repr(item[: DESCRIBE_WIDTH + 1])
        elif type(item) is int and item.bit_length() > _PRINTABLE_INT_BITS:
            yield "<integer too large to print>"
        elif isinstance(item, list):
            stack.append(_list_pieces(item))
        elif isinstance(item, dict):
            stack.append(_dict_pieces(item))
        else:  # a number, a boolean, null, or what a caller decoded it to
            yield reprlib.repr(item)


def _list_pieces(items: list[Any]) -> Iterator[object]:
    yield _Punctuation("[")
    for index, item in enumerate(items):
        if index:
            yield _Punctuation(", ")
        yield item
    yield _Punctuation("]")


def _dict_pieces(items: dict[Any, Any]) -> Iterator[object]:
    yield _Punctuation("{")
    for index, (key, item) in enumerate(items.items()):
        if index:
            yield _Punctuation(", ")
        yield key
        yield _Punctuation(": ")
        yield item
    yield _Punctuation("}")


PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800  # from the range LSP reserves, as ACP answers a cancelled request
_ERROR_TITLES: Final = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
}


class DecodeError(ValueError):
    """A value that does not match the schema.

    `path` says where (`$.update.content[2].type`), `expected` what the
    schema wants there and `found` what the input held. `code` is the JSON-RPC
    error code to answer with: -32602 (invalid params) for a value, -32600 for a
    malformed envelope, -32601 for an unknown method."""

    def __init__(self, path: Path | str, expected: str, found: object, *, code: int = INVALID_PARAMS) -> None:
        self.path = path if isinstance(path, str) else format_path(path)
        self.expected = expected
        self.found = found
        self.code = code
        super().__init__(f"{self.path}: expected {expected}, found {describe(found)}")

    @property
    def message(self) -> str:
        """The message of the JSON-RPC error to answer with: the code's title, where and what."""
        return f"{_ERROR_TITLES.get(self.code, 'Error')}: {self}"

    @property
    def data(self) -> dict[str, Any]:
        """The `data` of the JSON-RPC error to answer with: `{"path": ..., "expected": ..., "found": ...}`."""
        return {"path": self.path, "expected": self.expected, "found": describe(self.found)}

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.path, self.expected, self.found), {"code": self.code}


class Salvage:
    """An invalid value that lenient decoding replaced by its default or skipped,
    as the schema's `x-deserialize-*` hints allow.

    Immutable, compared and hashed by value, picklable: what `@dataclass(frozen=True)`
    made, written out (importing `dataclasses` would double the package's import time)."""

    __slots__ = ("error", "path", "reason")
    __match_args__ = ("path", "reason", "error")
    path: str
    reason: str
    error: DecodeError

    def __init__(self, path: str, reason: str, error: DecodeError) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "error", error)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: Salvage is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: Salvage is immutable")

    def _values(self) -> tuple[str, str, DecodeError]:
        return (self.path, self.reason, self.error)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Salvage) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"Salvage(path={self.path!r}, reason={self.reason!r}, error={self.error!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return Salvage, self._values()


SalvageCallback = Callable[[Salvage], None]
Decoder = Callable[[Any, "Context", Path], T]
"""A generated decoder: (JSON value, options, path) → typed value."""
TaggedVariant: TypeAlias = "tuple[Callable[..., Any], type, frozenset[str], int]"
"""A tagged union's entry for a tag: the decoder it calls with (JSON value, options, path,
class, known keys, proven keys), and the variant's class, known keys and how many of
them a decoded value certainly has (so that a length tells it has no other)."""


class Context:
    """Decoding options, passed down the generated decoders.

    `matches` remembers what the recursive untagged unions made of each value
    they saw in this decoding, so that trying their variants stays linear."""

    __slots__ = ("matches", "on_salvage", "strict")

    def __init__(self, strict: bool, on_salvage: SalvageCallback | None, matches: dict[Any, Any] | None = None) -> None:
        self.strict = strict
        self.on_salvage = on_salvage
        self.matches = matches

    def remembering(self) -> Context:
        """This context with a memory of union matches (a new one for each decoding)."""
        return self if self.matches is not None else Context(self.strict, self.on_salvage, {})

    def probe(self) -> Context:
        """Strict and silent, sharing the memory: for trying the variants of an untagged union."""
        return PROBE if self.matches is None else Context(True, None, self.matches)

    def salvage(self, error: DecodeError, default: Any, action: str = "used the default") -> Any:
        """Strict: raise `error`. Lenient: report it and return `default`."""
        if self.strict:
            raise error
        if self.on_salvage is not None:
            report = Salvage(error.path, f"{action}: {error}", error)
            self.on_salvage(report)
        import logging

        logging.getLogger(LOGGER).warning("%s; %s", error, action)
        return default

    def skip(self, error: DecodeError) -> None:
        """An invalid array item: strict raises, lenient reports and drops it."""
        self.salvage(error, None, "skipped the item")


STRICT: Final = Context(True, None)
LENIENT: Final = Context(False, None)
PROBE: Final = STRICT
"""Strict and silent: for trying the variants of an untagged union."""


def remembered(ctx: Context, name: str, match: Decoder[T], data: Any, path: Path) -> T:
    """`match(data, ctx, path)` once per value, union and mode in one decoding: a
    recursive union whose variants are tried in turn would otherwise decode the same
    nested value again for each variant at each level (exponential in the depth).

    The key holds the path (equal paths, not the same path object: each variant builds
    its own), so a value that the input holds at two places is decoded for each place."""
    matches = ctx.matches
    assert matches is not None
    key = (id(data), path, name, ctx.strict)
    known: Any = matches.get(key)
    if known is None:
        # `data` is kept alive with the outcome, so no other object takes its id.
        try:
            known = (data, match(data, ctx, path), None)
        except DecodeError as error:
            known = (data, None, error)
        matches[key] = known
    if known[2] is not None:
        raise known[2]
    result: T = known[1]
    return result


_FIELD_NAMES: Final[dict[type, tuple[str, ...]]] = {}


def _init_of(cls: type) -> Any:
    """The `__init__` that instances of `cls` run (object's when no class defines one)."""
    return next(vars(klass)["__init__"] for klass in cls.__mro__ if "__init__" in vars(klass))


def field_names(cls: type) -> tuple[str, ...]:
    """The attributes of a generated class in schema order: the keyword-only parameters
    of its `__init__` (its `__slots__` are sorted)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        code = getattr(_init_of(cls), "__code__", None)
        names = _FIELD_NAMES[cls] = code.co_varnames[1 : 1 + code.co_kwonlyargcount] if code is not None else ()
    return names


class _DataclassFields:
    """`__dataclass_fields__` of a generated class, made on first use from its `__init__`
    (keyword-only parameters, annotations, defaults), so that `dataclasses.fields`,
    `replace`, `asdict` and `is_dataclass` see the class as `@dataclass` would have made it."""

    def __get__(self, instance: object, owner: type) -> dict[str, Any]:
        if "__dataclass_fields__" in vars(owner):  # Model itself, which is no dataclass
            raise AttributeError("__dataclass_fields__")
        import dataclasses

        defaults = getattr(_init_of(owner), "__kwdefaults__", None) or {}
        annotations = {
            name: annotation
            for klass in reversed(owner.__mro__)
            for name, annotation in vars(klass).get("__annotations__", {}).items()
        }

        def field(name: str) -> Any:
            if name == "unknown_properties":
                return dataclasses.field(default_factory=dict)
            return dataclasses.field(default=defaults[name]) if name in defaults else dataclasses.field()

        spec = [(name, annotations.get(name, Any), field(name)) for name in field_names(owner)]
        made = dataclasses.make_dataclass(owner.__name__, spec, kw_only=True)
        fields = {item.name: item for item in dataclasses.fields(made)}
        type.__setattr__(owner, "__dataclass_fields__", fields)  # made once per class
        return fields


class Model:
    """Base of every generated object class: what `@dataclass(slots=True, kw_only=True)`
    would add beyond the `__slots__` and `__init__` each class writes out (`==`, `repr`,
    unhashable, and `dataclasses.fields`/`replace`/`asdict` through `__dataclass_fields__`,
    built on first use), and the JSON methods."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    # Set on every class when the codec module is imported (see `codec`).
    _acp_decode: ClassVar[Callable[..., Any]]
    _acp_encode: ClassVar[Callable[[Any], dict[str, Any]]]
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    else:
        __dataclass_fields__ = _DataclassFields()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = field_names(type(self))
        return [getattr(self, name) for name in names] == [getattr(other, name) for name in names]

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in field_names(type(self)))
        return f"{type(self).__qualname__}({values})"

    @classmethod
    def from_dict(cls: type[M], data: Any, *, strict: bool = False, on_salvage: SalvageCallback | None = None) -> M:
        """Decode a JSON-compatible value (what `json.loads` returns) as `cls`."""
        ctx = LENIENT if on_salvage is None and not strict else context(strict, on_salvage)
        try:
            result: M = cls._acp_decode(data, ctx, ROOT, cls)
        except RecursionError:
            raise too_deep() from None
        return result

    @classmethod
    def from_json(
        cls: type[M], text: str | bytes, *, strict: bool = False, on_salvage: SalvageCallback | None = None
    ) -> M:
        """Decode JSON text (str or UTF-8 bytes) as `cls`."""
        data = parse_json(text)
        ctx = LENIENT if on_salvage is None and not strict else context(strict, on_salvage)
        try:
            result: M = cls._acp_decode(data, ctx, ROOT, cls)
        except RecursionError:
            raise too_deep() from None
        return result

    def to_dict(self) -> dict[str, Any]:
        """The JSON value: plain dicts, lists, strings, numbers, booleans and None
        (enum members and other subclasses become their plain values)."""
        return type(self)._acp_encode(self)

    def to_json(self) -> str:
        return dump_json(self.to_dict())


def _decode_on_first_use(data: Any, ctx: Context, path: Path, cls: type[Model]) -> Any:
    """`Model._acp_decode` until the codec gives each class its own: imports the codec, then decodes."""
    _codec_of(cls)
    if cls._acp_decode is _decode_on_first_use:
        raise TypeError(f"{cls.__name__} is not a type of this package")
    return cls._acp_decode(data, ctx, path, cls)


def _encode_on_first_use(value: Model) -> dict[str, Any]:
    """`Model._acp_encode` until the codec gives each class its own: imports the codec, then encodes."""
    _codec_of(type(value))
    if type(value)._acp_encode is _encode_on_first_use:
        raise TypeError(f"{type(value).__name__} is not a type of this package")
    return type(value)._acp_encode(value)


Model._acp_decode = _decode_on_first_use
Model._acp_encode = _encode_on_first_use


def is_generated(cls: type[Model]) -> bool:
    """Whether the codec knows `cls` (a generated class or a subclass of one)."""
    return cls._acp_decode is not _decode_on_first_use


_codecs: dict[str, Any] = {}


def codec(package: str) -> Any:
    """The `_codec` module (decoders, encoders, `decode`) of the generated package `package`,
    imported on first use: importing the types does not compile or run the codec. Packages
    generated together share this module, each with a codec of its own, found by its name."""
    module = _codecs.get(package)
    if module is None:
        module = _codecs[package] = importlib.import_module(f"{package}._codec")
    return module


def _codec_of(cls: type[Model]) -> None:
    """Import the codec of the package that defines `cls`, or the generated class it derives
    from: the first class of its MRO defined in a `<package>.models` that has a `_codec`."""
    for klass in cls.__mro__:
        package, _, name = klass.__module__.rpartition(".")
        if klass is not Model and name == "models" and package:
            try:
                codec(package)
            except ModuleNotFoundError as error:
                if error.name not in (package, f"{package}._codec"):
                    raise
                continue
            return


M = TypeVar("M", bound=Model)


class Builder(Generic[M]):
    """Base of the generated builders: collects attribute values, then `build()`."""

    __slots__ = ("_cls", "_values")

    def __init__(self, cls: type[M], values: dict[str, Any]) -> None:
        self._cls = cls
        self._values = values

    def build(self) -> M:
        """The value, validated like strict decoding: a DecodeError names the bad property."""
        value = self._cls(**self._values)
        try:
            data = type(value)._acp_encode(value)
        except (AttributeError, TypeError) as error:
            raise DecodeError(ROOT, f"values of the declared types for {self._cls.__name__}", str(error)) from None
        result: M = run_decoder(self._cls._acp_decode, data, True, None, self._cls)
        return result


def run_decoder(
    decoder: Callable[..., T], data: Any, strict: bool, on_salvage: SalvageCallback | None, *args: Any
) -> T:
    """`decoder(data, ctx, ROOT, *args)`; an object decoder takes the class to build as `args`.
    (`Model.from_dict` and `from_json` do the same inline: they are the hot path.)"""
    try:
        return decoder(data, context(strict, on_salvage), ROOT, *args)
    except RecursionError:
        raise too_deep() from None


def context(strict: bool, on_salvage: SalvageCallback | None) -> Context:
    """The context of a decoding with these options (shared unless there is a callback)."""
    return (STRICT if strict else LENIENT) if on_salvage is None else Context(strict, on_salvage)


def too_deep() -> DecodeError:
    """The error for a value nested deeper than the decoders' recursion can go."""
    return DecodeError(ROOT, "a value nested less deeply than the recursion limit", "deeper nesting")


def decoders_by_type(
    decoders: dict[str, tuple[Any, Decoder[Any]]], shared: frozenset[str]
) -> dict[Any, Decoder[Any] | tuple[str, ...]]:
    """The table of `decode(T, ...)`: Python object → its decoder.

    A class or enum is its own object. An alias or union (`shared`) is
    whatever its annotation evaluates to, which can be equal to another's (`int | str`
    for several ids): such an object maps to the names that share it, and `decode`
    asks for one of them. An alias of a class decodes as the class."""
    table: dict[Any, Decoder[Any] | tuple[str, ...]] = {
        obj: decoder for name, (obj, decoder) in decoders.items() if name not in shared
    }
    sharing: dict[Any, list[str]] = {}
    for name in decoders:
        if name in shared and decoders[name][0] not in table:
            sharing.setdefault(decoders[name][0], []).append(name)
    for obj, names in sharing.items():
        table[obj] = decoders[names[0]][1] if len(names) == 1 else tuple(names)
    return table


def decode_by(
    decoders: dict[str, tuple[Any, Decoder[Any]]],
    by_type: dict[Any, Decoder[Any] | tuple[str, ...]],
    type_or_name: Any,
    data: Any,
    strict: bool,
    on_salvage: SalvageCallback | None,
) -> Any:
    """`models.decode` over a package's tables (`decoders` by `$defs` name, `by_type` from
    `decoders_by_type`): by `$defs` name, by class, or by the object of an enum, alias or union."""
    if isinstance(type_or_name, str):
        entry = decoders.get(type_or_name)
        if entry is None:
            raise TypeError(f"{type_or_name!r} is not a type of this package")
        return run_decoder(entry[1], data, strict, on_salvage)
    if isinstance(type_or_name, type) and issubclass(type_or_name, Model) and is_generated(type_or_name):
        return run_decoder(type_or_name._acp_decode, data, strict, on_salvage, type_or_name)
    try:
        decoder = by_type.get(type_or_name)
    except TypeError:
        decoder = None
    if decoder is None:
        raise TypeError(f"{type_or_name!r} is not a type of this package")
    if isinstance(decoder, tuple):
        raise TypeError(
            f"{type_or_name!r} is the type of several $defs ({', '.join(decoder)}):"
            f" pass the name instead, as in decode({decoder[0]!r}, data)"
        )
    return run_decoder(decoder, data, strict, on_salvage)


def lazy_attribute(
    package: str, namespace: dict[str, Any], name: str, modules: frozenset[str], defined_in: dict[str, str]
) -> Any:
    """A package's `__getattr__(name)`: one of its `modules` imported on first use, or a public
    name one of them defines (`defined_in`: name → module), imported then and kept in
    `namespace` (the package's globals) so that the next access finds it there."""
    if name in modules:
        return importlib.import_module(f".{name}", package)
    if name not in defined_in:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{defined_in[name]}", package), name)
    namespace[name] = value
    return value


def merge_upsert(mergers: dict[type, Callable[[Any, Any], Any]], stored: Any, patch: Any) -> Any:
    """`upserts.merge` over a package's mergers (upsert type → its merge function)."""
    merger = mergers.get(type(patch))
    if merger is None:
        raise TypeError(f"{type(patch).__name__} is not an upsert type")
    return merger(stored, patch)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is too large for a float")
    return value


_JSON_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_parse_float)
# The decoder's own scanner (C when available): `decode` calls it after a whitespace regex.
_JSON_SCAN: Final = json.scanner.make_scanner(cast(Any, _JSON_DECODER))
_JSON_WHITESPACE: Final = " \t\n\r"
_JSON_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
# What `_JSON_ENCODER.encode` runs for a value (the C encoder, when there is one), made once
# instead of on every call (a third of the time of a small message). Without the markers of
# circular references: a cycle recurses until RecursionError, and `dump_json` then lets the
# encoder itself give its error.
_C_MAKE_ENCODER: Final[Any] = getattr(json.encoder, "c_make_encoder", None)
_JSON_CHUNKS: Final[Any] = (
    None
    if _C_MAKE_ENCODER is None
    else _C_MAKE_ENCODER(
        None, _JSON_ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
)


def _optional_module(name: str) -> Any:
    """The module `name` when it is installed, else None."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


ORJSON: Any = _optional_module("orjson")
"""orjson, when it is installed: `from_json` and `to_json` then use it where it gives
the standard library's result, and the standard library everywhere else, so the text,
values and errors are the same either way. None: the standard library only."""

# Subclasses, dataclasses and datetimes, which the standard library writes its own way or refuses,
# go to it (`to_dict` returns none of them, nor the enums and UUIDs orjson also writes).
_ORJSON_OPTIONS: Final = (
    0
    if ORJSON is None
    else ORJSON.OPT_PASSTHROUGH_SUBCLASS | ORJSON.OPT_PASSTHROUGH_DATACLASS | ORJSON.OPT_PASSTHROUGH_DATETIME
)
# orjson reads an integer past 64 bits as a float: text with 19 digits in a row is left to
# the standard library.
_DIGITS_AS_ZEROS: Final = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER: Final = b"0" * 19
# orjson writes floats in [1e-9, 1e-5) as `1e-7` where Python writes `1e-07`, and those
# in [1e-5, 1e-4) as `0.00001` where Python writes `1e-05`.
_ORJSON_SHORT_EXPONENTS: Final = (b"e-5", b"e-6", b"e-7", b"e-8", b"e-9")


def parse_json(text: str | bytes) -> Any:
    """Strict JSON (no NaN or Infinity); a syntax error, an integer too long for
    Python or a number too large for a float is a DecodeError at `$`."""
    if ORJSON is not None:
        try:
            raw = text if type(text) is bytes else text.encode() if isinstance(text, str) else bytes(text)
            if _LONG_NUMBER not in raw.translate(_DIGITS_AS_ZEROS):
                return ORJSON.loads(raw)
        except (ValueError, TypeError):
            pass  # orjson refuses it: the standard library gives its value or its error
    try:
        if not isinstance(text, str):
            text = (text if type(text) is bytes else bytes(text)).decode("utf-8")
        return _parse_text(text)
    except (ValueError, TypeError) as error:
        raise DecodeError(ROOT, "a JSON document", f"invalid JSON ({error})") from None
    except RecursionError:
        raise DecodeError(ROOT, "a JSON document nested less deeply", "deeper nesting") from None


def _parse_text(text: str) -> Any:
    """`JSONDecoder.decode` without its two whitespace regular expressions (a fifth of
    the time of a small message) when the value starts the text: its scanner reads the
    value, and the decoder itself reads only text that starts otherwise or has more than
    whitespace after the value, for its value or its error."""
    try:
        value, end = _JSON_SCAN(text, 0)
    except StopIteration:
        return _JSON_DECODER.decode(text)
    if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
        return _JSON_DECODER.decode(text)
    return value


def dump_json(data: Any) -> str:
    """Compact JSON text with non-ASCII characters as they are; NaN and Infinity are a ValueError.

    orjson writes NaN and Infinity as `null` and some small floats its own way, and
    refuses integers past 64 bits, lone surrogates and non-string keys: text with a
    `null`, such a float or what orjson refuses is written by the standard library."""
    raw = _orjson_dump(data)
    if raw is not None:
        return raw.decode()
    return _stdlib_dump(data)


def _orjson_dump(data: Any) -> bytes | None:
    """orjson's UTF-8 text of `data` when it is installed and writes what `dump_json` does, else None."""
    if ORJSON is None:
        return None
    try:
        raw: bytes = ORJSON.dumps(data, option=_ORJSON_OPTIONS)
    except TypeError:
        return None
    if (
        b"null" not in raw
        and b"0.0000" not in raw
        and not (b"e-" in raw and any(form in raw for form in _ORJSON_SHORT_EXPONENTS))
    ):
        return raw
    return None


def _stdlib_dump(data: Any) -> str:
    """`dump_json` by the standard library."""
    if _JSON_CHUNKS is not None:
        try:
            return "".join(_JSON_CHUNKS(data, 0))
        except RecursionError:
            pass  # a cycle or deep nesting: the encoder's own error
    return _JSON_ENCODER.encode(data)


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def dump_json_bytes(data: Any) -> bytes:
    """`dump_json` as UTF-8, always valid: a lone surrogate in a string (which `json.loads`
    accepts as `"\\ud800"`) is written as its escape, as JavaScript's `JSON.stringify` does."""
    raw = _orjson_dump(data)
    if raw is not None:
        return raw  # UTF-8 already (orjson refuses lone surrogates): not decoded and encoded again
    text = _stdlib_dump(data)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text).encode()


# --- helpers the generated decoders call -----------------------------------


def decode_int(value: Any, path: Path, minimum: int | None, maximum: int | None) -> int | float:
    """The slow path of an integer: integral floats, bounds and type errors.

    An integral float (`2.0`, JSON Schema's integer too) stays a float, so that it
    encodes as it came."""
    if type(value) is not int and not (type(value) is float and value.is_integer()):
        raise DecodeError(path, "integer", value)
    if minimum is not None and value < minimum:
        raise DecodeError(path, f"integer >= {minimum}", value)
    if maximum is not None and value > maximum:
        raise DecodeError(path, f"integer <= {maximum}", value)
    return value


def decode_number(value: Any, path: Path, minimum: float | None, maximum: float | None) -> float:
    if type(value) is int:
        number: float = value
    elif type(value) is float and math.isfinite(value):
        number = value
    else:
        raise DecodeError(path, "finite number", value)
    if minimum is not None and number < minimum:
        raise DecodeError(path, f"number >= {minimum}", value)
    if maximum is not None and number > maximum:
        raise DecodeError(path, f"number <= {maximum}", value)
    return number


def search(pattern: str, value: str) -> bool:
    """JSON Schema `pattern`: the string contains a match (not necessarily a full one)."""
    return re.search(pattern, value) is not None


# --- JSON Schema assertions beside the structural type (assertions.Checks) ------------

_TYPE_TESTS: Final[dict[str, Callable[[Any], bool]]] = {
    "null": lambda value: value is None,
    "boolean": lambda value: type(value) is bool,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
    "string": lambda value: type(value) is str,
    "number": lambda value: type(value) in (int, float),
    "integer": lambda value: type(value) is int or (type(value) is float and value.is_integer()),
}


def check_type(value: Any, path: Path, types: tuple[str, ...]) -> None:
    if not any(_TYPE_TESTS[name](value) for name in types):
        raise DecodeError(path, " or ".join(types), value)


def _decimal(value: int | float) -> decimal.Decimal:
    return decimal.Decimal(value) if type(value) is int else decimal.Decimal(repr(value))


def is_multiple(value: int | float, factor: int | float) -> bool:
    """`multipleOf` on the decimal values as JSON writes them (0.0075 is a multiple of 0.0001)."""
    if type(value) is int and type(factor) is int:
        return value % factor == 0
    if isinstance(value, float) and not math.isfinite(value):
        return False
    number, divisor = _decimal(value), _decimal(factor)
    digits = len(str(abs(int(number)))) + 800
    with decimal.localcontext(decimal.Context(prec=digits, traps=[decimal.InvalidOperation])) as context:
        try:
            return context.remainder(number, divisor) == 0
        except decimal.InvalidOperation:
            return False


def check_number(
    value: Any,
    path: Path,
    minimum: float | None,
    maximum: float | None,
    exclusive_minimum: float | None,
    exclusive_maximum: float | None,
    multiple_of: float | None,
) -> None:
    """The number keywords; values that are not numbers pass."""
    if type(value) not in (int, float):
        return
    if minimum is not None and value < minimum:
        raise DecodeError(path, f"a number >= {minimum}", value)
    if maximum is not None and value > maximum:
        raise DecodeError(path, f"a number <= {maximum}", value)
    if exclusive_minimum is not None and value <= exclusive_minimum:
        raise DecodeError(path, f"a number > {exclusive_minimum}", value)
    if exclusive_maximum is not None and value >= exclusive_maximum:
        raise DecodeError(path, f"a number < {exclusive_maximum}", value)
    if multiple_of is not None and not is_multiple(value, multiple_of):
        raise DecodeError(path, f"a multiple of {multiple_of}", value)


def check_string(value: Any, path: Path, min_length: int | None, max_length: int | None, pattern: str | None) -> None:
    """The string keywords (lengths in code points); values that are not strings pass."""
    if type(value) is not str:
        return
    if min_length is not None and len(value) < min_length:
        raise DecodeError(path, f"a string of at least {min_length} characters", value)
    if max_length is not None and len(value) > max_length:
        raise DecodeError(path, f"a string of at most {max_length} characters", value)
    if pattern is not None and not search(pattern, value):
        raise DecodeError(path, f"a string matching {pattern!r}", value)


def json_key(value: Any) -> Any:
    """A hashable key equal for equal JSON values: 1 and 1.0 alike, true and 1 not."""
    kind = type(value)
    if kind is bool or value is None or kind is str:
        return (kind.__name__, value)
    if kind is int or kind is float:
        return ("number", int(value) if kind is float and value.is_integer() else value)
    if kind is list:
        return ("array", tuple(json_key(item) for item in value))
    if kind is dict:
        return ("object", frozenset((key, json_key(item)) for key, item in value.items()))
    return ("other", id(value))


def check_array(
    value: Any,
    path: Path,
    ctx: Context,
    min_items: int | None,
    max_items: int | None,
    unique: bool,
    prefix: tuple[Decoder[Any], ...],
    items: Decoder[Any] | None,
    contains: Decoder[Any] | None,
    min_contains: int,
    max_contains: int | None,
) -> None:
    """The array keywords; values that are not arrays pass."""
    if type(value) is not list:
        return
    if min_items is not None and len(value) < min_items:
        raise DecodeError(path, f"an array of at least {min_items} items", value)
    if max_items is not None and len(value) > max_items:
        raise DecodeError(path, f"an array of at most {max_items} items", value)
    if unique and len({json_key(item) for item in value}) != len(value):
        raise DecodeError(path, "an array of unique items", value)
    for index, item in enumerate(value):
        decoder: Decoder[Any] | None = prefix[index] if index < len(prefix) else items
        if decoder is not None:
            decoder(item, ctx, (path, index))
    if contains is not None:
        found = sum(matches(contains, item, (path, index)) for index, item in enumerate(value))
        if found < min_contains or (max_contains is not None and found > max_contains):
            most = "" if max_contains is None else f" and at most {max_contains}"
            raise DecodeError(path, f"an array with at least {min_contains}{most} matching items (contains)", value)


def check_object(
    value: Any,
    path: Path,
    ctx: Context,
    min_properties: int | None,
    max_properties: int | None,
    required: tuple[str, ...],
    dependent_required: tuple[tuple[str, tuple[str, ...]], ...],
    properties: tuple[tuple[str, Decoder[Any]], ...],
    patterns: tuple[tuple[str, Decoder[Any] | None], ...],
    additional: Decoder[Any] | None,
    known: tuple[str, ...],
    names: Decoder[Any] | None,
    dependent_schemas: tuple[tuple[str, Decoder[Any]], ...],
) -> None:
    """The object keywords; values that are not objects pass."""
    if type(value) is not dict:
        return
    if min_properties is not None and len(value) < min_properties:
        raise DecodeError(path, f"an object of at least {min_properties} properties", value)
    if max_properties is not None and len(value) > max_properties:
        raise DecodeError(path, f"an object of at most {max_properties} properties", value)
    for key in required:
        if key not in value:
            raise DecodeError((path, key), "a value (required)", MISSING)
    for key, keys in dependent_required:
        if key in value:
            for other in keys:
                if other not in value:
                    raise DecodeError((path, other), f"a value (required when {key!r} is present)", MISSING)
    for key, decoder in properties:
        if key in value:
            decoder(value[key], ctx, (path, key))
    for key, item in value.items():
        matched = False
        for pattern, pattern_decoder in patterns:
            if search(pattern, key):
                matched = True
                if pattern_decoder is not None:
                    pattern_decoder(item, ctx, (path, key))
        if additional is not None and not matched and key not in known:
            additional(item, ctx, (path, key))
        if names is not None:
            names(key, ctx, (path, key))
    for key, decoder in dependent_schemas:
        if key in value:
            decoder(value, ctx, path)


def check_const(value: Any, path: Path, constant: Any) -> None:
    if json_key(value) != json_key(constant):
        raise DecodeError(path, f"the constant {json.dumps(constant)}", value)


def check_enum(value: Any, path: Path, constants: tuple[Any, ...]) -> None:
    key = json_key(value)
    if not any(key == json_key(constant) for constant in constants):
        raise DecodeError(path, "one of " + ", ".join(json.dumps(constant) for constant in constants), value)


def matches(decoder: Decoder[Any], value: Any, path: Path) -> bool:
    """Whether `value` is valid for `decoder` (strict, reporting nothing)."""
    try:
        decoder(value, PROBE, path)
    except DecodeError:
        return False
    return True


def check_not(decoder: Decoder[Any], value: Any, path: Path, name: str) -> None:
    if matches(decoder, value, path):
        raise DecodeError(path, f"a value that is not a {name} (not)", value)


def check_if(
    value: Any,
    path: Path,
    ctx: Context,
    condition: Decoder[Any],
    then: Decoder[Any] | None,
    otherwise: Decoder[Any] | None,
) -> None:
    decoder = then if matches(condition, value, path) else otherwise
    if decoder is not None:
        decoder(value, ctx, path)


Plan: TypeAlias = "tuple[tuple[str, ...], tuple[str, ...], bool, int, tuple[Decoder[Any], ...], tuple[Any, ...]]"
"""assertions.Evaluates as a literal: keys, patterns, everything, prefix, contains, parts
(each part: valid decoder or None, present key or None, plan, otherwise plan or None)."""


def _chosen_parts(value: Any, parts: tuple[Any, ...]) -> list[Plan]:
    chosen = []
    for valid, present, plan, otherwise in parts:
        if present is not None and present not in value:
            continue
        picked = plan if valid is None or matches(valid, value, ROOT) else otherwise
        if picked is not None:
            chosen.append(picked)
    return chosen


def evaluated_keys(value: dict[str, Any], plan: Plan) -> set[str] | None:
    """The keys `plan` evaluates in `value`; None for all of them."""
    keys, patterns, everything, _, _, parts = plan
    if everything:
        return None
    found = {key for key in value if key in keys or any(search(pattern, key) for pattern in patterns)}
    for part in _chosen_parts(value, parts):
        more = evaluated_keys(value, part)
        if more is None:
            return None
        found |= more
    return found


def evaluated_items(value: list[Any], plan: Plan) -> set[int] | None:
    """The indices `plan` evaluates in `value`; None for all of them."""
    _, _, everything, prefix, contains, parts = plan
    if everything:
        return None
    found = set(range(min(prefix, len(value))))
    for decoder in contains:
        found |= {index for index, item in enumerate(value) if matches(decoder, item, ROOT)}
    for part in _chosen_parts(value, parts):
        more = evaluated_items(value, part)
        if more is None:
            return None
        found |= more
    return found


def check_unevaluated(value: Any, path: Path, ctx: Context, plan: Plan, decoder: Decoder[Any], items: bool) -> None:
    """`unevaluatedProperties` (or `unevaluatedItems`): what `plan` does not evaluate must match `decoder`."""
    if items and type(value) is list:
        indices = evaluated_items(value, plan)
        if indices is not None:
            for index, item in enumerate(value):
                if index not in indices:
                    decoder(item, ctx, (path, index))
    elif not items and type(value) is dict:
        keys = evaluated_keys(value, plan)
        if keys is not None:
            for key, item in value.items():
                if key not in keys:
                    decoder(item, ctx, (path, key))


def check_json(value: Any, path: Path) -> None:
    """Strict mode: a free-form value must be JSON (string keys, finite numbers)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise DecodeError(path, "an object with string keys", value)
            check_json(item, (path, key))
    elif kind is list:
        for index, item in enumerate(value):
            check_json(item, (path, index))
    elif kind is float:
        if not math.isfinite(value):
            raise DecodeError(path, "finite number", value)
    elif value is not None and kind not in (str, int, bool):
        raise DecodeError(path, "a JSON value", value)


new_object: Final = object.__new__
"""How decoders make an instance: without `__init__`, as pickle and copy do."""


def missing_or_invalid(value: Any, path: Path, expected: str) -> DecodeError:
    """The error about a required value that one check found missing (UNDEFINED) or invalid."""
    if value is UNDEFINED:
        return DecodeError(path, "a value (required)", MISSING)
    return DecodeError(path, expected, value)


def unknown_properties(data: dict[Any, Any], known: frozenset[str], path: Path) -> dict[str, Any]:
    """The properties of `data` that the schema does not declare, in order."""
    unknown: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            if type(key) is not str:
                raise DecodeError(path, "an object with string keys", data)
            unknown[key] = value
    return unknown


def reject_unknown(data: dict[Any, Any], known: frozenset[str], path: Path) -> None:
    for key in data:
        if key not in known:
            raise DecodeError(
                (path, key) if type(key) is str else path, "no such property (additionalProperties: false)", data[key]
            )


E = TypeVar("E", bound=Enum)


def members(enum: type[E]) -> dict[Any, E]:
    """Value → member, for decoding an enum with one dictionary lookup."""
    return {member.value: member for member in enum}


def merge_by_key(stored: Any, patch: Any) -> Any:
    """Patch a free-form object (`_meta`): UNDEFINED keeps `stored`, None clears it,
    an object replaces `stored`'s keys one by one, a None value removing the key."""
    if patch is UNDEFINED:
        return stored
    if patch is None:
        return None
    merged = dict(stored) if isinstance(stored, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def untagged_variant(union: str, value: object, variants: frozenset[type]) -> TypeError:
    """The error for a value that would encode without the tag its union needs."""
    wrappers = sorted(
        cls.__name__ for cls in variants if cls.__bases__[0] is not Model and isinstance(value, cls.__bases__[0])
    )
    hint = f": wrap it in {' or '.join(wrappers)}" if wrappers else ""
    return TypeError(f"{union} takes one of its tagged variants, not {type(value).__name__}{hint}")


_PLAIN_SCALARS: Final = frozenset([str, int, float, bool, type(None)])


def encode_value(value: Any) -> Any:
    """The plain JSON value of what a field may hold: a model, an enum member, a str,
    int or float subclass, a list, tuple or dict of those (union members and
    free-form values; the generated encoders call it off their fast path).
    Anything else is a TypeError."""
    kind = type(value)
    if kind is dict:
        return {
            (key if type(key) is str else encode_key(key)): item if type(item) in _PLAIN_SCALARS else encode_value(item)
            for key, item in value.items()
        }
    if kind in _PLAIN_SCALARS:
        return value
    if kind is list:
        return [item if type(item) in _PLAIN_SCALARS else encode_value(item) for item in value]
    if isinstance(value, Model):
        return type(value)._acp_encode(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, dict):
        return {encode_key(key): encode_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(item) for item in value]
    raise TypeError(f"{kind.__name__} is not a JSON value: {value!r}")


def encode_key(key: Any) -> str:
    """A property name as a plain string."""
    if isinstance(key, str):
        return str.__str__(key)
    raise TypeError(f"a JSON property name must be a string, not {type(key).__name__}: {key!r}")
