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
import sys
import tokenize
from collections.abc import Collection

from generator.errors import GenerationError


def relink(source: str, runtime_package: str, modules: Collection[str], where: str) -> str:
    """`source` with each relative import (`from .` or `from .name`) of one of `modules` (module
    names without `.py`) made an absolute import from `runtime_package`; a `from . import`
    naming shared and other modules is split in two. The module's own top-level imports of them
    move into a block of their own before its relative imports (where isort puts a third-party
    import); nested ones stay where they are. `where` names the source in errors."""
    tree = _parsed(source, where)
    lines = source.splitlines(keepends=True)
    in_place = [
        node
        for node in ast.walk(tree)
        if _relinkable(node, modules) and not (node in tree.body and _whole_lines(node, lines))
    ]
    if in_place:
        source = _relinked_in_place(source, in_place, runtime_package, modules, where)
        tree = _parsed(source, where)
        lines = source.splitlines(keepends=True)
    moved = [node for node in tree.body if _relinkable(node, modules)]
    if not moved:
        return source
    block: list[tuple[str, str]] = []  # (the module imported from, the statement)
    replaced: dict[int, tuple[int, str]] = {}  # first line → (line after the statement, what takes its place)
    for node in moved:
        assert isinstance(node, ast.ImportFrom) and node.end_lineno is not None
        statement = "".join(lines[node.lineno - 1 : node.end_lineno])
        own = _own(node, modules)
        if own:
            shared, rest = _split(statement, node, runtime_package, modules, where)
            block.append((runtime_package.lower(), shared))
            replaced[node.lineno - 1] = (node.end_lineno, rest + "\n")
        else:
            module = runtime_package if node.module is None else f"{runtime_package}.{node.module}"
            block.append((module.lower(), _spliced(statement, node, runtime_package)))
            replaced[node.lineno - 1] = (node.end_lineno, "")
    relative = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.level > 0 and (node not in moved or _own(node, modules))
    ]
    insert = (relative[0] if relative else moved[0]).lineno - 1
    section = _third_party_section([node for node in tree.body if node.lineno - 1 < insert and node not in moved])
    if section and all(_whole_lines(node, lines) for node in section):
        # merged into the third-party imports before them: `import x` first, then `from x import`, by module
        rows = [(0 if isinstance(node, ast.Import) else 1, _module(node), _text(node, lines)) for node in section]
        rows += [(1, module, text) for module, text in block]
        merged = "".join(text.rstrip("\n") + "\n" for _, _, text in sorted(rows, key=lambda row: row[:2]))
        last = section[-1].end_lineno
        assert last is not None
        replaced[section[0].lineno - 1] = (last, merged)
        text = ""
    else:
        statements = [text.rstrip("\n") + "\n" for _, text in sorted(block, key=lambda row: row[0].lower())]
        text = "".join(statements) + ("\n" if relative else "")
    result: list[str] = []
    index = 0
    while index < len(lines):
        if index == insert:
            result.append(text)
        if index in replaced:
            index, replacement = replaced[index]
            result.append(replacement)
            continue
        result.append(lines[index])
        index += 1
    return "".join(result)


def _third_party_section(before: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The absolute imports of other than the standard library that end `before` (the top-level
    statements before the package's relative imports): the section isort keeps third-party ones in."""
    section: list[ast.Import | ast.ImportFrom] = []
    for node in reversed(before):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or (isinstance(node, ast.ImportFrom) and node.level):
            break
        if _module(node).split(".")[0] in (*sys.stdlib_module_names, "__future__"):
            break
        section.insert(0, node)
    return section


def _module(node: ast.Import | ast.ImportFrom) -> str:
    """The module an import statement names first, lower-cased (isort's key)."""
    return (node.names[0].name if isinstance(node, ast.Import) else node.module or "").lower()


def _text(node: ast.stmt, lines: list[str]) -> str:
    assert node.end_lineno is not None
    return "".join(lines[node.lineno - 1 : node.end_lineno])


def _parsed(source: str, where: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as error:
        raise GenerationError(where, f"cannot relink its imports: not valid Python ({error.msg})") from None


def _relinkable(node: ast.AST, modules: Collection[str]) -> bool:
    """Whether `node` is a relative import (`from .`) that imports from or imports one of `modules`."""
    if not isinstance(node, ast.ImportFrom) or node.level != 1:
        return False
    if node.module is not None:
        return node.module.split(".")[0] in modules
    return any(alias.name in modules for alias in node.names)


def _own(node: ast.ImportFrom, modules: Collection[str]) -> list[ast.alias]:
    """The modules of the package's own that a `from . import` names beside shared ones."""
    return [alias for alias in node.names if alias.name not in modules] if node.module is None else []


def _whole_lines(node: ast.AST, lines: list[str]) -> bool:
    """Whether the statement `node` has its lines to itself (a comment may follow it)."""
    assert isinstance(node, ast.stmt) and node.end_lineno is not None and node.end_col_offset is not None
    after = lines[node.end_lineno - 1].encode()[node.end_col_offset :].decode().strip()
    return node.col_offset == 0 and (not after or after.startswith("#"))


def _relinked_in_place(
    source: str, nodes: list[ast.AST], runtime_package: str, modules: Collection[str], where: str
) -> str:
    """`source` with each import of `nodes` relinked where it stands."""
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    # from the last statement to the first, so the positions of those before stay valid
    for node in sorted(nodes, key=lambda node: (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)))[::-1]:
        assert isinstance(node, ast.ImportFrom) and node.end_lineno is not None and node.end_col_offset is not None
        start = offsets[node.lineno - 1] + node.col_offset  # ast offsets count UTF-8 bytes
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        statement = data[start:end].decode()
        if _own(node, modules):
            shared, rest = _split(statement, node, runtime_package, modules, where)
            text = shared + "\n" + " " * node.col_offset + rest
        else:
            text = _spliced(statement, node, runtime_package)
        data = data[:start] + text.encode() + data[end:]
    return data.decode()


def _split(
    statement: str, node: ast.ImportFrom, runtime_package: str, modules: Collection[str], where: str
) -> tuple[str, str]:
    """A `from . import` of shared and own modules as two statements, as `ast.unparse` writes
    them (refused if that would lose a comment): the shared ones', and the own ones'."""
    if _has_comment(statement):
        raise GenerationError(
            where, f"cannot relink `{ast.unparse(node)}`: a comment inside the statement would be lost"
        )
    shared = [alias for alias in node.names if alias.name in modules]
    return (
        ast.unparse(ast.ImportFrom(module=runtime_package, names=shared, level=0)),
        ast.unparse(ast.ImportFrom(module=None, names=_own(node, modules), level=1)),
    )


def _spliced(statement: str, node: ast.ImportFrom, runtime_package: str) -> str:
    """The text of the statement `node` (whose text is `statement`) importing from `runtime_package`:
    its `.module` (or lone `.`) replaced by the absolute name where it stands, so the layout and
    comments stay."""
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
