"""Fixtures shared by several test modules (helpers live in tests.helpers)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import FIXTURES, SUMMARY, generate_package, import_package, ir_of

# `too_slow` measures wall-clock time, which on a shared 2-core machine (and under
# pytest-xdist) says more about the neighbours than about the strategies: a
# recursive schema type once took 42 s for its first input while other jobs ran.
# Every other health check stays on.
settings.register_profile("shared-machine", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("shared-machine")


@pytest.fixture(scope="session")
def rules_pkg(tmp_path_factory: pytest.TempPathFactory):
    """The package generated from tests/fixtures/rules.json."""
    out = tmp_path_factory.mktemp("rules")
    generate_package(FIXTURES / "rules.json", out, "rules_pkg")
    return import_package(out, "rules_pkg")


@pytest.fixture(scope="session")
def rules(tmp_path_factory: pytest.TempPathFactory):
    """The IR of tests/fixtures/rules.json, by type name."""
    return ir_of(FIXTURES / "rules.json", tmp_path_factory.mktemp("ir")).by_name()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print what tests recorded as their SUMMARY."""
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, text in getattr(report, "user_properties", ()):
                if name == SUMMARY and report.when == "call":
                    terminalreporter.write_line(text)
