"""Shared helpers: generate a package from a schema into a temporary directory."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import math
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any

import pytest

from generator.errors import GenerationError
from generator.ir.model import Field, Module, ObjectType
from generator.output.write import write_package
from generator.pipeline import build_ir, generate

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SUMMARY = "summary"
"""A test's `record_property(SUMMARY, text)` is printed at the end of the run (by conftest;
under pytest-xdist too, whose workers' own output is not shown)."""
V2_SCHEMA = ROOT / "schema" / "v2" / "schema.unstable.json"
# The black and IR caches of the tests, one directory per pytest-xdist worker so that no two
# processes write the same file (test_cli copies .cache without it).
TEST_CACHES = "acp-codegen-tests"
CACHE = ROOT / ".cache" / TEST_CACHES / os.environ.get("PYTEST_XDIST_WORKER", "main")
MYPY_CACHE = CACHE / "mypy"
ASYNC_TEST_TIMEOUT = 60.0
"""Seconds an async connection test may take (`run_bounded`): a bound, never a speed target."""
CANCEL_GRACE = 5.0
"""Seconds a timed-out test has to end once cancelled before its event loop is abandoned."""


def _awaiting(coroutine: Any) -> str:
    """Where a suspended coroutine is, down the chain of what it awaits (one line a frame)."""
    lines = []
    while coroutine is not None:
        frame = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "gi_frame", None)
        if frame is not None:
            lines.append(f"  {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        coroutine = getattr(coroutine, "cr_await", None) or getattr(coroutine, "gi_yieldfrom", None)
    return "\n".join(lines)


def run_bounded(test: Coroutine[Any, Any, None], timeout: float = ASYNC_TEST_TIMEOUT) -> None:
    """Run `test` in a fresh event loop; fail it when it leaves a task behind or is still running
    after `timeout` seconds. A test that hangs is cancelled (its stack at that moment is the
    failure), and one that does not end within `CANCEL_GRACE` seconds of that (a broken
    cancellation) is abandoned with its loop: the suite fails, it never hangs."""

    async def without_leaks() -> None:
        await test
        leaked = asyncio.all_tasks() - {asyncio.current_task()}
        assert not leaked, leaked

    loop = asyncio.new_event_loop()
    task = loop.create_task(without_leaks())
    where: list[str] = []

    def expire() -> None:
        where.append(_awaiting(task.get_coro()))
        task.cancel()

    timers = [loop.call_later(timeout, expire), loop.call_later(timeout + CANCEL_GRACE, loop.stop)]
    try:
        loop.run_until_complete(task)
    except BaseException:
        if not where:
            raise
    finally:
        for timer in timers:
            timer.cancel()
        rest = asyncio.all_tasks(loop)
        for leftover in rest:
            leftover.cancel()
        if rest and not where:
            loop.run_until_complete(asyncio.wait(rest, timeout=CANCEL_GRACE))
        if not where:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
    if where:
        ended = "" if task.done() else f", and it did not end within {CANCEL_GRACE} s of its cancellation"
        pytest.fail(f"the test ran longer than {timeout} s{ended}; it was awaiting:\n{where[0]}", pytrace=False)


class Stepped:
    """Awaits `coroutine`, calling `on_step(n)` before its n-th step (each resumption after an
    await): the owner of a connection, whose every await a test can cancel it at."""

    def __init__(self, coroutine: Any, on_step: Any) -> None:
        self.coroutine, self.on_step = coroutine, on_step

    def __await__(self) -> Any:
        value, error, step = None, None, 0
        while True:
            self.on_step(step)
            step += 1
            try:
                yielded = self.coroutine.send(value) if error is None else self.coroutine.throw(error)
            except StopIteration as stop:
                return stop.value
            try:
                value, error = (yield yielded), None
            except BaseException as thrown:  # passed on to the coroutine
                value, error = None, thrown


def copy_tracked(names: tuple[str, ...], destination: Path) -> None:
    """Copy what git tracks under each of `names` (files or folders of this checkout) to
    `destination`, as a fresh clone would have it: no caches, builds or stray files."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *names], cwd=ROOT, capture_output=True, check=True)
    for name in listed.stdout.decode().split("\0"):
        if name and (ROOT / name).exists():  # a tracked file deleted in the work tree is not copied
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)


def ir_of(schema: dict[str, Any] | Path, tmp_path: Path) -> Module:
    """The IR of a schema given as a dict (written to a file) or a path."""
    if isinstance(schema, dict):
        path = tmp_path / "schema.json"
        path.write_text(json.dumps(schema))
        schema = path
    return build_ir(schema, "pkg", ROOT)


def error_for(schema: dict[str, Any], tmp_path: Path) -> GenerationError:
    """The GenerationError that building the IR of `schema` raises."""
    with pytest.raises(GenerationError) as caught:
        ir_of(schema, tmp_path)
    return caught.value


def fields(obj: ObjectType) -> dict[str, Field]:
    """An object type's fields by wire name."""
    return {item.wire_name: item for item in obj.fields}


def generate_package(schema: Path, out: Path, package: str) -> Path:
    result = generate(schema, package, ROOT, CACHE)
    write_package(out / package, result.files)
    return out / package


# The runtime package acp_v2 and acp_v1 share in generated/ ([tool.acp-codegen] runtime-package).
RUNTIME = "acp_runtime"


def runtime_module(name: str) -> Any:
    """The shared runtime module `name` (`"_runtime"`) of the packages in generated/."""
    return import_package(ROOT / "generated", f"{RUNTIME}.{name}")


def import_package(out: Path, package: str) -> Any:
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True, env=None)


def json_difference(actual: object, expected: object, *, ordered: bool = False, path: str = "$") -> str | None:
    """Where two JSON values differ, compared type-exactly; None when they are identical.

    `==` says `1 == 1.0 == True` and `0.0 == -0.0`, so a codec that writes an integer for a
    float, `1` for `true` or a `str` subclass for a string passes it. Here every value must
    have exactly the type of its counterpart (bool, int and float apart; no subclasses),
    floats keep their sign, and objects have the same keys; their order counts only when
    `ordered` (the codec promises the schema's property order, not the input's)."""
    if type(actual) is not type(expected):
        return f"{path}: {type(actual).__name__} {actual!r} where {type(expected).__name__} {expected!r} was expected"
    if type(actual) is dict:
        assert isinstance(expected, dict)
        if actual.keys() != expected.keys():
            missing, extra = expected.keys() - actual.keys(), actual.keys() - expected.keys()
            return f"{path}: keys {sorted(map(repr, extra))} too many, {sorted(map(repr, missing))} missing"
        if ordered and list(actual) != list(expected):
            return f"{path}: keys in the order {list(actual)!r} where {list(expected)!r} was expected"
        for key, item in expected.items():
            step = f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{key!r}]"
            found = json_difference(actual[key], item, ordered=ordered, path=path + step)
            if found:
                return found
        return None
    if type(actual) is list:
        assert isinstance(expected, list)
        if len(actual) != len(expected):
            return f"{path}: {len(actual)} items where {len(expected)} were expected"
        for index, (left, right) in enumerate(zip(actual, expected, strict=True)):
            found = json_difference(left, right, ordered=ordered, path=f"{path}[{index}]")
            if found:
                return found
        return None
    if type(actual) is float:
        assert isinstance(expected, float)
        same = actual == expected and math.copysign(1, actual) == math.copysign(1, expected)
        return None if same or (math.isnan(actual) and math.isnan(expected)) else f"{path}: {actual!r} != {expected!r}"
    return None if actual == expected else f"{path}: {actual!r} != {expected!r}"


def assert_json_identical(actual: object, expected: object, *, ordered: bool = False) -> None:
    """`actual` is the JSON value `expected`, type for type (see `json_difference`)."""
    found = json_difference(actual, expected, ordered=ordered)
    assert found is None, found


@contextlib.asynccontextmanager
async def uvicorn_serving(app: Any) -> AsyncIterator[str]:
    """An ASGI `app` under uvicorn on a free port of 127.0.0.1: its `http://127.0.0.1:PORT/acp`."""
    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.ensure_future(server.serve(sockets=[listener]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/acp"
    finally:
        server.should_exit = True
        await task
        listener.close()
