"""Point a package's relative imports of the shared runtime modules at the runtime package.

Packages generated together (`runtime-package` in the configuration) do not each carry a
copy of `generator/runtime/`: its modules are written once, as a package of their own, and
every `from ._runtime import X` or `from . import _runtime as _rt` of the other modules
becomes `from acp_runtime._runtime import X` or `from acp_runtime import _runtime as _rt`.
The statements are found with `ast` (wherever they are: at the top, under `if TYPE_CHECKING:`,
inside a function); in each, the tokens of the relative module name are replaced by the absolute
one, so the statement keeps its layout and comments. black formats the result afterwards.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Collection

from generator.errors import GenerationError


def relink(source: str, runtime_package: str, modules: Collection[str], where: str) -> str:
    """`source` with each relative import (`from .` or `from .name`) of one of `modules` (module
    names without `.py`) made an absolute import from `runtime_package`; a `from . import`
    naming shared and other modules is split in two. `where` names the source in errors."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise GenerationError(where, f"cannot relink its imports: not valid Python ({error.msg})") from None
    edits = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and _shared(node, modules)
    ]
    if not edits:
        return source
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    # from the last statement to the first, so the positions of those before stay valid
    for node in sorted(edits, key=lambda node: (node.lineno, node.col_offset), reverse=True):
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = offsets[node.lineno - 1] + node.col_offset  # ast offsets count UTF-8 bytes
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        text = _relinked(data[start:end].decode(), node, runtime_package, modules, where)
        data = data[:start] + text.encode() + data[end:]
    return data.decode()


def _shared(node: ast.ImportFrom, modules: Collection[str]) -> bool:
    """Whether the relative import `node` imports from or imports one of `modules`."""
    if node.module is not None:
        return node.module.split(".")[0] in modules
    return any(alias.name in modules for alias in node.names)


def _relinked(statement: str, node: ast.ImportFrom, runtime_package: str, modules: Collection[str], where: str) -> str:
    """The text of the statement `node` (whose text is `statement`) importing from `runtime_package`.

    Its `.module` (or lone `.`) is replaced by the absolute name where it stands, so the
    layout and comments stay; a `from . import` of shared and own modules becomes two
    statements as `ast.unparse` writes them (refused if that would lose a comment)."""
    own = [alias for alias in node.names if alias.name not in modules]
    if node.module is None and own:
        if _has_comment(statement):
            raise GenerationError(
                where, f"cannot relink `{ast.unparse(node)}`: a comment inside the statement would be lost"
            )
        shared = [alias for alias in node.names if alias.name in modules]
        statements = [
            ast.ImportFrom(module=runtime_package, names=shared, level=0),
            ast.ImportFrom(module=None, names=own, level=1),
        ]
        return ("\n" + " " * node.col_offset).join(ast.unparse(new) for new in statements)
    target = runtime_package if node.module is None else f"{runtime_package}.{node.module}"
    tokens = list(tokenize.generate_tokens(io.StringIO(statement).readline))
    # `from`, the module's tokens (`.`, then names and dots), `import`: all on the first line
    keyword = next(index for index, token in enumerate(tokens) if token.string == "import")
    first, last = tokens[1], tokens[keyword - 1]
    assert first.start[0] == last.end[0] == 1, "a relative module name split over lines"
    line_end = statement.find("\n")
    head = statement if line_end < 0 else statement[:line_end]
    rest = "" if line_end < 0 else statement[line_end:]
    return head[: first.start[1]] + target + head[last.end[1] :] + rest


def _has_comment(statement: str) -> bool:
    """Whether the text of one statement holds a comment."""
    tokens = tokenize.generate_tokens(io.StringIO(statement).readline)
    return any(token.type == tokenize.COMMENT for token in tokens)
