"""The static modules of a generated package that are written against its own names
(`from .models import ...`, `from .connection import ...`): ordinary Python, linted here and
type-checked and tested in the generated packages (mypy cannot follow those modules here),
copied in under the generated header. The names each takes from them are read off its imports
(`generator.emit.imports`) and checked against what the package defines, so a schema that lacks
one fails generation naming it."""

from __future__ import annotations

from importlib import resources


def source(name: str) -> str:
    """The text of the static module `name` (`"_agent.py"`), as it is copied in."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
