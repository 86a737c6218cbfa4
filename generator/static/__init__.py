"""The static modules of a generated package that are written against its schema's names
(`from .models import ...`): ordinary Python, linted here and type-checked and tested in the
generated packages (mypy cannot follow `.models` here), copied in under the generated header.
The names each takes from `.models` are read off its imports (`generator.emit.imports`) and
checked against the schema, so a schema that lacks one fails generation naming it."""

from __future__ import annotations

from importlib import resources


def source(name: str) -> str:
    """The text of the static module `name` (`"_agent.py"`), as it is copied in."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
