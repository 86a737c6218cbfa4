"""Where black breaks a bracketed list whose width depends on generated names.

A template writes `head` + items + `tail` (a signature, a call, a union) in the
layout this module picks, the one black itself settles on, so black finds the unit
already formatted and runs once on it. black tries, in order: everything on one
line; the "right-hand split", the items on one line of their own inside the
brackets; one item a line (after a trailing comma, the magic comma that keeps it so,
when the items are separated by commas).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from generator.format import LINE_LENGTH

Layout = Literal["one_line", "hugged", "exploded"]
Separator = Literal[", ", " | "]  # between arguments or parameters; between the members of a union
INDENT = 4  # what black indents the contents of a split bracket by


def bracket_layout(
    indent: int, head: str, items: Sequence[str], tail: str, separator: Separator = ", ", is_def: bool = False
) -> Layout:
    """How black lays out `head` + `items` joined by `separator` + `tail` at `indent` columns.

    `head` ends with the opening bracket and `tail` starts with the closing one
    (for a union written without brackets on one line, `head` ends with `= ` and
    `tail` is empty: black adds the brackets when it splits). `is_def`: the
    parameters of a `def`, which black never leaves alone between the brackets
    without a comma (it adds the trailing comma to a lone parameter, and the magic
    comma then puts it on a line of its own). The lines of `head` and `tail` are
    assumed to fit."""
    joined = separator.join(items)
    if indent + len(head) + len(joined) + len(tail) <= LINE_LENGTH:
        return "one_line"
    if indent + INDENT + len(joined) <= LINE_LENGTH and not (is_def and len(items) == 1):
        return "hugged"
    return "exploded"
