"""Where black breaks a bracketed list whose width depends on generated names.

A template writes `head` + items + `tail` (a signature, a call, a dict or list, a
union) in the layout this module picks, the one black itself settles on, so that
black finds the unit already formatted and runs once on it. black tries, in order:
everything on one line; the "right-hand split", the items on one line of their own
inside the brackets; one item a line (after a trailing comma, the magic comma that
keeps it so, when the items are separated by commas).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from generator.emit.units import LINE_LENGTH

Layout = Literal["one_line", "hugged", "exploded"]
# What the brackets hold: a call's arguments (or a subscript's), a `def`'s parameters, the
# items of a list, dict, set or tuple display, or the operands of an expression black puts
# in brackets of its own to split it at its operators (a `|` union, a conditional
# expression), each operand after the first with its operator (`| B`, `if c`, `else d`),
# or the operands of an `if` statement's condition (`and b`), which black, once it splits
# them, always writes one a line.
Kind = Literal["call", "def", "display", "expression", "condition"]
INDENT = 4  # what black indents the contents of a split bracket by


def bracket_layout(indent: int, head: str, items: Sequence[str], tail: str, kind: Kind = "call") -> Layout:
    """How black lays out `head` + `items` + `tail` at `indent` columns.

    `head` ends with the opening bracket and `tail` starts with the closing one, but
    for an expression or a condition, whose brackets black adds only when it splits
    it: its `head` and `tail` are what stands before and after it. A lone item black
    leaves between the brackets even when it is too long for its line (it splits it
    inside if it can), except a `def`'s lone parameter, which it writes with a comma
    after it; several items of a display or operands of a condition never stay on
    one line between the brackets. The lines of `head` and `tail` are assumed to fit."""
    joined = (" " if kind in ("expression", "condition") else ", ").join(items)
    if indent + len(head) + len(joined) + len(tail) <= LINE_LENGTH:
        return "one_line"
    if len(items) == 1:
        return "exploded" if kind == "def" else "hugged"
    if kind not in ("display", "condition") and indent + INDENT + len(joined) <= LINE_LENGTH:
        return "hugged"
    return "exploded"


def annotation_operands(annotation: str) -> tuple[str, Kind, list[str], str]:
    """The parts black splits a too-long annotation into: for one subscript (`X[...]`) its
    opening, what it holds and its closing bracket; for anything else no brackets and the
    annotation itself. What is held is split into the items of a subscript that has several
    (kind "call": `str, Any`) or the operands of a `|` union (kind "expression"), each after
    the first with its `| `; operands and items are those outside brackets and strings."""
    opening, inner, closing = "", annotation, ""
    bracket = annotation.find("[")
    depths = [depth for char, depth in _brackets(annotation) if char == "]"]
    if bracket > 0 and annotation.endswith("]") and not _top_level(annotation, "|") and depths.count(0) == 1:
        opening, inner, closing = annotation[: bracket + 1], annotation[bracket + 1 : -1], "]"
    commas = _top_level(inner, ",") if opening else []
    kind: Kind = "call" if commas else "expression"
    cuts = commas or _top_level(inner, "|")
    parts = [inner[start + 1 : end].strip() for start, end in zip([-1, *cuts], [*cuts, len(inner)], strict=True)]
    if kind == "call":
        return opening, kind, parts, closing
    return opening, kind, [parts[0], *(f"| {operand}" for operand in parts[1:])], closing


def _top_level(text: str, separator: str) -> list[int]:
    """Where `separator` stands outside brackets and string literals in `text`."""
    return [index for index, (char, depth) in enumerate(_brackets(text)) if char == separator and depth == 0]


def _brackets(text: str) -> list[tuple[str, int]]:
    """Each character of `text` with the depth of brackets it stands in (a closing bracket:
    the depth after it), characters inside string literals as spaces."""
    marked, depth, quote = [], 0, ""
    for index, char in enumerate(text):
        if quote:
            if char == quote and text[index - 1] != "\\":
                quote = ""
            marked.append((" ", depth))
            continue
        if char in "\"'":
            quote = char
        depth += 1 if char in "([{" else 0
        depth -= 1 if char in ")]}" else 0
        marked.append((char, depth))
    return marked
