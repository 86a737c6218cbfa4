"""ECMA-262 regular expressions (JSON Schema's `pattern`, `patternProperties`) as
Python `re` patterns, or refused with the keyword's pointer where the two differ."""

from __future__ import annotations

import re
from typing import Any

from generator.errors import GenerationError

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
