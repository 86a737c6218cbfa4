"""The format manifest `<out>/<package>.format.json`: what black made of each committed unit.

For every Python file of the package, its units in order, each as
`[unit key, sha256 of black's text, length of black's text]` (`format.unit_key`:
black's version and mode and the rendered unit). Written with the package and
committed with it, it lets a fresh clone's `check` find black's text for every
unchanged unit in the committed files themselves, each slice verified against
its sha256, instead of running black again. It records black's answers; only
`check --full` asks black again. `make generate` rewrites it: on a merge
conflict, regenerate rather than merge it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.emit.units import SEPARATOR
from generator.output.format import MODE, text_digest

SUFFIX = ".format.json"


def manifest_path(package_dir: Path) -> Path:
    return package_dir.with_name(package_dir.name + SUFFIX)


def render_manifest(units: dict[str, list[tuple[str, str]]]) -> str:
    """The manifest of `units` (file name → [(unit key, black's text)]), one unit a line."""
    lines = ["{", f'"mode": {json.dumps(MODE)},', '"files": {']
    for number, (name, entries) in enumerate(units.items()):
        lines.append(f"{json.dumps(name)}: [")
        rows = [json.dumps([key, text_digest(text), len(text)]) for key, text in entries]
        lines.append(",\n".join(rows))
        lines.append("]," if number < len(units) - 1 else "]")
    lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def proven_units(package_dir: Path) -> dict[str, str]:
    """Unit key → black's text, for each unit of the manifest whose text the
    committed file holds with the recorded sha256 (found at its offset from the
    start or from the end, so one edited unit does not hide the others)."""
    try:
        manifest = json.loads(manifest_path(package_dir).read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(manifest, dict) or manifest.get("mode") != MODE or not isinstance(manifest.get("files"), dict):
        return {}
    proven: dict[str, str] = {}
    for name, entries in manifest["files"].items():
        rows = _rows(entries)
        if rows is None:
            continue
        try:
            text = (package_dir / name).read_bytes().decode("utf-8")
        except (OSError, ValueError):
            continue
        widths = [length + len(SEPARATOR) for _, _, length in rows]
        start, end = 0, len(text) + len(SEPARATOR)
        starts = []
        for width in widths:
            starts.append(start)
            start += width
        for (key, digest, length), head, tail in zip(rows, starts, _from_end(widths, end), strict=False):
            for offset in (head, tail):
                piece = text[offset : offset + length]
                if offset >= 0 and text_digest(piece) == digest:
                    proven[key] = piece
                    break
    return proven


def _rows(entries: Any) -> list[tuple[str, str, int]] | None:
    if not isinstance(entries, list):
        return None
    rows = []
    for entry in entries:
        match entry:
            case [str(key), str(digest), int(length)] if length >= 0:
                rows.append((key, digest, length))
            case _:
                return None
    return rows


def _from_end(widths: list[int], end: int) -> list[int]:
    """The offset of each unit counted back from the end of the file."""
    offsets = []
    for width in reversed(widths):
        end -= width
        offsets.append(end)
    return offsets[::-1]
