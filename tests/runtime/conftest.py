"""`async def` tests run in a fresh event loop each, under a timeout, and fail if they leave a
task behind (`tests.helpers.run_bounded`)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from tests.helpers import run_bounded


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    run_bounded(pyfuncitem.obj(**arguments))
    return True
