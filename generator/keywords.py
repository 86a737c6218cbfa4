"""Which JSON Schema keywords the generator knows, and how to read their values.

Every keyword of a node is either an annotation (no effect on validity), handled
exactly, or refused with the pointer of the keyword. Patterns are translated
from ECMA-262 to Python `re`, or refused where the two would differ.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from generator.errors import GenerationError
from generator.load import Node

# Keywords that never change what is valid (`format` is an annotation in 2020-12;
# integer formats are enforced as bounds by `build`, see INTEGER_FORMATS there).
ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "contentEncoding", "contentMediaType", "contentSchema",
     "deprecated", "readOnly", "writeOnly", "$comment", "discriminator", "format", "$anchor",
     "$defs", "definitions"}
)
# Keywords the generated code enforces exactly.
VALIDATION = frozenset(
    {"type", "$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "const", "enum",
     "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
     "minLength", "maxLength", "pattern", "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
     "contains", "minContains", "maxContains", "properties", "patternProperties", "additionalProperties",
     "propertyNames", "required", "dependentRequired", "dependentSchemas", "minProperties", "maxProperties"}
)
# Keywords refused on purpose, and why.
REFUSED = {
    "unevaluatedProperties": "unevaluatedProperties is not implemented (only `true`, which changes nothing)",
    "unevaluatedItems": "unevaluatedItems is not implemented (only `true`, which changes nothing)",
    "$dynamicRef": "$dynamicRef is not implemented",
    "$dynamicAnchor": "$dynamicAnchor is not implemented",
    "$recursiveRef": "$recursiveRef is not part of draft 2020-12",
    "$vocabulary": "custom vocabularies ($vocabulary) are not implemented",
    "$id": "embedded schema resources ($id below the document root) are not implemented",
}
META_SCHEMA = "https://json-schema.org/draft/2020-12/schema"
JSON_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")


def refusal(node: Node, keyword: str) -> str | None:
    """Why `keyword` of `node` is refused, or None when it is supported."""
    if keyword in ANNOTATIONS or keyword in VALIDATION or keyword.startswith("x-"):
        return None
    if keyword in ("unevaluatedProperties", "unevaluatedItems") and node.value(keyword) is True:
        return None
    if keyword == "$schema":
        return None if node.value(keyword) == META_SCHEMA else f"only the draft 2020-12 meta-schema ({META_SCHEMA}) is supported"
    return REFUSED.get(keyword, f"unsupported keyword {keyword!r}: acp-codegen does not know what it means")


def json_text(value: Any) -> str:
    """A JSON value as canonical text, for the IR (hashable, printable)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def number(node: Node, keyword: str) -> int | float | None:
    value = node.value(keyword)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise GenerationError(f"{node.pointer}/{keyword}", f"expected a number, found {value!r}")
    return value


def count(node: Node, keyword: str) -> int | None:
    """A non-negative integer keyword (`minLength`, `maxItems`...); 2.0 counts as 2."""
    value = number(node, keyword)
    if value is None:
        return None
    if value < 0 or value != int(value):
        raise GenerationError(f"{node.pointer}/{keyword}", f"expected a non-negative integer, found {value!r}")
    return int(value)


# --- patterns -------------------------------------------------------------------

_CLASS_ESCAPES = {"d": "0-9", "w": "a-zA-Z0-9_"}
_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "[a-zA-Z0-9_]", "W": "[^a-zA-Z0-9_]"}
_CONTROL = {"t": "\\t", "n": "\\n", "r": "\\r", "f": "\\f", "v": "\\v"}
_LINE_TERMINATORS = "\\n\\r\\u2028\\u2029"


def python_pattern(pointer: str, pattern: Any) -> str:
    """The Python regular expression that matches what the ECMA-262 `pattern` matches
    (without flags, searched anywhere in the string), or a GenerationError."""
    if not isinstance(pattern, str):
        raise GenerationError(pointer, "expected a string")
    out: list[str] = []
    in_class = False
    index = 0

    def refuse(what: str) -> GenerationError:
        return GenerationError(pointer, f"{what} means different things in ECMA-262 and Python `re`; not supported")

    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if index + 1 == len(pattern):
                raise GenerationError(pointer, "the pattern ends with a lone backslash")
            escaped = pattern[index + 1]
            index += 2
            if escaped in _CONTROL:
                out.append(_CONTROL[escaped])
            elif escaped in _ESCAPES:
                if in_class and escaped not in _CLASS_ESCAPES:
                    raise refuse(f"\\{escaped} inside a character class")
                out.append(_CLASS_ESCAPES[escaped] if in_class else _ESCAPES[escaped])
            elif escaped in "xu":
                digits = 2 if escaped == "x" else 4
                code = pattern[index : index + digits]
                if len(code) != digits or not all(c in "0123456789abcdefABCDEF" for c in code):
                    raise refuse(f"\\{escaped} without {digits} hex digits")
                out.append(f"\\{escaped}{code}")
                index += digits
            elif escaped.isascii() and not escaped.isalnum():
                out.append("\\" + escaped)
            else:
                raise refuse(f"the escape \\{escaped}")
            continue
        index += 1
        if in_class:
            if char == "]":
                in_class = False
            elif char == "[":
                out.append("\\[")
                continue
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern[index : index + 1] == "^":
                out.append("^")
                index += 1
            if pattern[index : index + 1] == "]":
                raise refuse("a character class starting with `]`")
        elif char == ".":
            out.append(f"[^{_LINE_TERMINATORS}]")
        elif char == "$":
            out.append("\\Z")
        elif char == "(" and pattern[index : index + 1] == "?":
            head = pattern[index : index + 2]
            if head not in ("?:", "?=", "?!"):
                raise refuse(f"the group (?{pattern[index + 1 : index + 2]}")
            out.append(char)
        elif char == "{" and re.match(r"\{,", pattern[index - 1 :]):
            raise refuse("`{,`")
        else:
            out.append(char)
    if in_class:
        raise GenerationError(pointer, "unterminated character class")
    translated = "".join(out)
    try:
        re.compile(translated)
    except re.error as error:
        raise GenerationError(pointer, f"not a regular expression acp-codegen can translate: {error}") from None
    return translated
