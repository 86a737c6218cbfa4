"""generator/emit/relink.py: a package's relative imports of the shared runtime modules become
imports from the runtime package; everything else stays as written."""

from __future__ import annotations

import ast

import pytest

from generator.emit.relink import relink
from generator.errors import GenerationError

SHARED = {"_runtime", "_connection", "_jsonrpc"}


def relinked(source: str) -> str:
    return relink(source, "acp_runtime", SHARED, "pkg/module.py")


def test_an_import_from_a_shared_module_names_the_runtime_package() -> None:
    assert relinked("from ._runtime import UNDEFINED, DecodeError\n") == (
        "from acp_runtime._runtime import UNDEFINED, DecodeError\n"
    )


def test_a_shared_module_imported_by_name_keeps_its_alias() -> None:
    assert relinked("from . import _runtime as _rt\n") == "from acp_runtime import _runtime as _rt\n"


def test_imports_of_the_package_own_modules_stay_relative() -> None:
    source = "from .models import Implementation\nfrom . import _codec\nimport json\nfrom json import dumps\n"
    assert relinked(source) == source


def test_a_statement_naming_shared_and_own_modules_is_split_in_two() -> None:
    assert relinked("from . import _codec, _jsonrpc, models as m\n") == (
        "from acp_runtime import _jsonrpc\n\nfrom . import _codec, models as m\n"
    )


def test_top_level_imports_of_shared_modules_move_to_a_block_before_the_relative_ones() -> None:
    """Where isort puts a third-party import: after the standard library, before the package's
    own relative imports, a blank line between, sorted by module; the rest stays in place."""
    source = (
        '"""Doc."""\n'
        "\n"
        "import json\n"
        "\n"
        "from . import _codec, _runtime as _rt\n"
        "from ._agent import block\n"
        "from ._runtime import UNDEFINED  # the sentinel\n"
        "from ._connection import (\n"
        "    ConnectionClosed,\n"
        ")\n"
        "from .models import Implementation\n"
        "\n"
        "X = 1\n"
    )
    assert relinked(source) == (
        '"""Doc."""\n'
        "\n"
        "import json\n"
        "\n"
        "from acp_runtime import _runtime as _rt\n"
        "from acp_runtime._connection import (\n"
        "    ConnectionClosed,\n"
        ")\n"
        "from acp_runtime._runtime import UNDEFINED  # the sentinel\n"
        "\n"
        "from . import _codec\n"
        "from ._agent import block\n"
        "from .models import Implementation\n"
        "\n"
        "X = 1\n"
    )


def test_without_other_relative_imports_the_block_stays_where_the_first_import_was() -> None:
    source = "import json\n\nfrom ._runtime import UNDEFINED\nfrom ._connection import Transport\n\nX = 1\n"
    assert relinked(source) == (
        "import json\n\nfrom acp_runtime._connection import Transport\nfrom acp_runtime._runtime import UNDEFINED\n\nX = 1\n"
    )


def test_a_parenthesised_import_keeps_its_layout_and_comments() -> None:
    source = (
        "from ._connection import (  # the engine\n    DEFAULT_LIMITS,\n    ConnectionClosed,  # an error\n)\nX = 1\n"
    )
    assert relinked(source) == source.replace("from ._connection", "from acp_runtime._connection")


def test_spaces_and_a_backslash_in_the_statement_stay_where_they_are() -> None:
    source = "from  .  _runtime  import \\\n    UNDEFINED\n"
    assert relinked(source) == "from  acp_runtime._runtime  import \\\n    UNDEFINED\n"


def test_imports_inside_blocks_and_functions_keep_their_indentation() -> None:
    source = (
        "if TYPE_CHECKING:\n"
        "    from ._runtime import Model\n"
        "\n"
        "def f() -> None:\n"
        "    from . import _codec, _connection  # first use\n"
        "    return None\n"
    )
    assert relinked(source) == (
        "if TYPE_CHECKING:\n"
        "    from acp_runtime._runtime import Model\n"
        "\n"
        "def f() -> None:\n"
        "    from acp_runtime import _connection\n"
        "    from . import _codec  # first use\n"
        "    return None\n"
    )
    ast.parse(relinked(source))


def test_text_before_an_import_on_its_lines_may_hold_any_characters() -> None:
    source = 'A = "é ü 😀"; from ._runtime import UNDEFINED\nB = "ß"\n'
    assert relinked(source) == 'A = "é ü 😀"; from acp_runtime._runtime import UNDEFINED\nB = "ß"\n'


def test_a_submodule_of_a_shared_module_is_shared_too_but_a_parent_relative_import_is_not() -> None:
    assert relinked("from ._runtime.x import y\n") == "from acp_runtime._runtime.x import y\n"
    assert relinked("from .._runtime import y\n") == "from .._runtime import y\n"


def test_a_comment_inside_a_statement_that_must_be_split_is_refused_rather_than_lost() -> None:
    with pytest.raises(GenerationError, match=r"pkg/module.py: cannot relink .*comment"):
        relinked("from . import (\n    _codec,  # own\n    _runtime,\n)\n")


def test_source_that_does_not_parse_is_an_error_naming_it() -> None:
    with pytest.raises(GenerationError, match=r"pkg/module.py: cannot relink its imports: not valid Python"):
        relinked("from ._runtime import (\n")


def test_source_without_shared_imports_is_returned_unchanged() -> None:
    source = '"""Doc."""\n\nx = 1  # comment\n'
    assert relinked(source) is source


def test_the_block_joins_the_third_party_imports_before_it_in_isort_order() -> None:
    source = "import json\n\nimport anyio\nfrom mcp.server import Server\n\nfrom ._mcp import PROTOCOL\nfrom .models import M\n"
    assert relinked(source.replace("_mcp", "_runtime")) == (
        "import json\n"
        "\n"
        "import anyio\n"
        "from acp_runtime._runtime import PROTOCOL\n"
        "from mcp.server import Server\n"
        "\n"
        "from .models import M\n"
    )
