"""Every naming rule, and nothing else: schema text → Python names.

Names are built from *words*: the NFKC-normalised text split at case changes
and at anything that is not a letter or digit (`toolCallId` → tool, Call, Id);
text without a letter or digit is spelled by its characters' Unicode names
(`+` → plus, sign; the empty string → empty). Python reads identifiers
NFKC-normalised too, so two names that differ only there are one name.

Whoever owns a name decides what a collision means: two names the schema
gives (`$defs` names, property names) that meet are an error naming both
pointers; names the generator makes up (inline types) choose the next
candidate drawn from their content, and last the name of their position in
the schema (`position_name`), instead: never a number.
"""

from __future__ import annotations

import builtins
import keyword
import re
import unicodedata
from collections.abc import Sequence
from enum import Enum

from generator import static

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[\W_]+")
_ASCII_WORD_OR_CHARACTER = re.compile(r"[0-9A-Za-z]+|[^0-9A-Za-z]")

# The JSON-RPC API of the generated package (rpc.py), re-exported by __init__.py: the `__all__` of
# its static module.
RPC_NAMES = static.exported_names(static.source("rpc.py"))
# The asyncio connection API (connection.py), re-exported by __init__.py: the
# interfaces and connections of the two peers, and the helpers.
CONNECTION_NAMES = (
    "AffinityCookies",
    "DEFAULT_LIMITS",
    "DEFAULT_OPTIONS",
    "Agent",
    "AgentSideConnection",
    "Client",
    "ClientSideConnection",
    "ConnectionClosed",
    "ConnectionLimits",
    "ConnectionOptions",
    "LoggingObserver",
    "MemoryTransport",
    "MessageTooLarge",
    "PROTOCOL_VERSION",
    "ProtocolVersionMismatch",
    "RequestError",
    "StreamTransport",
    "Transport",
    "WireEvent",
    "WireObserver",
    "connect_pair",
    "connect_to_agent",
    "connect_to_client",
    "connect_http",
    "connect_negotiated",
    "connect_websocket",
    "http_app",
    "memory_transports",
    "open_agent_process",
    "open_http",
    "open_websocket",
    "opentelemetry_observer",
    "run_agent",
    "serve_agent",
    "serve_websocket",
    "spawn_agent_process",
    "spawn_client_process",
    "stdio_streams",
)
# The session state API (session.py), re-exported by __init__.py.
SESSION_NAMES = ("ChunkedMessage", "SessionChange", "SessionRequest", "SessionState")
# The agent-side helpers (helpers.py), re-exported by __init__.py: the `__all__` of the static
# module of each protocol version, together.
HELPER_NAMES = tuple(
    dict.fromkeys(
        name for module in ("helpers_v2.py", "helpers_v1.py") for name in static.exported_names(static.source(module))
    )
)
# Other names the generated modules that import the types (models.py, _codec.py,
# _builders.py, rpc.py, upserts.py, connection.py, __init__.py) bind at module level;
# tests/ir/test_naming.py checks this list against a generated package.
PACKAGE_NAMES = frozenset(
    {
        "AcpHttpApp",
        "Any",
        "AsyncIterator",
        "Authorize",
        "Routable",
        "Awaitable",
        "Callable",
        "ClassVar",
        "Connection",
        "DecodeError",
        "Enum",
        "Final",
        "Handlers",
        "Iterable",
        "Iterator",
        "LinkPath",
        "Rule",
        "Literal",
        "Mapping",
        "MappingProxyType",
        "MaybeUndefined",
        "Model",
        "Protocol",
        "SHARED_SIDES",
        "Sequence",
        "Salvage",
        "SalvageCallback",
        "Stderr",
        "TYPE_CHECKING",
        "TypeAlias",
        "TypeVar",
        "UNDEFINED",
        "Undefined",
        "Wire",
        "WebSocketServer",
        "annotations",
        "builtins",
        "cast",
        "dataclass",
        "decode",
        "encode",
        "field",
        "importlib",
        "merge",
        "new_object",
        "os",
        "overload",
        "replace",
        "spawn_process",
        "stdio_streams",
        "asyncio",
        "contextlib",
        "dataclasses",
        "functools",
        "json",
        "logging",
        "sys",
    }
)
# A type must not shadow what the generated code calls or annotates with.
RESERVED_TYPE_NAMES = frozenset(
    {
        *keyword.kwlist,
        *keyword.softkwlist,
        *dir(builtins),
        *PACKAGE_NAMES,
        *RPC_NAMES,
        *CONNECTION_NAMES,
        *SESSION_NAMES,
        *HELPER_NAMES,
    }
)
# Attributes are class-body names and parameters of `builder()`: they must not
# hide the methods every class has, nor what class bodies and builders evaluate
# or annotate with (`field(...)`, `@classmethod`, `list(items)`, `str`...).
RESERVED_ATTRIBUTES = frozenset(
    {
        *keyword.kwlist,
        "unknown_properties",
        "from_dict",
        "to_dict",
        "from_json",
        "to_json",
        "builder",
        "build",
        "field",
        "classmethod",
        "builtins",
        "os",
        "isinstance",
        "dict",
        "list",
        "str",
        "int",
        "float",
        "bool",
    }
)
# Enum members must not hide what `Enum`, `str` or `int` members have (`Enum` refuses `mro`).
RESERVED_MEMBERS = frozenset({*keyword.kwlist, *dir(Enum), *dir(str), *dir(int), "mro", "name", "value"})


def _spelled(text: str) -> list[str]:
    """`+` → plus, sign; control characters by code point (`\\n` → u, 000a)."""
    if not text:
        return ["empty"]
    spelled = [unicodedata.name(character, f"U {ord(character):04X}") for character in text]
    return [word.lower() for name in spelled for word in _NOT_WORD.split(name) if word]


def words(text: str) -> list[str]:
    """Split camelCase, PascalCase, snake_case, kebab-case and punctuation (letters of any script)."""
    normal = unicodedata.normalize("NFKC", text)
    spaced = _WORD_BOUNDARY.sub(" ", normal)
    found = ["".join(c for c in word if ("x" + c).isidentifier()) for word in _NOT_WORD.split(spaced)]
    return [word for word in found if word] or _spelled(text)


def _normal(name: str) -> str:
    """The identifier Python binds for `name` (`.upper()` may leave compatibility characters)."""
    return unicodedata.normalize("NFKC", name)


def attribute_name(wire_name: str) -> str:
    """`toolCallId` → `tool_call_id`, `_meta` → `meta`, `class` → `class_`, `field` → `field_`."""
    name = _normal("_".join(word.lower() for word in words(wire_name)))
    if name[0].isdigit():
        name = "f_" + name
    return name + "_" if name in RESERVED_ATTRIBUTES else name


def _pascal_case(joined: list[str]) -> str:
    name = _normal("".join(word[:1].upper() + word[1:] for word in joined))
    return "T" + name if name[0].isdigit() else name


def _repeated(said: list[str], added: list[str]) -> int:
    """How many words `added` starts with that repeat the words `said` ends with (case aside)."""
    for count in range(min(len(said), len(added)), 0, -1):
        if [word.casefold() for word in said[-count:]] == [word.casefold() for word in added[:count]]:
            return count
    return 0


def class_name(*parts: str) -> str:
    """PascalCase joined from `parts`, never repeating a word where two parts meet: a part's
    leading words that repeat the words before it are said once (`ToolCallContent` and `content`
    make no `ToolCallContentContent`). ("SessionUpdate", "tool_call_update") → `SessionUpdateToolCallUpdate`,
    ("AvailableCommand", "command", "variant") → `AvailableCommandVariant`."""
    joined: list[str] = []
    for part in parts:
        added = words(part)
        joined += added[_repeated(joined, added) :]
    return _pascal_case(joined)


def part_name(owner: str, part: str, kind: str) -> str:
    """The made-up name of what `owner` calls `part` (a property, a tag value): `class_name(owner, part)`,
    or where `part` only repeats the words `owner` ends with, `owner` and what the part is (`kind`):
    ("AgentResponseResult", "result", "value") → `AgentResponseResultValue`."""
    name = class_name(owner, part)
    return class_name(owner, part, kind) if name == class_name(owner) else name


def type_name(defs_name: str) -> str:
    """The Python name of a `$defs` entry: the name itself when it is an identifier
    that starts with a capital (or a letter without case), else PascalCase of its
    words (`decode` → `Decode`, `my-type` → `MyType`); `_` appended when that is
    reserved (`Any` → `Any_`, `None` → `None_`). `decode(name, ...)` takes the
    `$defs` name whatever this returns."""
    name = _normal(defs_name)
    if not (name.isidentifier() and name[0].isalpha() and not name[0].islower()):
        name = class_name(name)
    return name + "_" if name in RESERVED_TYPE_NAMES else name


def builder_name(type_name: str) -> str:
    """The chainable builder class of an object type (templates/macros/builder.jinja)."""
    return type_name + "Builder"


def builder_typevar_name(type_name: str) -> str:
    """The TypeVar of a builder: the class `builder()` was called on (a subclass builds itself)."""
    return f"_{type_name}T"


def module_names(type_name: str, *, has_builder: bool) -> list[str]:
    """Every module-level name a type defines (templates/macros/): the type in models.py,
    its codec functions and tables in _codec.py, and for classes with a builder the
    builder and its TypeVar in _builders.py (models.py imports them to annotate
    `builder()`). Container decoders (`_decode_list_of_str`) start with a lowercase
    word, which type names never do."""
    names = [type_name] + [
        prefix + type_name
        for prefix in ("_decode_", "_encode_", "_match_", "_KEYS_", "_MEMBERS_", "_VARIANTS_", "_TAGGED_")
    ]
    return names + ([builder_name(type_name), builder_typevar_name(type_name)] if has_builder else [])


def variant_names(
    parent: str, candidates: Sequence[Sequence[Sequence[str] | None]], positions: Sequence[Sequence[str]]
) -> list[str]:
    """Names for the inline variants of `parent`, one list of candidates per variant,
    each candidate the words that follow the parent name (or None where the variant
    has nothing to say, e.g. no title), and each variant's position (`anyOf`, `1`).
    Every variant takes its first candidate that no sibling has at the same rank, or
    its first one when all are shared. Where two names still meet, the one that took
    a shared candidate is named by its position (`ShapeAnyOf1`), or both are when both
    took shared ones or neither did; so is a variant whose name is another's position
    name. Siblings never share a name."""
    own = [_distinct_candidate(index, candidates) for index in range(len(candidates))]
    first = [next(words for words in choices if words is not None) for choices in candidates]
    names = [class_name(parent, *(first[index] if chosen is None else chosen)) for index, chosen in enumerate(own)]
    by_position = [class_name(parent, *position) for position in positions]
    distinct = [name for name, chosen in zip(names, own, strict=True) if chosen is not None]

    def meets(index: int) -> bool:
        name = names[index]
        others = names[:index] + names[index + 1 :]
        met = distinct.count(name) > 1 if own[index] is not None else name in others
        return met or name in by_position[:index] + by_position[index + 1 :]

    return [by_position[index] if meets(index) else name for index, name in enumerate(names)]


def _distinct_candidate(index: int, candidates: Sequence[Sequence[Sequence[str] | None]]) -> Sequence[str] | None:
    """The first candidate of variant `index` that no other variant has at the same rank."""
    for rank, choice in enumerate(candidates[index]):
        if choice is not None and all(other[rank] != choice for i, other in enumerate(candidates) if i != index):
            return choice
    return None


def position_name(owner: str | None, tokens: Sequence[str]) -> str:
    """The name of the schema at a JSON pointer, for a made-up name whose readable
    candidates are taken: the Python name of the `$defs` entry it is in, then the
    pointer's tokens below it (`#/$defs/A/anyOf/1/prefixItems/0` → `AAnyOf1PrefixItems0`);
    `Root` and all the tokens for a schema outside `$defs`."""
    return pointer_name(owner or "Root", tokens)


def pointer_name(prefix: str, tokens: Sequence[str]) -> str:
    """`prefix` then every token of a JSON pointer, repeated or not, so that two places never
    share a name (`A/items/items` is not `A/items`): ("Valid", ["$defs", "A"]) → `ValidDefsA`."""
    return _pascal_case([word for part in (prefix, *tokens) for word in words(part)])


def member_name(value: str) -> str:
    """An enum member for a string value: `switch_mode` → `SWITCH_MODE`, `2.0` → `V_2_0`, `+` → `PLUS_SIGN`."""
    name = _normal("_".join(word.upper() for word in words(value)))
    if name[0].isdigit():
        name = "V_" + name
    return name + "_" if name in RESERVED_MEMBERS else name


def exact_member_name(value: str) -> str:
    """A member name that keeps what `member_name` drops: the case of ASCII letters
    and every other character by its Unicode name (`a-b` → `a_HYPHEN_MINUS_b`,
    `+1` → `PLUS_SIGN_1`, `get` → `get`)."""
    if not value:
        return "EMPTY_STRING"
    parts: list[str] = []
    for piece in _ASCII_WORD_OR_CHARACTER.findall(value):
        parts += [piece] if piece.isascii() and piece.isalnum() else [word.upper() for word in _spelled(piece)]
    name = "_".join(parts)
    if name[0].isdigit():
        name = "V_" + name
    return name + "_" if name in RESERVED_MEMBERS else name


def member_names(values: Sequence[str]) -> list[str]:
    """The members of one enum, in order: `member_name`, or `exact_member_name` for
    every value whose member would coincide with another's. Duplicates are left
    only for values that are equal or differ beyond what names can show."""
    exact: set[int] = set()
    while True:
        names = [exact_member_name(v) if i in exact else member_name(v) for i, v in enumerate(values)]
        clashing = {i for i, name in enumerate(names) if names.count(name) > 1} - exact
        if not clashing:
            return names
        exact |= clashing


def merge_function_name(type_name: str) -> str:
    """`ToolCallUpdate` → `merge_tool_call_update`."""
    return "merge_" + "_".join(word.lower() for word in words(type_name))


def fold_function_name(name: str) -> str:
    """A session update tag or type → the private function that folds it into the session
    state (`agent_message_chunk` → `_fold_agent_message_chunk`, `ToolCallUpdate` → `_fold_tool_call_update`)."""
    return "_fold_" + "_".join(word.lower() for word in words(name))


def method_name(method: str) -> str:
    """A JSON-RPC method → the Python method that serves or sends it: the method's words,
    lowercased, joined by `_` (`session/prompt` → `session_prompt`, `$/cancel_request` →
    `cancel_request`, `session/setMode` → `session_set_mode`)."""
    return _lower_identifier("_".join(word.lower() for word in words(method)), "m_")


def error_constructor_name(member: str) -> str:
    """An error-code enum member → its `RequestError` constructor (`INVALID_PARAMS` → `invalid_params`)."""
    return _lower_identifier(member.lower(), "e_")


def error_data_constructor_name(type_name: str) -> str:
    """An error-data type → its `RequestError` constructor, the type's words without the
    trailing "error data" (`SessionNotFoundErrorData` → `session_not_found`)."""
    parts = [word.lower() for word in words(type_name)]
    if parts[-2:] == ["error", "data"] and len(parts) > 2:
        parts = parts[:-2]
    return _lower_identifier("_".join(parts), "e_")


def _lower_identifier(name: str, prefix: str) -> str:
    """`name` as a method name: `prefix` before a leading digit, `_` after a keyword."""
    name = _normal(name)
    if name[0].isdigit():
        name = prefix + name
    return name + "_" if keyword.iskeyword(name) else name
