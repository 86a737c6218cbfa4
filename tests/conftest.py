"""Fixtures shared by several test modules (helpers live in tests.support.helpers), and how an
`async def` test runs: in a fresh event loop under a timeout, failing if it leaves a task behind
(`tests.support.helpers.run_bounded`). `@pytest.mark.async_timeout(seconds)` (on a test, or as a module's
`pytestmark`) changes its bound from `ASYNC_TEST_TIMEOUT`."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support.helpers import (
    ASYNC_TEST_TIMEOUT,
    FIXTURES,
    SUMMARY,
    generate_package,
    import_package,
    ir_of,
    run_bounded,
)

# `too_slow` measures wall-clock time, which on a shared 2-core machine (and under
# pytest-xdist) says more about the neighbours than about the strategies: a
# recursive schema type once took 42 s for its first input while other jobs ran.
# Every other health check stays on.
settings.register_profile("shared-machine", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("shared-machine")


@pytest.fixture(scope="session")
def rules_pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The package generated from tests/fixtures/rules.json."""
    out = tmp_path_factory.mktemp("rules")
    generate_package(FIXTURES / "rules.json", out, "rules_pkg")
    return import_package(out, "rules_pkg")


@pytest.fixture(scope="session")
def rules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The IR of tests/fixtures/rules.json, by type name."""
    return ir_of(FIXTURES / "rules.json", tmp_path_factory.mktemp("ir")).by_name()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print what tests recorded as their SUMMARY."""
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, text in getattr(report, "user_properties", ()):
                if name == SUMMARY and report.when == "call":
                    terminalreporter.write_line(text)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "async_timeout(seconds): the bound of an async test (tests.support.helpers.run_bounded)"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    marker = pyfuncitem.get_closest_marker("async_timeout")
    timeout = marker.args[0] if marker else ASYNC_TEST_TIMEOUT
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    run_bounded(pyfuncitem.obj(**arguments), timeout)
    return True
