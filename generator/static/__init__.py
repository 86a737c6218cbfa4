"""The static modules of a generated package that are written against its own names
(`from .models import ...`, `from .connection import ...`): ordinary Python, linted here and
type-checked and tested in the generated packages (mypy cannot follow those modules here),
copied in under the generated header. The names each takes from them are read off its imports
(`generator.emit.imports`) and checked against what the package defines, so a schema that lacks
one fails generation naming it; the names each gives its package are read off its `__all__`
(`exported_names`), so that no list of them is kept by hand either."""

from __future__ import annotations

import ast
from importlib import resources


def source(name: str) -> str:
    """The text of the static module `name` (`"_agent.py"`), as it is copied in."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def exported_names(source: str) -> tuple[str, ...]:
    """The names the module `source` lists in its `__all__` (a list or tuple of strings), in
    the order written; () without one."""
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            return tuple(
                item.value for item in node.value.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)
            )
    return ()
