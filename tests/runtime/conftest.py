"""`async def` tests run in a fresh event loop each, and fail if they leave a task behind."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import Any

import pytest


async def _without_leaks(test: Awaitable[None]) -> None:
    await test
    leaked = asyncio.all_tasks() - {asyncio.current_task()}
    assert not leaked, leaked


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(_without_leaks(pyfuncitem.obj(**arguments)))
    return True
