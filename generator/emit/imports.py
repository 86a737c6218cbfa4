"""The names a static module takes from its package's schema, read off its imports.

A static module of a generated package (`generator/static/`) is written against the schema's
names and imports each from the package's `models` (`from .models import A, B`). Reading
those imports (with `ast`) is how the generator knows which names the module needs, so no list
is kept by hand beside it; a name the schema lacks fails generation, naming it."""

from __future__ import annotations

import ast
from collections.abc import Collection

from generator.errors import GenerationError


def imported_names(source: str, module: str = "models") -> tuple[str, ...]:
    """The names `source` imports from its package's `module` (`from .models import A`), in
    the order written, wherever the import stands (under `if TYPE_CHECKING:` too)."""
    return tuple(
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == module
        for alias in node.names
    )


def check_imports(name: str, source: str, defined: Collection[str], schema_path: str, module: str = "models") -> None:
    """Raise a GenerationError naming each name the static module `name` (its text `source`)
    imports from `module` that is not in `defined` (the names the schema gives that module)."""
    missing = [imported for imported in imported_names(source, module) if imported not in defined]
    if missing:
        raise GenerationError(
            schema_path,
            f"{name} imports {missing} from .{module}, which the schema does not define:"
            f" update {name} to the schema's names",
        )
