"""Python literals and docstrings of schema text: whatever the text, it stays data."""

from __future__ import annotations

import json

from generator.emit.units import LINE_LENGTH


def python_literal(value: object) -> str:
    """A literal that evaluates to `value`; repr-safe for any schema text.
    Strings prefer double quotes, as black writes them."""
    if value == [] or value == {}:
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return f'"{text[1:-1]}"' if text.startswith("'") and '"' not in value else text
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    if isinstance(value, tuple):  # as black writes them: `("a",)`, `("a", "b")`
        inner = ", ".join(python_literal(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(key)}: {python_literal(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"no Python literal for {type(value).__name__}")


def json_literal(text: str) -> str:
    """The Python literal of a JSON value kept as JSON text in the IR (`const`, `enum`)."""
    return python_literal(json.loads(text))


def _escape_character(character: str) -> str:
    if character in "\n\t" or character.isprintable():
        return character
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escape(text: str) -> str:
    """Escape backslashes, `\"\"\"`, tabs and unprintable characters."""
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').replace("\t", "\\t")
    return "".join(_escape_character(character) for character in escaped)


def string_block(text: str) -> str:
    """A triple-quoted literal of `text` for an attribute or alias doc."""
    escaped = _escape(text)
    if escaped.endswith('"'):
        escaped = escaped[:-1] + '\\"'
    return f'"""{escaped}"""'


def docstring(text: str, indent: int = 4) -> str:
    """A docstring of `text` laid out exactly as black lays it out (PEP 257
    indentation, padding, closing quotes), so black has nothing to change."""
    prefix = " " * indent
    body = _escape(text)
    lines = body.split("\n")
    if len(lines) > 1:
        margin = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
        rest = [prefix + line[margin:].rstrip() if line.strip() else "" for line in lines[1:]]
        if not lines[-1].strip():
            rest[-1] = prefix
        body = "\n".join([lines[0].strip(), *rest])
    else:
        body = body.strip()
    if body.startswith('"'):
        body = " " + body
    if body.endswith('"'):
        body += " "
    last = body.split("\n")
    if len(last) > 1 and len(last[-1]) + 3 > LINE_LENGTH:
        body += "\n" + prefix
    return f'"""{body}"""'


def comment_safe(text: str) -> str:
    """Text that stays on one comment line."""
    return "".join(character if character.isprintable() else "?" for character in text)
