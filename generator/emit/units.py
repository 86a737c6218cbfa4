"""Top-level units: what rendering produces and formatting takes, one definition each.

A generated file is a list of units joined by two blank lines (black's spacing between
top-level definitions); a template that renders a whole file is cut back into its units
by `split_units`. The line length is black's (`output.format.MODE` records it).
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize

LINE_LENGTH = 120
SEPARATOR = "\n\n"  # each formatted unit ends with a newline: two blank lines between units


def join_units(texts: list[str]) -> str:
    return SEPARATOR.join(texts)


def split_units(text: str) -> list[str]:
    """The top-level units of a whole file's `text`, which `join_units` joins back into
    `text`: it is cut after each two blank lines followed by a statement or comment at
    the top level (column 0, outside brackets and strings), so decorators and comments
    stay with the definition they precede and the file's head (header, docstring,
    imports) is its first unit. Text that does not tokenize is one unit (black says why)."""
    tops = _top_level_rows(text)
    line_starts = [0, *(match.end() for match in re.finditer(r"\n", text))]
    units, start = [], 0
    for match in re.finditer(r"(?<=\n\n\n)(?=\S)", text):
        cut = match.start()
        if bisect.bisect_right(line_starts, cut) in tops and text[start : cut - len(SEPARATOR)].strip():
            units.append(text[start : cut - len(SEPARATOR)])
            start = cut
    return [*units, text[start:]]


def _top_level_rows(text: str) -> set[int]:
    """The (1-based) rows where a statement or comment starts at column 0 outside brackets
    (and f-strings, whose text is tokens of its own since Python 3.12)."""
    rows, depth = set(), 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[1] == 0 and depth == 0 and token.type not in _NOT_STATEMENTS:
                rows.add(token.start[0])
            if token.type == _FSTRING_START or (token.type == tokenize.OP and token.string in _OPENING):
                depth += 1
            elif token.type == _FSTRING_END or (token.type == tokenize.OP and token.string in _CLOSING):
                depth -= 1
    except (tokenize.TokenError, SyntaxError):
        return set()
    return rows


_NOT_STATEMENTS = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
_OPENING, _CLOSING = {"(", "[", "{"}, {")", "]", "}"}
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)  # Python 3.12+
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
