"""`tests.support.helpers.run_bounded`, which runs every async connection test: a test that hangs, or
whose cancellation is broken, fails within its bound instead of hanging the suite."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from tests.support.helpers import CANCEL_GRACE, run_bounded


def test_a_test_that_hangs_fails_at_its_timeout_saying_where_it_waited():
    async def hangs() -> None:
        await asyncio.Event().wait()

    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match=r"(?s)longer than 0\.2 s; it was awaiting:.*in hangs"):
        run_bounded(hangs(), 0.2)
    assert time.monotonic() - started < 0.2 + CANCEL_GRACE


def test_a_test_that_ignores_its_cancellation_is_abandoned_after_the_grace():
    async def ignores_cancellation() -> None:
        while True:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(60)

    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match=f"did not end within {CANCEL_GRACE} s of its cancellation"):
        run_bounded(ignores_cancellation(), 0.2)
    assert time.monotonic() - started < 0.2 + CANCEL_GRACE + 2


def test_a_test_that_leaves_a_task_behind_fails_and_its_own_errors_pass_through():
    async def leaks() -> None:
        asyncio.get_running_loop().create_task(asyncio.sleep(60))

    with pytest.raises(AssertionError, match="sleep"):
        run_bounded(leaks())

    async def fails() -> None:
        raise RuntimeError("its own error")

    with pytest.raises(RuntimeError, match="its own error"):
        run_bounded(fails())
