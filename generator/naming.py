"""Every naming rule, and nothing else: wire names → Python names."""

from __future__ import annotations

import keyword
import re

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_IDENTIFIER = re.compile(r"[^0-9a-zA-Z]+")

# Attribute names every generated class already uses.
RESERVED_ATTRIBUTES = frozenset(
    {"unknown_properties", "from_dict", "to_dict", "from_json", "to_json", "builder", "build"}
)


def words(text: str) -> list[str]:
    """Split camelCase, PascalCase, snake_case, kebab-case and punctuation."""
    spaced = _WORD_BOUNDARY.sub(" ", text)
    return [word for word in _NOT_IDENTIFIER.split(spaced) if word]


def _safe(name: str, prefix: str) -> str:
    if not name or name[0].isdigit():
        name = prefix + name
    if keyword.iskeyword(name):  # soft keywords (match, type) stay usable
        name += "_"
    return name


def attribute_name(wire_name: str) -> str:
    """`toolCallId` → `tool_call_id`, `_meta` → `meta`, `class` → `class_`."""
    return _safe("_".join(word.lower() for word in words(wire_name)), "f_")


def class_name(*parts: str) -> str:
    """PascalCase joined from `parts`: ("SessionUpdate", "tool_call_update") → `SessionUpdateToolCallUpdate`."""
    joined = "".join(word[:1].upper() + word[1:] for part in parts for word in words(part))
    return _safe(joined, "T")


def member_name(value: str) -> str:
    """An enum member for a string value: `switch_mode` → `SWITCH_MODE`, `2.0` → `V_2_0`."""
    name = "_".join(word.upper() for word in words(value))
    return _safe(name or "EMPTY", "V_")


def merge_function_name(type_name: str) -> str:
    """`ToolCallUpdate` → `merge_tool_call_update`."""
    return "merge_" + attribute_name(type_name)


def method_name(method: str) -> str:
    """A JSON-RPC method → the Python method that serves or sends it: the method's words,
    lowercased, joined by `_` (`session/prompt` → `session_prompt`, `$/cancel_request` →
    `cancel_request`, `session/setMode` → `session_set_mode`)."""
    return _safe("_".join(word.lower() for word in words(method)), "m_")


def error_constructor_name(member: str) -> str:
    """An error-code enum member → its `RequestError` constructor (`INVALID_PARAMS` → `invalid_params`)."""
    return _safe(member.lower(), "e_")
