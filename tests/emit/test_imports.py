"""The names a static module takes from its package's schema, read off its imports (generator/emit/imports.py)."""

from __future__ import annotations

import pytest

from generator.emit.imports import check_imports, imported_names
from generator.errors import GenerationError

MODULE = """
from __future__ import annotations

from typing import TYPE_CHECKING

from ._runtime import UNDEFINED
from .models import SessionId, ToolKind as Kind
from models import NotTheSchema
from ..models import NotThePackage

if TYPE_CHECKING:
    from .models import PlanEntry
"""


def test_the_names_imported_from_the_packages_models_are_read_in_order_under_type_checking_too():
    assert imported_names(MODULE) == ("SessionId", "ToolKind", "PlanEntry")


def test_another_sibling_module_can_be_read():
    assert imported_names(MODULE, "_runtime") == ("UNDEFINED",)


def test_a_module_whose_names_the_schema_defines_passes():
    check_imports("m.py", MODULE, {"SessionId", "ToolKind", "PlanEntry"}, "schema.json")


def test_each_name_the_schema_lacks_fails_generation_naming_it_and_the_module():
    with pytest.raises(GenerationError, match=r"schema.json: m.py imports \['ToolKind', 'PlanEntry'\] from .models"):
        check_imports("m.py", MODULE, {"SessionId"}, "schema.json")
