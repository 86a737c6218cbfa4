"""The connection's public API beyond the typed methods (generator/runtime/_connection.py):
tasks the connection owns, requests and notifications for any method, wire observers; over
the hand-written wire of test_connection.py and the in-memory transports of _memory.py."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import logging
import warnings
from typing import Any

import pytest

from generator.runtime import _connection as conn
from generator.runtime import _observe as observe
from generator.runtime._memory import MemoryTransport, memory_transports
from tests.runtime import test_connection
from tests.runtime.test_connection import Handler, Response


def decode(data: Any, *, side: str, strict: bool = False, on_salvage: Any = None) -> Any:
    """test_connection's decoder, with a response's absent error UNDEFINED as the engine reads it."""
    message = test_connection.decode(data, side=side, strict=strict, on_salvage=on_salvage)
    if isinstance(message, Response) and message.error is None:
        message.error = conn.UNDEFINED
    return message


WIRE = dataclasses.replace(test_connection.WIRE, decoder=test_connection.decoder(decode))


def serve(transport: Any, wire: conn.Wire = WIRE, handler: Any = None) -> conn.Connection:
    return conn.Connection(
        handler or Handler(),
        transport,
        wire=wire,
        side="agent",
        peer="client",
        requests={"echo": lambda handler, params: handler.echo(params)},
        notifications={"note": lambda handler, params: handler.note(params)},
    )


class Peer:
    """The other end of a memory transport, as JSON values."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport

    async def send(self, message: Any) -> None:
        await self.transport.send(json.dumps(message).encode())

    async def receive(self) -> Any:
        data = await asyncio.wait_for(self.transport.receive(), 5)
        return None if data is None else json.loads(data)


def connected(wire: conn.Wire = WIRE) -> tuple[conn.Connection, Peer]:
    ours, theirs = memory_transports()
    return serve(ours, wire), Peer(theirs)


# --- tasks the connection owns -----------------------------------------------------------


async def test_a_started_task_is_cancelled_and_awaited_when_the_connection_closes():
    connection, _ = connected()
    cleaned_up = asyncio.Event()

    async def background() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0)  # cleanup that awaits: close waits for it
            cleaned_up.set()

    task = connection.start_task(background(), name="background")
    assert task.get_name() == "background"
    await asyncio.sleep(0)
    await connection.close()
    assert task.cancelled() and cleaned_up.is_set()


async def test_a_started_task_ends_with_the_connection_when_the_peer_leaves():
    connection, peer = connected()
    task = connection.start_task(asyncio.sleep(60))
    await peer.transport.close()
    await asyncio.wait_for(connection.wait_closed(), 5)
    assert task.cancelled()


async def test_a_started_tasks_result_is_its_own():
    connection, _ = connected()
    try:
        assert await connection.start_task(asyncio.sleep(0, "done")) == "done"
        assert connection._tasks == set()
    finally:
        await connection.close()


async def test_a_failing_task_is_logged_once_and_never_as_an_unretrieved_exception(caplog):
    connection, _ = connected()
    unhandled: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: unhandled.append(context))

    async def failing() -> None:
        raise KeyError("background bug")

    with caplog.at_level(logging.ERROR):
        task = connection.start_task(failing(), name="failing")
        await asyncio.wait([task])
        del task
        gc.collect()
        await connection.close()
        gc.collect()
    records = [record for record in caplog.records if "failing" in record.getMessage()]
    assert [record.getMessage() for record in records] == ["the connection's task failing failed"]
    assert records[0].exc_info is not None and records[0].exc_info[0] is KeyError
    assert unhandled == []


async def test_no_task_starts_on_a_closed_connection_and_its_coroutine_is_closed():
    connection, _ = connected()
    await connection.close()

    async def work() -> None:
        raise AssertionError("ran")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would be a RuntimeWarning
        coroutine = work()
        with pytest.raises(conn.ConnectionClosed, match="cannot start a task"):
            connection.start_task(coroutine)
        assert coroutine.cr_frame is None  # closed
        gc.collect()


# --- requests and notifications for any method -------------------------------------------


async def test_send_request_sends_any_method_with_raw_params_and_returns_the_raw_result():
    connection, peer = connected()
    try:
        call = asyncio.create_task(connection.send_request("vendor/thing", {"deep": [1, {"x": None}]}))
        request = await peer.receive()
        assert request == {"jsonrpc": "2.0", "id": 0, "method": "vendor/thing", "params": {"deep": [1, {"x": None}]}}
        await peer.send({"jsonrpc": "2.0", "id": 0, "result": [{"any": "json"}]})
        assert await asyncio.wait_for(call, 5) == [{"any": "json"}]
        failing = asyncio.create_task(connection.send_request("vendor/other", []))
        assert (await peer.receive())["params"] == []
        await peer.send({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}})
        with pytest.raises(conn.RequestError) as error:
            await asyncio.wait_for(failing, 5)
        assert (error.value.code, error.value.message) == (-32601, "nope")
        await connection.send_notification("vendor/event", ["raw"])
        assert await peer.receive() == {"jsonrpc": "2.0", "method": "vendor/event", "params": ["raw"]}
    finally:
        await connection.close()


async def test_the_schemas_own_methods_and_non_names_are_refused():
    connection, _ = connected(dataclasses.replace(WIRE, schema_methods=frozenset({"echo", "note"})))
    try:
        with pytest.raises(ValueError, match="'echo' is a method of the schema: call the connection's typed method"):
            await connection.send_request("echo", 1)
        with pytest.raises(ValueError, match="'note' is a method of the schema"):
            await connection.send_notification("note", 1)
        with pytest.raises(ValueError, match="a method name is a non-empty string, not ''"):
            await connection.send_request("")
        with pytest.raises(ValueError, match="not 7"):
            await connection.send_notification(7)  # type: ignore[arg-type]
    finally:
        await connection.close()


async def test_send_request_on_a_closed_connection_raises_connection_closed():
    connection, _ = connected()
    await connection.close()
    with pytest.raises(conn.ConnectionClosed):
        await connection.send_request("vendor/thing")


# --- wire observers --------------------------------------------------------------------------


class Recorder(observe.WireObserver):
    def __init__(self) -> None:
        self.events: list[observe.WireEvent] = []
        self.closed = 0

    def on_message(self, event: observe.WireEvent) -> None:
        self.events.append(event)

    def on_close(self) -> None:
        self.closed += 1


async def test_an_observer_sees_every_message_in_and_out_until_it_is_removed_and_then_the_close():
    connection, peer = connected()
    assert connection._tap is None  # no observer: nothing to call
    recorder, other = Recorder(), Recorder()
    connection.add_observer(recorder)
    connection.add_observer(other)
    await peer.send({"jsonrpc": "2.0", "id": 5, "method": "echo", "params": "hi"})
    assert await peer.receive() == {"jsonrpc": "2.0", "id": 5, "result": "hi"}
    await peer.send({"jsonrpc": "2.0", "method": "note", "params": 1})
    call = asyncio.create_task(connection.send_request("vendor/x", 2))
    await peer.receive()
    await peer.send({"jsonrpc": "2.0", "id": 0, "result": 3})
    assert await asyncio.wait_for(call, 5) == 3
    connection.remove_observer(other)
    await peer.transport.close()
    await asyncio.wait_for(connection.wait_closed(), 5)
    seen = [(e.direction, e.kind, e.method, e.id, e.elapsed is not None) for e in recorder.events]
    assert seen == [
        ("in", "request", "echo", 5, False),
        ("out", "response", "echo", 5, True),
        ("in", "notification", "note", None, False),
        ("out", "request", "vendor/x", 0, False),
        ("in", "response", "vendor/x", 0, True),
    ]
    assert {event.side for event in recorder.events} == {"agent"}
    assert recorder.closed == 1 and other.closed == 0 and len(other.events) == 5
    with pytest.raises(ValueError, match="is not observing this connection"):
        connection.remove_observer(other)


async def test_removing_the_last_observer_leaves_nothing_to_call():
    connection, _ = connected()
    try:
        recorder = Recorder()
        connection.add_observer(recorder)
        connection.remove_observer(recorder)
        assert connection._tap is None
    finally:
        await connection.close()


# --- closing ---------------------------------------------------------------------------------


async def test_a_connection_closed_before_it_read_anything_ends_its_tasks_and_its_transport():
    connection, peer = connected()
    await connection.close()  # the reader has not taken its first step yet
    assert await peer.receive() is None  # the transport is closed: the peer sees the end
    # and no task is left behind (the conftest checks)


def test_a_request_errors_text_shows_its_code_message_and_data():
    error = conn.RequestError(-32603, "Internal error", {"details": "OPENAI_API_KEY is not set"})
    assert str(error) == "Internal error (-32603): {'details': 'OPENAI_API_KEY is not set'}"


def test_a_request_error_without_data_shows_no_data():
    assert str(conn.RequestError(-32601, "Method not found")) == "Method not found (-32601)"


def test_a_request_errors_huge_or_deep_data_is_cut_short():
    deep: Any = "bottom"
    for _ in range(100_000):
        deep = [deep]
    assert len(str(conn.RequestError(-32603, "Internal error", deep))) < 100
    assert len(str(conn.RequestError(-32603, "Internal error", "x" * 1_000_000))) < 600


# --- the version check a package of one protocol version binds ------------------------------


def _invalid_request(data: Any = conn.UNDEFINED, message: str = "Invalid request") -> conn.RequestError:
    return conn.RequestError(-32600, message, data)


@dataclasses.dataclass
class _Answer:
    protocol_version: int


V3_CHECK: conn.VersionCheck[_Answer] = conn.VersionCheck(3, _invalid_request, lambda answer: answer.protocol_version)


def test_the_version_check_words_its_refusals_with_the_version_it_is_bound_to():
    def refusal(error: conn.RequestError | None) -> tuple[str, Any]:
        assert error is not None and error.code == -32600
        return error.message, error.data

    assert refusal(V3_CHECK.repeated_initialize({}, True, False)) == (
        "Invalid request",
        "ACP v3 initialize is already in progress",
    )
    assert refusal(V3_CHECK.repeated_initialize({}, False, True)) == (
        "Invalid request",
        "ACP v3 initialize must not be repeated after other requests",
    )
    assert refusal(V3_CHECK.repeated_initialize({"protocolVersion": 2}, False, False)) == (
        "Invalid request: a repeated initialize must request protocol version 3 or later",
        conn.UNDEFINED,
    )
    assert refusal(V3_CHECK.not_initialized("session/new")) == (
        "Invalid request",
        "ACP v3 connection must be initialized before 'session/new'",
    )


def test_the_version_check_serves_a_repeat_that_asks_for_its_version_or_a_newer_one_or_none():
    for params in ({"protocolVersion": 3}, {"protocolVersion": 4}, {}, None, {"protocolVersion": "3"}):
        assert V3_CHECK.repeated_initialize(params, False, False) is None


async def test_the_version_check_passes_an_answer_of_its_version_and_refuses_another():
    async def answer(version: int) -> _Answer:
        return _Answer(version)

    assert await V3_CHECK.answered(answer(3)) == _Answer(3)
    with pytest.raises(conn.RequestError) as refused:
        await V3_CHECK.answered(answer(2))
    assert (refused.value.code, refused.value.message) == (
        -32600,
        "Invalid request: The v3 API only supports protocol version 3",
    )
    assert refused.value.data == {"expectedProtocolVersion": 3, "receivedProtocolVersion": 2}
