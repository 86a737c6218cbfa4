"""The static modules of every generated package: ordinary Python, linted, type-checked and
tested here, and copied into the package under the generated header. Nothing in them depends
on the schema; what does is rendered from `templates/` and reaches them through imports."""

from __future__ import annotations

from importlib import resources


def source(name: str) -> str:
    """The text of the static module `name` (`"_runtime.py"`), as it is copied in."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
