"""generator/runtime/_connection.py on its own: the engine over a minimal hand-written wire
(two methods, no schema), the stream transport over real pipes and the process helper on
a real child. The typed connections of a generated package are tested in
tests/package/test_connection.py."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from generator.runtime import _connection as conn
from generator.runtime import _runtime as rt
from tests.support.helpers import ROOT
from tests.support.hostile_lines import DEEP

# --- a wire without a schema: "echo" (request), "note" (notification), "$/cancel" ----------


@dataclass
class Request:
    id: Any
    method: str
    params: Any = rt.UNDEFINED


@dataclass
class Notification:
    method: str
    params: Any = rt.UNDEFINED


@dataclass
class Response:
    id: Any
    result: Any = rt.UNDEFINED
    error: Any = rt.UNDEFINED


@dataclass
class ErrorObject:
    code: int
    message: str
    data: Any = rt.UNDEFINED


def decode(data: Any, *, side: str, strict: bool = False, on_salvage: Any = None) -> Any:
    if type(data) is not dict or data.get("jsonrpc") != "2.0":
        raise rt.DecodeError("$", "a JSON-RPC message", data, code=rt.INVALID_REQUEST)
    if "method" not in data:
        error = data.get("error")
        return Response(
            data.get("id"), data.get("result", rt.UNDEFINED), ErrorObject(**error) if error else rt.UNDEFINED
        )
    if data["method"] not in ("echo", "note", "$/cancel") and not data["method"].startswith("_"):
        raise rt.DecodeError("$.method", "a known method", data["method"], code=rt.METHOD_NOT_FOUND)
    if "id" in data:
        return Request(data["id"], data["method"], data.get("params"))
    return Notification(data["method"], data.get("params"))


def encode(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"jsonrpc": "2.0"}
    if not isinstance(message, Notification):
        data["id"] = message.id
    if isinstance(message, Response):
        if message.error is rt.UNDEFINED:
            data["result"] = message.result
        else:
            error = {"code": message.error.code, "message": message.error.message}
            data["error"] = error if message.error.data is rt.UNDEFINED else {**error, "data": message.error.data}
    else:
        data["method"] = message.method
        data["params"] = message.params
    return data


def decoder(decode: Callable[..., Any]) -> Callable[..., Callable[[Any], Any]]:
    """The `Wire.decoder` of a decode function that takes the options as keywords."""
    return lambda side, strict, on_salvage: functools.partial(decode, side=side, strict=strict, on_salvage=on_salvage)


WIRE = conn.Wire(
    decoder=decoder(decode),
    encode=encode,
    request=Request,
    notification=Notification,
    response=Response,
    decode_result=lambda method, result, side, strict, on_salvage, path: result,
    error=conn.RequestError,
    error_object=ErrorObject,
    cancel_method="$/cancel",
    cancel_params=lambda request_id: {"id": request_id},
    cancelled_id=lambda params: params["id"],
    initialize_method=None,
)


@dataclass
class Handler:
    notes: list[Any] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def echo(self, params: Any) -> Any:
        if params == "fail":
            raise RuntimeError("handler bug")
        if params == "refuse":
            raise conn.RequestError(-32002, "Resource not found", {"id": 7})
        if params == "hold":
            self.started.set()
            await asyncio.sleep(60)
        return params

    async def note(self, params: Any) -> None:
        await asyncio.sleep(0)
        self.notes.append(params)


class MemoryTransport:
    """Messages as queue items: what the engine sends, and what the test feeds it."""

    def __init__(self) -> None:
        self.incoming: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.sent: asyncio.Queue[Any] = asyncio.Queue()

    async def receive(self) -> bytes | None:
        return await self.incoming.get()

    async def send(self, message: bytes) -> None:
        self.sent.put_nowait(json.loads(message.decode("utf-8")))  # valid UTF-8 JSON, or this fails

    async def close(self) -> None:
        pass

    def feed(self, *lines: Any) -> None:
        """Lines as bytes, messages as JSON values; None ends the stream."""
        for line in lines:
            self.incoming.put_nowait(line if line is None or isinstance(line, bytes) else json.dumps(line).encode())

    async def next(self) -> Any:
        return await asyncio.wait_for(self.sent.get(), 5)


def connect(handler: Handler, transport: Any) -> conn.Connection:
    return conn.Connection(
        handler,
        transport,
        wire=WIRE,
        side="agent",
        peer="client",
        requests={"echo": lambda handler, params: handler.echo(params)},
        notifications={"note": lambda handler, params: handler.note(params)},
    )


def request(request_id: Any, params: Any, method: str = "echo") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


# --- serving -------------------------------------------------------------------------------


async def test_a_request_is_answered_with_its_handlers_result():
    transport = MemoryTransport()
    async with connect(Handler(), transport):
        transport.feed(request(1, {"x": [1, 2.5]}))
        assert await transport.next() == {"jsonrpc": "2.0", "id": 1, "result": {"x": [1, 2.5]}}


async def test_a_request_error_is_the_answer_and_any_other_exception_is_internal(caplog):
    transport = MemoryTransport()
    async with connect(Handler(), transport):
        transport.feed(request(1, "refuse"))
        assert (await transport.next())["error"] == {"code": -32002, "message": "Resource not found", "data": {"id": 7}}
        transport.feed(request(2, "fail"))
        assert (await transport.next())["error"] == {"code": -32603, "message": "Internal error"}
    assert "handler bug" in caplog.text


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"{", -32700),
        (b"[" * DEEP + b"]" * DEEP, -32700),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "echo"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "teleport"}', -32601),
    ],
    ids=["truncated", "deep", "version", "unknown-method"],
)
async def test_a_bad_line_gets_its_error_and_the_connection_goes_on(line, code):
    transport = MemoryTransport()
    async with connect(Handler(), transport):
        transport.feed(line, request(2, "after"))
        assert (await transport.next())["error"]["code"] == code
        assert await transport.next() == {"jsonrpc": "2.0", "id": 2, "result": "after"}


class Exploding:
    """A decoder that raises `error` on the message whose params are "explode"."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __call__(self, data: Any, *, side: str, **options: Any) -> Any:
        if type(data) is dict and data.get("params") == "explode":
            raise self.error
        return decode(data, side=side)


@pytest.mark.parametrize(
    "error", [RecursionError("deep"), MemoryError(), UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogate")]
)
async def test_an_exception_while_handling_one_message_is_that_messages_error(error, monkeypatch, caplog):
    monkeypatch.setattr(sys.modules[__name__], "WIRE", dataclasses.replace(WIRE, decoder=decoder(Exploding(error))))
    unhandled: list[Any] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context))
    transport = MemoryTransport()
    async with connect(Handler(), transport):
        transport.feed(request(1, "explode"), {"jsonrpc": "2.0", "method": "note", "params": "explode"})
        transport.feed(request(2, "after"))
        assert await transport.next() == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32603, "message": "Internal error"},
        }
        assert await transport.next() == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": "after",
        }  # the notification: not answered
    assert "failed to handle a message" in caplog.text and not unhandled


async def test_the_wire_hears_whether_an_initialize_comes_while_another_is_being_answered(monkeypatch):
    """`Wire.repeated_initialize` is asked about every `initialize` but the first: while one's
    handler has not returned (`in_progress`, until it returns or fails) and once one was answered;
    its error is the answer, and the handler never sees a refused one."""
    heard: list[tuple[Any, bool, bool]] = []

    def repeated(params: Any, in_progress: bool, after_other_requests: bool) -> conn.RequestError | None:
        heard.append((params, in_progress, after_other_requests))
        return conn.RequestError(-32600, "Invalid request", "busy") if in_progress else None

    wire = dataclasses.replace(WIRE, initialize_method="echo", repeated_initialize=repeated)
    monkeypatch.setattr(sys.modules[__name__], "WIRE", wire)

    class Gated(Handler):
        def __init__(self) -> None:
            super().__init__()
            self.gate: asyncio.Queue[Any] = asyncio.Queue()
            self.seen: list[Any] = []

        async def echo(self, params: Any) -> Any:
            self.seen.append(params)
            answer = await self.gate.get()
            if answer == "fail":
                raise conn.RequestError(-32603, "Internal error")
            return answer

    handler, transport = Gated(), MemoryTransport()
    async with connect(handler, transport):
        transport.feed(request(1, "first"), request(2, "second"))
        assert await transport.next() == {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32600, "message": "Invalid request", "data": "busy"},
        }
        handler.gate.put_nowait("fail")  # a failed first one: the next is a first one again
        assert (await transport.next())["id"] == 1
        transport.feed(request(3, "third"))
        handler.gate.put_nowait("ok")
        assert await transport.next() == {"jsonrpc": "2.0", "id": 3, "result": "ok"}
        transport.feed(request(4, "fourth"))  # a repeat, served
        handler.gate.put_nowait("again")
        assert await transport.next() == {"jsonrpc": "2.0", "id": 4, "result": "again"}
    assert heard == [("second", True, False), ("fourth", False, False)]
    assert handler.seen == ["first", "third", "fourth"]


async def test_an_error_whose_data_does_not_encode_answers_internal_error(caplog):
    class Refusing(Handler):
        async def echo(self, params: Any) -> Any:
            raise conn.RequestError(-32002, "Resource not found", {"nan": float("nan"), "deep": nested(5000)})

    transport = MemoryTransport()
    async with connect(Refusing(), transport):
        transport.feed(request(1, "x"))
        assert (await transport.next())["error"] == {"code": -32603, "message": "Internal error"}
    assert "does not encode" in caplog.text


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


async def test_invalid_utf8_reads_as_replacement_characters_and_a_byte_order_mark_is_skipped():
    transport = MemoryTransport()
    async with connect(Handler(), transport):
        transport.feed(b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": "a\xffb"}')
        assert (await transport.next())["result"] == "a\ufffdb"
        transport.feed(b'\xef\xbb\xbf{"jsonrpc": "2.0", "id": 2, "method": "echo", "params": "c"}')
        assert (await transport.next())["result"] == "c"


def test_describe_never_raises_on_deep_values():
    assert rt.describe(nested(100_000)) == "array " + "[" * 60 + "..."


async def test_a_lone_surrogate_echoed_back_is_written_as_valid_utf8_json():
    transport = MemoryTransport()
    async with connect(Handler(), transport):
        transport.feed(b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": "a\\ud800b"}')
        assert (await transport.next())["result"] == "a\ud800b"


async def test_notifications_are_handled_one_at_a_time_in_arrival_order():
    transport, handler = MemoryTransport(), Handler()
    async with connect(handler, transport) as connection:
        transport.feed(*({"jsonrpc": "2.0", "method": "note", "params": n} for n in range(50)), None)
        await asyncio.wait_for(connection.wait_closed(), 5)
    assert handler.notes == list(range(50))


async def test_cancel_cancels_the_handler_and_answers_request_cancelled():
    transport, handler = MemoryTransport(), Handler()
    async with connect(handler, transport):
        transport.feed(request("r", "hold"))
        await asyncio.wait_for(handler.started.wait(), 5)
        transport.feed({"jsonrpc": "2.0", "method": "$/cancel", "params": {"id": "r"}})
        assert (await transport.next())["error"] == {
            "code": -32800,
            "message": "Request cancelled",
            "data": {"requestId": "r"},
        }


@pytest.mark.parametrize(
    "extra",
    [{"id": 0, "result": 1, "other": 2}, {"jsonrpc": "1.0", "id": 0, "result": 1}, {"id": 0, "result": 1, "error": 2}],
    ids=["no-version", "bad-version", "result-and-error"],
)
async def test_a_three_key_response_that_is_not_a_plain_result_fails_its_request(extra):
    transport = MemoryTransport()
    async with connect(Handler(), transport) as connection:
        call = asyncio.create_task(connection._request("echo", 1))
        sent = await transport.next()
        transport.feed({**extra, "id": sent["id"]})
        with pytest.raises(rt.DecodeError):  # a malformed response fails its request
            await asyncio.wait_for(call, 5)
        transport.feed(request(2, "after"))
        assert await transport.next() == {"jsonrpc": "2.0", "id": 2, "result": "after"}


async def test_a_request_starts_after_the_handlers_of_the_notifications_read_before_it():
    """On Python 3.12+ a served request starts eagerly, unless notifications read before it still
    wait for their handler: it must not overtake them."""

    class Ordered(Handler):
        async def note(self, params: Any) -> None:
            self.notes.append(params)

        async def echo(self, params: Any) -> Any:
            return list(self.notes)

    transport = MemoryTransport()
    async with connect(Ordered(), transport):
        transport.feed(
            {"jsonrpc": "2.0", "method": "note", "params": 1}, {"jsonrpc": "2.0", "method": "note", "params": 2}
        )
        transport.feed(request(1, "notes"))
        assert (await transport.next())["result"] == [1, 2]


async def test_a_request_answered_with_an_error_raises_the_wires_request_error():
    transport = MemoryTransport()
    async with connect(Handler(), transport) as connection:
        call = asyncio.create_task(connection._request("echo", 1))
        sent = await transport.next()
        transport.feed({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32002, "message": "gone"}})
        with pytest.raises(conn.RequestError) as caught:
            await call
    assert (caught.value.code, caught.value.message) == (-32002, "gone")


async def test_cancelling_a_request_sends_the_cancel_method_with_its_id():
    transport = MemoryTransport()
    async with connect(Handler(), transport) as connection:
        call = asyncio.create_task(connection._request("echo", 1))
        sent = await transport.next()
        call.cancel()
        assert await transport.next() == {"jsonrpc": "2.0", "method": "$/cancel", "params": {"id": sent["id"]}}


async def test_pending_requests_fail_with_connection_closed_when_the_peer_leaves():
    transport = MemoryTransport()
    async with connect(Handler(), transport) as connection:
        call = asyncio.create_task(connection._request("echo", 1))
        await transport.next()
        transport.feed(None)
        with pytest.raises(conn.ConnectionClosed):
            await asyncio.wait_for(call, 5)
        with pytest.raises(conn.ConnectionClosed):
            await connection._request("echo", 2)


TOO_DEEP = b"[" * DEEP + b"]" * DEEP


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": ID, "result": ' + TOO_DEEP + b"}",
        b'{"jsonrpc": "2.0", "result": {"n": 1e400}, "id": ID}',
        b'{"jsonrpc": "2.0", "id": ID, "error": {"code": 1, "message": "m", "data": ' + TOO_DEEP + b"}}",
    ],
    ids=["deep-result", "huge-number", "deep-error-data"],
)
async def test_a_response_that_does_not_parse_fails_its_pending_request(line):
    transport = MemoryTransport()
    async with connect(Handler(), transport) as connection:
        call = asyncio.create_task(connection._request("echo", 1))
        sent = await transport.next()
        transport.feed(line.replace(b"ID", str(sent["id"]).encode()))
        assert (await transport.next())["error"]["code"] == -32700
        with pytest.raises(rt.DecodeError):
            await asyncio.wait_for(call, 5)


async def test_a_request_that_does_not_parse_leaves_a_pending_request_of_the_same_id_waiting():
    transport = MemoryTransport()
    async with connect(Handler(), transport) as connection:
        call = asyncio.create_task(connection._request("echo", 1))
        sent = await transport.next()
        transport.feed(b'{"jsonrpc": "2.0", "id": %d, "method": "echo", "result": %s}' % (sent["id"], TOO_DEEP))
        assert (await transport.next())["error"]["code"] == -32700
        transport.feed({"jsonrpc": "2.0", "id": sent["id"], "result": "answer"})
        assert await asyncio.wait_for(call, 5) == "answer"


@pytest.mark.parametrize(
    ("line", "found"),
    [
        (b'{"id": 3, "result": [[[', 3),
        (b' {"result": [[["id", 1]]], "error": {"id": 4}, "id" : -7 }', -7),
        (b'{"jsonrpc": "2.0", "id": "a\\"b", "error": {"message": "}{]["}}', 'a"b'),
        (b'{"id": 1, "id": 2, "result": 1e400}', 2),
        (b'{"id": 3, "method": "m", "result": 1}', None),
        (b'{"id": 3, "params": 1}', None),
        (b'{"result": {"id": 3}}', None),
        (b'[{"id": 3, "result": 1}]', None),
        (b'{"id": 3.5, "result": 1}', None),
        (b'{"id": 01, "result": 1}', None),
        (b'{"id": ' + b"9" * 5000 + b', "result": 1}', None),
        (b'{"id": 3} {"method": "m"}', None),
        (b"", None),
    ],
)
def test_the_id_of_an_unparsable_response_is_read_off_its_top_level(line, found):
    assert conn.unparsed_response_id(line) == found


@pytest.mark.parametrize(
    "field",
    ["max_message_bytes", "max_concurrent_requests", "max_queued_notifications", "max_buffered_bytes", "max_id_length"],
)
@pytest.mark.parametrize("value", [0, -1, 1.0, True, "8", None])
def test_limits_that_are_not_positive_integers_are_refused(field, value):
    with pytest.raises(ValueError, match=f"{field} must be a positive integer, not {value!r}"):
        conn.ConnectionLimits(**{field: value})


@pytest.mark.parametrize("value", [0, -1.5, float("nan"), True, "60", None])
def test_an_output_stall_that_is_not_a_positive_number_is_refused(value):
    with pytest.raises(ValueError, match="max_output_stall must be a positive number of seconds"):
        conn.ConnectionLimits(max_output_stall=value)


class Lingering(Handler):
    """A handler whose cleanup, once cancelled, takes a while (it still runs when close is called again)."""

    def __init__(self) -> None:
        super().__init__()
        self.cleaned = False

    async def echo(self, params: Any) -> Any:
        try:
            return await super().echo(params)
        finally:
            await asyncio.sleep(0.2)
            self.cleaned = True


class Recording(MemoryTransport):
    """Records when it is closed; its close takes a moment, as a stream's drain does."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    async def close(self) -> None:
        await asyncio.sleep(0.1)
        self.closed = True


async def test_a_second_close_during_the_shutdown_awaits_the_same_shutdown():
    transport, handler = Recording(), Lingering()
    connection = connect(handler, transport)
    transport.feed(request(1, "hold"))
    await asyncio.wait_for(handler.started.wait(), 5)
    first = asyncio.create_task(connection.close())
    await asyncio.sleep(0.05)  # the shutdown now awaits the handler's cleanup
    await connection.close()
    assert handler.cleaned and transport.closed
    await first


async def test_a_cancelled_close_does_not_interrupt_the_shutdown():
    transport, handler = Recording(), Lingering()
    connection = connect(handler, transport)  # closed before its reader's first step
    closing = asyncio.create_task(connection.close())
    await asyncio.sleep(0.05)  # the shutdown now awaits the transport's close
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    await connection.close()  # the same shutdown, run to its end
    assert transport.closed


# --- the stream transport over real pipes ---------------------------------------------------


async def pipe_pair() -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int, int]:
    """A reader of one pipe and a writer of another; the raw ends the test plays the peer with."""
    loop = asyncio.get_running_loop()
    inbound_read, inbound_write = os.pipe()
    outbound_read, outbound_write = os.pipe()
    reader = asyncio.StreamReader(limit=1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(inbound_read, "rb"))
    write_transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(outbound_write, "wb")
    )
    return reader, asyncio.StreamWriter(write_transport, protocol, None, loop), inbound_write, outbound_read


async def test_a_line_over_the_limit_is_skipped_and_the_next_one_read():
    reader, writer, peer_write, peer_read = await pipe_pair()
    transport = conn.StreamTransport(reader, writer, limits=conn.ConnectionLimits(max_message_bytes=4096))
    os.write(peer_write, b"x" * 5000 + b"\n" + b"y" * 4096 + b"\n" + b'{"ok": 1}\n')
    with pytest.raises(conn.MessageTooLarge, match="longer than 4096 bytes"):
        await transport.receive()
    assert await transport.receive() == b"y" * 4096  # at the limit: read whole
    assert await transport.receive() == b'{"ok": 1}'
    os.close(peer_write)
    assert await transport.receive() is None
    await transport.close()
    os.close(peer_read)


async def test_a_request_over_the_limit_is_skipped_with_its_id_when_its_beginning_tells_it():
    """Over many reads (the beginning kept as the rest is dropped) and within one."""
    left, peer = socket.socketpair()
    transport = conn.StreamTransport(
        *await asyncio.open_connection(sock=left, limit=conn.READER_LIMIT),
        limits=conn.ConnectionLimits(max_message_bytes=4096),
    )
    request = b'{"jsonrpc":"2.0","id":7,"method":"mcp/message","params":{"text":"' + b"x" * 200_000 + b'"}}'
    lines = request + b"\n" + request[:50] + b"x" * 5000 + b"\n" + b'{"ok": 1}\n'
    sending = threading.Thread(target=peer.sendall, args=(lines,))
    sending.start()
    with pytest.raises(conn.MessageTooLarge) as first:
        await transport.receive()
    assert first.value.request_id == 7
    with pytest.raises(conn.MessageTooLarge) as second:
        await transport.receive()
    assert second.value.request_id == 7
    assert await transport.receive() == b'{"ok": 1}'
    sending.join()
    peer.close()
    await transport.close()


@pytest.mark.parametrize(
    ("head", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"mcp/message","params":{"a":', 7),
        (b'{ "jsonrpc" : "2.0" , "id" : "r\\"1" , "method" : "x" , "params" : [1', 'r"1'),
        (b'{"jsonrpc":"2.0","id":5,"method":"m"}', 5),
        (b'{"jsonrpc":"2.0","method":"m","params":{},"id":3}', None),  # the id after the params
        (b'{"jsonrpc":"2.0","id":12', None),  # cut off: 12 could be 123
        (b'{"jsonrpc":"2.0","id":12,"method":"m', None),  # the method cut off
        (b'{"jsonrpc":"2.0","id":12,"result":"', None),  # a response
        (b'{"jsonrpc":"2.0","method":"m","params":"', None),  # a notification
        (b'{"id":true,"method":"m",', None),
        (b'{"id":1.5,"method":"m",', None),
        (b'{"id":' + str(2**63).encode() + b',"method":"m",', None),  # past int64
        (b'{"id":7,"method":5,', None),
        (b"xxxx", None),
        (b"", None),
    ],
)
def test_request_id_of_reads_the_id_only_from_a_beginning_that_tells_it(head, request_id):
    assert conn.request_id_of(head) == request_id


@pytest.mark.parametrize("line_bytes", [3 * 2**22, 2**22 + 1, 2**22])
async def test_one_huge_line_holds_about_one_message_of_memory(line_bytes):
    """A line of three times the limit (and one just over, and one at it) held at most
    `max_message_bytes` and a few chunks: the transport splits lines itself, the reader buffers
    little. (Reading lines with the reader's `readuntil`, its limit one above the message limit,
    held 8.9 MiB for the 12 MiB line, 8.5 MiB for the one just over the limit: twice the limit.)
    A line at the limit is returned, so it is held twice for a moment: the buffer and its copy."""
    limits = conn.ConnectionLimits(max_message_bytes=2**22)
    left, peer = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=left, limit=conn.READER_LIMIT)
    transport = conn.StreamTransport(reader, writer, limits=limits)
    line = b"[" + b"1," * ((line_bytes - 2) // 2) + b"1" * (line_bytes % 2) + b"]"
    assert len(line) == line_bytes
    # The peer writes from a thread, without copies, so that only the transport's memory is traced.
    sending = threading.Thread(target=peer.sendall, args=(memoryview(line + b'\n{"ok": 1}\n'),))
    tracemalloc.start()
    sending.start()
    try:
        if line_bytes > limits.max_message_bytes:
            with pytest.raises(conn.MessageTooLarge):
                await transport.receive()
        else:
            assert len(await transport.receive() or b"") == line_bytes
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert await transport.receive() == b'{"ok": 1}'
    sending.join()
    peer.close()
    await transport.close()
    bound = 2 * limits.max_message_bytes if line_bytes <= limits.max_message_bytes else limits.max_message_bytes
    assert peak < bound + 2**20, f"{peak / 2**20:.1f} MiB held for one line of {line_bytes / 2**20:.1f} MiB"


async def test_a_writer_faster_than_its_peer_lets_the_peer_read_while_it_writes():
    """A flood sent without other awaits: each time the write buffer grows by `FLUSH_STEP`,
    `send` gives the event loop a turn, in which the transport hands the system what the peer
    has made room for, so the peer reads while the writer writes (before: nothing past the
    first pipeful until the writer stopped, the two sides taking turns)."""
    left, right = socket.socketpair()
    writer_end = conn.StreamTransport(*await asyncio.open_connection(sock=left, limit=conn.READER_LIMIT))
    reader_end = conn.StreamTransport(*await asyncio.open_connection(sock=right, limit=conn.READER_LIMIT))
    line = b'{"note":"' + b"x" * 1000 + b'"}'
    lines = 4 * 1024  # 4 MiB: many times what the socket buffers hold
    received = 0
    received_while_writing: list[int] = []

    async def read() -> None:
        nonlocal received
        while await reader_end.receive() is not None:
            received += 1

    reading = asyncio.create_task(read())
    for _ in range(lines):
        await writer_end.send(line)
    received_while_writing.append(received)
    await writer_end.close()
    await asyncio.wait_for(reading, 10)
    assert received == lines
    assert received_while_writing[0] > lines // 2, f"the peer had read {received_while_writing[0]} of {lines}"
    await reader_end.close()


async def test_close_returns_when_the_peer_never_reads_what_is_queued():
    reader, writer, peer_write, peer_read = await pipe_pair()
    transport = conn.StreamTransport(reader, writer, close_timeout=0.2)
    writer.write(b"x" * (4 * 1024 * 1024))  # far more than a pipe holds; the peer reads none of it
    await asyncio.wait_for(transport.close(), 5)
    assert writer.transport.is_closing()
    os.close(peer_write)
    os.close(peer_read)


async def test_a_cancelled_close_cuts_off_a_peer_that_never_reads():
    reader, writer, peer_write, peer_read = await pipe_pair()
    transport = conn.StreamTransport(reader, writer, close_timeout=30)
    writer.write(b"x" * (4 * 1024 * 1024))  # far more than a pipe holds; the peer reads none of it
    closing = asyncio.create_task(transport.close())
    await asyncio.sleep(0.1)
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    await asyncio.wait_for(writer.wait_closed(), 5)  # aborted: the queued output is dropped
    os.close(peer_write)
    os.close(peer_read)


# --- the process helper ---------------------------------------------------------------------

STUBBORN_CHILD = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
)


async def test_cancelling_the_owner_while_it_stops_the_child_kills_the_child():
    started: asyncio.Queue[asyncio.subprocess.Process] = asyncio.Queue()

    async def owner() -> None:
        async with conn.spawn_process(sys.executable, "-c", STUBBORN_CHILD, timeout=30) as process:
            assert process.stdout is not None
            await process.stdout.readline()
            started.put_nowait(process)
        # leaving the block waits up to 30 s for the child, which ignores SIGTERM

    task = asyncio.create_task(owner())
    process = await asyncio.wait_for(started.get(), 10)
    await asyncio.sleep(0.1)  # the owner is now waiting for the child to exit
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.wait_for(process.wait(), 5) == -signal.SIGKILL


async def test_a_child_that_ignores_sigterm_is_killed_after_the_timeouts():
    async with conn.spawn_process(sys.executable, "-c", STUBBORN_CHILD, timeout=0.2) as process:
        assert process.stdout is not None
        await process.stdout.readline()
    assert process.returncode == -signal.SIGKILL


# An agent that ignores the end of its stdin and SIGTERM, behind `sh -c` and a node shim that runs
# it with spawnSync (as npm's bin shims do) and forwards no signal: it prints its pid.
DEAF_AGENT = "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(os.getpid(), flush=True); time.sleep(60)"
NODE_SHIM = "require('child_process').spawnSync(process.argv[1], process.argv.slice(2), {stdio: 'inherit'})"
WRAPPED_DEAF_AGENT = ("sh", "-c", 'node -e "$0" "$@"; sleep 60', NODE_SHIM, sys.executable, "-c", DEAF_AGENT)


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_no_process_started_through_a_wrapper_survives_and_leaving_takes_at_most_the_timeout():
    loop = asyncio.get_running_loop()
    async with conn.spawn_process(*WRAPPED_DEAF_AGENT, timeout=1) as process:
        assert process.stdout is not None and process.stdin is not None
        agent = int(await asyncio.wait_for(process.stdout.readline(), 10))
        process.stdin.close()  # the agent does not exit at the end of its input
        leaving = loop.time()
    assert loop.time() - leaving < 1.5
    await asyncio.sleep(0.1)  # the reparented agent is reaped
    assert not running(agent)


async def test_a_group_left_behind_by_an_exited_process_is_stopped():
    """`sh -c 'agent &'`: the process started exits at once, the agent it started runs on."""
    command = f'{sys.executable} -c "$0" &'
    async with conn.spawn_process("sh", "-c", command, DEAF_AGENT, timeout=1) as process:
        assert process.stdout is not None
        agent = int(await asyncio.wait_for(process.stdout.readline(), 10))
    await asyncio.sleep(0.1)
    assert not running(agent)


LEAVES_A_PROCESS = """
import asyncio, sys
from generator.runtime import _connection as conn

async def main():
    async with conn.spawn_process(*sys.argv[1:], timeout=1) as process:
        await process.stdout.readline()

asyncio.run(main())
"""


def test_a_stopped_process_leaves_no_transport_to_warn_about():
    """Python printed "Exception ignored in BaseSubprocessTransport.__del__" at exit."""
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", LEAVES_A_PROCESS, *WRAPPED_DEAF_AGENT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0 and result.stderr == ""


WRITES_TO_STDERR = "import sys; sys.stderr.write('first\\nsecond\\r\\n' + 'x' * 100 + '\\nlast')"


async def test_stderr_may_go_to_a_callback_line_by_line():
    lines: list[str] = []
    async with conn.spawn_process(sys.executable, "-c", WRITES_TO_STDERR, stderr=lines.append, limit=64):
        pass
    assert lines == ["first", "second", "x" * 100, "last"]


async def test_stderr_may_go_to_a_file_or_nowhere(tmp_path, capfd):
    with open(tmp_path / "stderr.log", "wb") as log:
        async with conn.spawn_process(sys.executable, "-c", WRITES_TO_STDERR, stderr=log):
            pass
    assert (tmp_path / "stderr.log").read_text().startswith("first\nsecond")
    async with conn.spawn_process(sys.executable, "-c", WRITES_TO_STDERR, stderr=subprocess.DEVNULL):
        pass
    assert capfd.readouterr().err == ""


async def test_close_cuts_off_a_child_that_never_reads_within_its_timeout_and_quietly():
    """A subprocess pipe's close waiter is not cancelled by the timeout (asyncio logs an
    InvalidStateError from `pipe_connection_lost` when it is)."""
    unhandled: list[Any] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context))
    async with conn.spawn_process(sys.executable, "-c", STUBBORN_CHILD, timeout=0.2) as process:
        assert process.stdin is not None and process.stdout is not None
        await process.stdout.readline()
        transport = conn.StreamTransport(process.stdout, process.stdin, close_timeout=0.2)
        process.stdin.write(b"x" * (4 * 1024 * 1024))
        await asyncio.wait_for(transport.close(), 5)
    await asyncio.sleep(0.1)  # the pipe's connection_lost runs
    assert not unhandled, unhandled
