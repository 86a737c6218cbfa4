"""Fixtures shared by several test modules (helpers live in tests.helpers)."""

from __future__ import annotations

import pytest

from tests.helpers import FIXTURES, generate_package, import_package


@pytest.fixture(scope="session")
def rules_pkg(tmp_path_factory: pytest.TempPathFactory):
    """The package generated from tests/fixtures/rules.json."""
    out = tmp_path_factory.mktemp("rules")
    generate_package(FIXTURES / "rules.json", out, "rules_pkg")
    return import_package(out, "rules_pkg")
