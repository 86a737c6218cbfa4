"""The changelog `diff` prints: the changes as text, Markdown or JSON."""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict

from generator.changes.diff import Change

NO_CHANGES = "no API changes"


def summary(changes: list[Change]) -> str:
    breaking = sum(change.breaking for change in changes)
    return f"{breaking} breaking, {len(changes) - breaking} compatible changes"


def _by_type(changes: list[Change]) -> list[tuple[str, list[Change]]]:
    ordered = sorted(changes, key=lambda change: change.type)
    return [(name, list(group)) for name, group in itertools.groupby(ordered, key=lambda change: change.type)]


def format_text(changes: list[Change]) -> str:
    if not changes:
        return NO_CHANGES
    lines = []
    for name, group in _by_type(changes):
        lines.append(name)
        lines += [f"  {'BREAKING' if change.breaking else 'compatible'}: {change.message}" for change in group]
    return "\n".join([*lines, "", summary(changes)])


def format_markdown(changes: list[Change], level: int = 2) -> str:
    """`## TypeName` sections (`level` sets the heading depth) of bullet lines."""
    if not changes:
        return NO_CHANGES
    sections = []
    for name, group in _by_type(changes):
        bullets = [f"- {'**BREAKING** ' if change.breaking else ''}{change.message}" for change in group]
        sections.append("\n".join([f"{'#' * level} {name}", "", *bullets]))
    return "\n\n".join([*sections, summary(changes)])


def format_json(changes: list[Change]) -> str:
    """Always a JSON object, even without changes (then with an empty list)."""
    breaking = sum(change.breaking for change in changes)
    data = {
        "changes": [asdict(change) for change in changes],
        "breaking": breaking,
        "compatible": len(changes) - breaking,
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


FORMATS = {"text": format_text, "markdown": format_markdown, "json": format_json}
