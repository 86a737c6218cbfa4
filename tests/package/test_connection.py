"""Typed asyncio connections: an agent and a client over in-memory sockets, and a raw peer that
misbehaves. (tests/test_examples.py runs the example agent and client as real processes.)"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import socket
import sys
import time
import tracemalloc
import typing
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tests.support.helpers import ROOT, Stepped, import_package, runtime_module
from tests.support.hostile_lines import LINES

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="test-client", version="1"))
PROMPT = [acp.ContentBlockText(text="hello")]


async def stream_pair(limit: int = acp.DEFAULT_LIMITS.max_message_bytes) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    left, right = socket.socketpair()
    return (
        await asyncio.open_connection(sock=left, limit=limit),
        await asyncio.open_connection(sock=right, limit=limit),
    )


class EchoAgent(acp.Agent):
    """Echoes each prompt block as an agent message chunk; asks permission when told to."""

    def __init__(self) -> None:
        self.cancelled_sessions: list[str] = []
        self.blocked = asyncio.Event()  # a `block` prompt is waiting
        self.handler_cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, params: Any) -> Any:
        return acp.InitializeResponse(
            protocol_version=params.protocol_version, info=acp.Implementation(name="echo", version="1")
        )

    async def session_new(self, params: Any) -> Any:
        return acp.NewSessionResponse(session_id="s1")

    async def session_cancel(self, params: Any) -> None:
        self.cancelled_sessions.append(params.session_id)

    async def session_prompt(self, params: Any) -> Any:
        text = params.prompt[0].text
        if text == "block":
            self.blocked.set()
            try:
                await asyncio.get_running_loop().create_future()
            except asyncio.CancelledError:
                self.handler_cancelled.set()
                raise
        if text == "fail":
            raise KeyError("secret internal detail")
        if text == "refuse":
            raise acp.RequestError.invalid_params({"why": "no"}, "Refused")
        if text == "ask":
            option = acp.PermissionOption(option_id="yes", name="Yes", kind="allow_once")
            answer = await self.client.session_request_permission(
                acp.RequestPermissionRequest(session_id=params.session_id, title="Run it?", options=[option])
            )
            text = f"permission: {answer.outcome.option_id}"
        for word in text.split():
            chunk = acp.SessionUpdateAgentMessageChunk(message_id="m1", content=acp.ContentBlockText(text=word))
            await self.client.session_update(acp.UpdateSessionNotification(session_id=params.session_id, update=chunk))
        return acp.PromptResponse(message_id="m1")

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_test/echo":
            return params
        return await super().ext_method(method, params)


class RecordingClient(acp.Client):
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.asked = asyncio.Event()
        self.handler_cancelled = asyncio.Event()
        self.block_permission = False

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update)

    async def session_request_permission(self, params: Any) -> Any:
        self.asked.set()
        if self.block_permission:
            try:
                await asyncio.get_running_loop().create_future()
            except asyncio.CancelledError:
                self.handler_cancelled.set()
                raise
        return acp.RequestPermissionResponse(
            outcome=acp.RequestPermissionOutcomeSelected(option_id=params.options[0].option_id)
        )


@contextlib.asynccontextmanager
async def connected(
    agent: Any = None, client: Any = None, *, initialize: bool = True
) -> AsyncIterator[tuple[Any, Any]]:
    async with acp.connect_pair(agent or EchoAgent(), client or RecordingClient()) as (agent_conn, client_conn):
        if initialize:
            await client_conn.initialize(INIT)
        yield agent_conn, client_conn


class RawPeer:
    """The client end as bytes: send anything, read the agent's answers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def send(self, message: Any) -> None:
        self.writer.write(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n")
        await self.writer.drain()

    async def receive(self) -> Any:
        return json.loads(await self.reader.readline())

    async def ask(self, message: Any) -> Any:
        await self.send(message)
        return await self.receive()

    async def initialize(self) -> None:
        answer = await self.ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": acp.encode(INIT)})
        assert "result" in answer


@contextlib.asynccontextmanager
async def raw_client(
    agent: Any = None, *, limit: int = acp.DEFAULT_LIMITS.max_message_bytes, **options: Any
) -> AsyncIterator[RawPeer]:
    """A raw client peer of an agent connection made with `ConnectionOptions(**options)`."""
    (agent_reader, agent_writer), (peer_reader, peer_writer) = await stream_pair(limit)
    conn = acp.connect_to_client(
        agent or EchoAgent(), agent_reader, agent_writer, options=acp.ConnectionOptions(**options)
    )
    try:
        yield RawPeer(peer_reader, peer_writer)
    finally:
        peer_writer.close()
        await conn.wait_closed()


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    return message if params is None else {**message, "params": params}


# --- a turn ------------------------------------------------------------------


async def test_a_full_turn_streams_updates_and_answers_a_permission_request():
    client = RecordingClient()
    async with connected(client=client) as (_, conn):
        session = await conn.session_new(acp.NewSessionRequest(cwd="/work"))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.ContentBlockText(text="ask")])
        response = await conn.session_prompt(prompt)
        assert response == acp.PromptResponse(message_id="m1")
        assert client.asked.is_set()
        assert [update.content.text for update in client.updates] == ["permission:", "yes"]
        assert all(isinstance(update, acp.SessionUpdateAgentMessageChunk) for update in client.updates)


async def test_requests_run_concurrently_in_both_directions():
    async with connected() as (agent_conn, conn):
        prompts = [
            conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="ask")]))
            for _ in range(50)
        ]
        echoes = [agent_conn.ext_method("_test/echo", {"n": n}) for n in range(50)]
        results = await asyncio.gather(*prompts, *(conn.ext_method("_test/echo", {"n": n}) for n in range(50)))
        assert results[:50] == [acp.PromptResponse(message_id="m1")] * 50
        assert results[50:] == [{"n": n} for n in range(50)]
        with pytest.raises(acp.RequestError) as caught:  # the client serves no extensions
            await asyncio.gather(*echoes)
        assert caught.value.code == -32601


async def test_ten_thousand_concurrent_requests_each_get_their_own_answer():
    async with connected() as (_, conn):
        results = await asyncio.gather(*(conn.ext_method("_test/echo", n) for n in range(10_000)))
        assert results == list(range(10_000))


async def test_a_slow_handler_does_not_block_the_reader():
    agent = EchoAgent()
    async with connected(agent) as (_, conn):
        slow = asyncio.create_task(
            conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="block")]))
        )
        await agent.blocked.wait()
        assert await conn.session_new(acp.NewSessionRequest(cwd="/w")) == acp.NewSessionResponse(session_id="s1")
        assert not slow.done()
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow


async def test_messages_of_many_mebibytes_go_through():
    client = RecordingClient()
    async with connected(client=client) as (_, conn):
        text = "x" * (8 * 1024 * 1024)
        assert await conn.ext_method("_test/echo", {"image": text}) == {"image": text}
        await conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text=text)]))
        assert client.updates[0].content.text == text


class QueueTransport:
    """A transport without streams: messages travel through two asyncio queues."""

    def __init__(self, inbox: asyncio.Queue[bytes | None], outbox: asyncio.Queue[bytes | None]) -> None:
        self.inbox, self.outbox = inbox, outbox

    async def receive(self) -> bytes | None:
        return await self.inbox.get()

    async def send(self, message: bytes) -> None:
        await self.outbox.put(message)

    async def close(self) -> None:
        await self.outbox.put(None)


async def test_any_transport_with_receive_send_and_close_carries_a_connection():
    there: asyncio.Queue[bytes | None] = asyncio.Queue()
    back: asyncio.Queue[bytes | None] = asyncio.Queue()
    agent_conn = acp.AgentSideConnection(EchoAgent(), QueueTransport(there, back))
    async with acp.ClientSideConnection(RecordingClient(), QueueTransport(back, there)) as conn:
        await conn.initialize(INIT)
        assert await conn.session_new(acp.NewSessionRequest(cwd="/w")) == acp.NewSessionResponse(session_id="s1")
    await agent_conn.wait_closed()


# --- cancellation --------------------------------------------------------------


async def test_cancelling_a_request_cancels_the_agents_handler():
    agent = EchoAgent()
    async with connected(agent) as (_, conn):
        prompt = acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="block")])
        waiting = asyncio.create_task(conn.session_prompt(prompt))
        await agent.blocked.wait()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await agent.handler_cancelled.wait()
        # The agent answered -32800; the client dropped that answer and still works.
        assert await conn.session_new(acp.NewSessionRequest(cwd="/w")) == acp.NewSessionResponse(session_id="s1")


async def test_cancelling_a_request_of_the_agent_cancels_the_clients_handler():
    client = RecordingClient()
    client.block_permission = True
    async with connected(client=client) as (agent_conn, _):
        option = acp.PermissionOption(option_id="yes", name="Yes", kind="allow_once")
        ask = acp.RequestPermissionRequest(session_id="s1", title="?", options=[option])
        waiting = asyncio.create_task(agent_conn.session_request_permission(ask))
        await client.asked.wait()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await client.handler_cancelled.wait()


async def test_cancel_request_is_answered_with_request_cancelled():
    agent = EchoAgent()
    async with raw_client(agent) as peer:
        await peer.initialize()
        await peer.send(
            request(7, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "block"}]})
        )
        await agent.blocked.wait()
        answer = await peer.ask({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
        assert answer["id"] == 7 and answer["error"]["code"] == -32800 and agent.handler_cancelled.is_set()


async def test_a_request_cancelled_before_its_handler_starts_is_still_answered():
    async with raw_client() as peer:
        await peer.initialize()
        prompt = request(7, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "block"}]})
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}}
        both = b"".join(json.dumps(message).encode() + b"\n" for message in (prompt, cancel))  # one read
        answer = await asyncio.wait_for(peer.ask(both), 5)
        assert answer["id"] == 7 and answer["error"]["code"] == -32800


async def test_session_cancel_reaches_the_agent_while_a_prompt_runs():
    agent = EchoAgent()
    async with connected(agent) as (_, conn):
        prompt = acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="block")])
        waiting = asyncio.create_task(conn.session_prompt(prompt))
        await agent.blocked.wait()
        await conn.session_cancel(acp.CancelSessionNotification(session_id="s1"))
        assert await conn.session_new(acp.NewSessionRequest(cwd="/w"))  # the notification was handled before
        assert agent.cancelled_sessions == ["s1"]
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting


# --- the end of a connection -----------------------------------------------------


async def test_the_end_of_the_stream_fails_pending_requests_with_connection_closed():
    agent = EchoAgent()
    async with connected(agent) as (agent_conn, conn):
        prompt = acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="block")])
        waiting = asyncio.create_task(conn.session_prompt(prompt))
        await agent.blocked.wait()
        await agent_conn.close()
        with pytest.raises(acp.ConnectionClosed, match="session/prompt"):
            await waiting
        await agent.handler_cancelled.wait()
        await conn.wait_closed()
        with pytest.raises(acp.ConnectionClosed):
            await conn.session_new(acp.NewSessionRequest(cwd="/w"))


async def test_notifications_sent_before_the_stream_ends_are_all_handled_in_order():
    """An agent may stream its last updates and exit at once: its end of the stream does
    not drop what a slow handler has not reached yet."""

    class SlowClient(RecordingClient):
        async def session_update(self, params: Any) -> None:
            await asyncio.sleep(0)
            self.updates.append(params.update)

    inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
    outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
    client = SlowClient()
    conn = acp.ClientSideConnection(client, QueueTransport(inbox, outbox))
    initializing = asyncio.create_task(conn.initialize(INIT))
    init = json.loads(await outbox.get() or b"")
    answer = acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="agent", version="1"))
    await inbox.put(json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": acp.encode(answer)}).encode())
    await initializing
    for index in range(50):
        chunk = acp.SessionUpdateAgentMessageChunk(message_id="m", content=acp.ContentBlockText(text=str(index)))
        note = acp.Notification(
            method="session/update", params=acp.UpdateSessionNotification(session_id="s", update=chunk)
        )
        await inbox.put(json.dumps(acp.encode_message(note)).encode())
    await inbox.put(None)
    await conn.wait_closed()
    assert [update.content.text for update in client.updates] == [str(index) for index in range(50)]


async def test_a_closed_connection_refuses_notifications_and_extensions():
    async with connected() as (agent_conn, _):
        await agent_conn.close()
        with pytest.raises(acp.ConnectionClosed):
            await agent_conn.session_update(
                acp.UpdateSessionNotification(session_id="s", update=acp.SessionUpdatePlanRemoved(plan_id="p"))
            )
        with pytest.raises(ValueError, match="start with '_'"):
            await agent_conn.ext_method("session/new", {})


# --- protocol errors, as a raw peer sees them ----------------------------------------


async def test_requests_before_initialize_are_refused_and_notifications_ignored():
    agent = EchoAgent()
    async with raw_client(agent) as peer:
        await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "early"}})
        answer = await peer.ask(request(1, "session/new", {"cwd": "/w"}))
        assert answer["id"] == 1 and answer["error"]["code"] == -32600
        assert answer["error"]["data"] == "ACP v2 connection must be initialized before 'session/new'"
        await peer.initialize()
        assert (await peer.ask(request(2, "session/new", {"cwd": "/w"})))["result"] == {"sessionId": "s1"}
        assert agent.cancelled_sessions == []


@pytest.mark.parametrize("params", [{"cwd": "/w"}, {"cwd": 5}, "not an object"])
@pytest.mark.parametrize(
    ("package", "error"),
    [
        (
            acp,
            {
                "code": -32600,
                "message": "Invalid request",
                "data": "ACP v2 connection must be initialized before 'session/new'",
            },
        ),
        (
            acp_v1,
            {"code": -32600, "message": "Invalid request: ACP connection must be initialized before 'session/new'"},
        ),
    ],
)
async def test_a_request_before_initialize_is_refused_as_the_typescript_sdk_refuses_it_whatever_its_params(
    package, error, params
):
    (agent_reader, agent_writer), (peer_reader, peer_writer) = await stream_pair(acp.DEFAULT_LIMITS.max_message_bytes)
    conn = package.connect_to_client(package.Agent(), agent_reader, agent_writer)
    peer = RawPeer(peer_reader, peer_writer)
    assert await peer.ask(request(7, "session/new", params)) == {"jsonrpc": "2.0", "id": 7, "error": error}
    peer_writer.close()
    await conn.wait_closed()


@pytest.mark.parametrize(
    ("message", "code", "answer_id"),
    [
        (b"{not json\n", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "/w"}\n', -32700, None),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "_vendor/x", "params": {"n": NaN}}\n', -32700, None),
        (request(5, "session/teleport", {}), -32601, 5),
        (
            request(
                5, "session/update", {"sessionId": "s", "update": {"sessionUpdate": "plan_removed", "planId": "p"}}
            ),
            -32601,
            5,
        ),
        (request(5, "_vendor/unknown", {"x": 1}), -32601, 5),
        (request(5, "session/list"), -32601, 5),  # a method this agent does not implement
        (request(5, "session/new"), -32602, 5),
        (request(5, "session/new", None) | {"params": None}, -32602, 5),
        (request(5, "session/new", {"cwd": 3}), -32602, 5),
        ({"jsonrpc": "1.0", "id": 5, "method": "session/new", "params": {"cwd": "/w"}}, -32600, None),
        ({"jsonrpc": "2.0", "id": None, "method": "session/new", "params": {"cwd": "/w"}}, -32600, None),
        ({"jsonrpc": "2.0", "id": [5], "method": "session/new", "params": {"cwd": "/w"}}, -32600, None),
        ([request(5, "session/new", {"cwd": "/w"})], -32600, None),
        ({"jsonrpc": "2.0"}, -32600, None),
    ],
    ids=[
        "not-json",
        "truncated",
        "nan-is-not-json",
        "unknown-method",
        "the-clients-method",
        "unknown-extension",
        "unimplemented",
        "missing-params",
        "null-params",
        "invalid-params",
        "wrong-version",
        "null-id",
        "array-id",
        "batch",
        "empty",
    ],
)
async def test_each_protocol_error_gets_its_code(message, code, answer_id):
    async with raw_client() as peer:
        await peer.initialize()
        answer = await peer.ask(message)
        assert answer["jsonrpc"] == "2.0" and answer["id"] == answer_id and answer["error"]["code"] == code
        assert "result" not in answer
        # The connection reads on.
        assert (await peer.ask(request(6, "session/new", {"cwd": "/w"})))["result"] == {"sessionId": "s1"}


async def test_invalid_params_say_where_in_data():
    async with raw_client() as peer:
        await peer.initialize()
        answer = await peer.ask(request(1, "session/prompt", {"sessionId": "s1"}))
        assert answer["error"]["code"] == -32602
        assert answer["error"]["data"]["path"] == "$.params.prompt"
        assert answer["error"]["message"].startswith("Invalid params: $.params.prompt: expected")


async def test_a_failing_handler_answers_internal_error_and_logs_the_traceback_locally(caplog):
    with caplog.at_level(logging.ERROR, logger="acp_runtime.connection"):
        async with raw_client() as peer:
            await peer.initialize()
            answer = await peer.ask(
                request(1, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "fail"}]})
            )
            assert answer["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret internal detail" in caplog.text and "session/prompt" in caplog.text


async def test_a_request_error_raised_by_a_handler_is_the_answer():
    async with connected() as (_, conn):
        with pytest.raises(acp.RequestError) as caught:
            await conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="refuse")]))
        assert (caught.value.code, caught.value.message, caught.value.data) == (-32602, "Refused", {"why": "no"})
        assert caught.value.code is acp.ErrorCode.INVALID_PARAMS


async def test_a_response_to_an_unknown_id_is_logged_and_dropped(caplog):
    with caplog.at_level(logging.WARNING, logger="acp_runtime.connection"):
        async with raw_client() as peer:
            await peer.initialize()
            await peer.send({"jsonrpc": "2.0", "id": 99, "result": {}})
            assert (await peer.ask(request(1, "session/new", {"cwd": "/w"})))["result"] == {"sessionId": "s1"}
    assert "unknown request id 99" in caplog.text


async def test_malformed_responses_and_notifications_are_logged_not_answered(caplog):
    with caplog.at_level(logging.WARNING, logger="acp_runtime.connection"):
        async with raw_client() as peer:
            await peer.initialize()
            await peer.send({"jsonrpc": "2.0", "id": 42, "error": {"code": "not a number", "message": "x"}})
            await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}})
            await peer.send({"jsonrpc": "2.0", "method": "session/teleport"})
            assert (await peer.ask(request(1, "session/new", {"cwd": "/w"})))["id"] == 1
    assert "dropped a malformed response: $.error.code" in caplog.text
    assert "dropped notification session/cancel: $.params.sessionId" in caplog.text
    assert "dropped notification session/teleport" in caplog.text


async def test_an_oversize_line_is_refused_and_skipped():
    """The answer names the request when the line's beginning tells its id (`"id"` and
    `"method"` before the params, as the SDKs write requests): the peer's request fails at once."""
    async with raw_client(limits=acp.ConnectionLimits(max_message_bytes=1024)) as peer:
        await peer.initialize()
        big = request(1, "session/new", {"cwd": "/" + "x" * 10_000})
        answer = await peer.ask(big)
        assert answer["id"] == 1 and answer["error"]["code"] == -32600
        params_first = {"jsonrpc": "2.0", "params": {"cwd": "/" + "x" * 10_000}, "method": "session/new", "id": 3}
        answer = await peer.ask(params_first)
        assert answer["id"] is None and answer["error"]["code"] == -32600
        assert (await peer.ask(request(2, "session/new", {"cwd": "/w"})))["result"] == {"sessionId": "s1"}


async def test_a_duplicate_id_in_flight_is_refused():
    agent = EchoAgent()
    async with raw_client(agent) as peer:
        await peer.initialize()
        await peer.send(
            request(1, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "block"}]})
        )
        await agent.blocked.wait()
        answer = await peer.ask(request(1, "session/new", {"cwd": "/w"}))
        assert answer["id"] == 1 and answer["error"]["code"] == -32600 and "in use" in answer["error"]["message"]


@contextlib.asynccontextmanager
async def raw_agent(
    client: Any = None, *, limit: int = acp.DEFAULT_LIMITS.max_message_bytes, **options: Any
) -> AsyncIterator[tuple[RawPeer, Any]]:
    (client_reader, client_writer), (peer_reader, peer_writer) = await stream_pair(limit)
    conn = acp.connect_to_agent(
        client or RecordingClient(), client_reader, client_writer, options=acp.ConnectionOptions(**options)
    )
    try:
        yield RawPeer(peer_reader, peer_writer), conn
    finally:
        peer_writer.close()
        await conn.wait_closed()


async def test_a_client_refuses_the_agents_requests_until_its_initialize_is_answered():
    async with raw_agent() as (peer, conn):
        ask = {"sessionId": "s", "title": "?", "options": [{"optionId": "y", "name": "Y", "kind": "allow_once"}]}
        answer = await peer.ask(request(1, "session/request_permission", ask))
        assert answer["error"]["code"] == -32600
        initializing = asyncio.create_task(conn.initialize(INIT))
        sent = await peer.receive()
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": sent["id"],
                "result": {"protocolVersion": 2, "info": {"name": "a", "version": "1"}},
            }
        )
        assert (await initializing).info.name == "a"
        answer = await peer.ask(request(2, "session/request_permission", ask))
        assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "y"}}


async def test_a_result_that_does_not_match_the_schema_raises_decode_error_at_the_caller():
    async with raw_agent() as (peer, conn):
        initializing = asyncio.create_task(conn.initialize(INIT))
        sent = await peer.receive()
        await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"protocolVersion": "two"}})
        with pytest.raises(acp.DecodeError) as caught:
            await initializing
        assert caught.value.path == "$.result.protocolVersion"


async def test_a_handler_may_close_its_own_connection():
    class Quitter(EchoAgent):
        async def session_new(self, params: Any) -> Any:
            await self.client.close()
            return await super().session_new(params)

    async with connected(Quitter()) as (agent_conn, conn):
        with pytest.raises(acp.ConnectionClosed):
            await conn.session_new(acp.NewSessionRequest(cwd="/w"))
        await agent_conn.wait_closed()


# --- errors as values ------------------------------------------------------------


def test_request_error_has_a_constructor_per_error_code():
    error = acp.RequestError.resource_not_found({"sessionId": "s9"})
    assert (error.code, error.message) == (acp.ErrorCode.RESOURCE_NOT_FOUND, "Resource not found")
    assert acp.encode_message(error.response(3)) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32002, "message": "Resource not found", "data": {"sessionId": "s9"}},
    }
    assert acp.RequestError.from_error(error.error()).data == {"sessionId": "s9"}


def test_request_error_has_a_constructor_per_error_data_type_of_the_schema():
    missing = acp.RequestError.session_not_found("s9")
    assert (missing.code, missing.message, missing.data) == (
        -32002,
        "Resource not found",
        acp.SessionNotFoundErrorData(session_id="s9"),
    )
    assert acp.encode_message(missing.response(3))["error"] == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"sessionId": "s9"},
    }
    old = acp.RequestError.unsupported_protocol_version(1, [2], message="Too old")
    assert acp.encode_message(old.response("a"))["error"] == {
        "code": -32022,
        "message": "Too old",
        "data": {"requested": 1, "supported": [2]},
    }
    # every error-data type of the schema has its constructor, named after it
    data_types = [t for t in typing.get_args(acp.ErrorData) if isinstance(t, type) and issubclass(t, acp.Model)]
    assert sorted(t.__name__ for t in data_types) == ["SessionNotFoundErrorData", "UnsupportedProtocolVersionErrorData"]
    assert all(hasattr(acp.RequestError, name) for name in ("session_not_found", "unsupported_protocol_version"))


async def test_an_error_built_from_error_data_reaches_the_peer_typed():
    class Strict(EchoAgent):
        async def session_new(self, params: Any) -> Any:
            raise acp.RequestError.session_not_found("gone", meta={"why": "archived"})

    async with connected(Strict()) as (_, conn):
        with pytest.raises(acp.RequestError) as caught:
            await conn.session_new(acp.NewSessionRequest(cwd="/w"))
    assert caught.value.code == -32002
    assert caught.value.data == acp.SessionNotFoundErrorData(session_id="gone", meta={"why": "archived"})


@pytest.mark.parametrize("requested", [0, 1])
async def test_an_initialize_asking_for_an_older_version_is_answered_minus_32022_before_the_handler(requested):
    called: list[int] = []

    class Recording(EchoAgent):
        async def initialize(self, params: Any) -> Any:
            called.append(params.protocol_version)
            return await super().initialize(params)

    async with raw_client(Recording()) as peer:
        params = {**acp.encode(INIT), "protocolVersion": requested}
        answer = await peer.ask(request(0, "initialize", params))
        assert answer == {
            "jsonrpc": "2.0",
            "id": 0,
            "error": {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"requested": requested, "supported": [2]},
            },
        }
        # not initialized: a later initialize of the version it speaks is served
        assert (await peer.ask(request(1, "session/new", {"cwd": "/w"})))["error"]["code"] == -32600
        await peer.initialize()
    assert called == [2]  # only the initialize it serves reached the handler


async def test_an_initialize_asking_for_a_newer_version_is_served_as_the_packages_version():
    agent = EchoAgent()  # answers with the version its handler was given
    async with raw_client(agent) as peer:
        answer = await peer.ask(request(0, "initialize", {**acp.encode(INIT), "protocolVersion": 7}))
    assert answer["result"]["protocolVersion"] == 2


async def test_the_typed_client_gets_minus_32022_as_a_typed_request_error():
    async with connected(initialize=False) as (_, conn):
        old = acp.InitializeRequest(protocol_version=1, info=acp.Implementation(name="old", version="1"))
        with pytest.raises(acp.RequestError) as caught:
            await conn.initialize(old)
    assert caught.value.code == -32022
    assert caught.value.data == acp.UnsupportedProtocolVersionErrorData(requested=1, supported=[2])


async def test_a_base_value_where_a_tagged_variant_is_expected_is_refused_before_sending():
    async with connected() as (agent_conn, _):
        untagged = acp.UpdateSessionNotification(session_id="s1", update=acp.ToolCallUpdate(tool_call_id="t1"))
        with pytest.raises(TypeError, match="wrap it in SessionUpdateToolCallUpdate"):
            await agent_conn.session_update(untagged)


# --- hostile lines -------------------------------------------------------------


@pytest.mark.parametrize("use_orjson", [True, False], ids=["orjson", "json"])
@pytest.mark.parametrize("hostile", LINES, ids=[line.name for line in LINES])
async def test_no_line_ends_the_connection(hostile, use_orjson, monkeypatch):
    """Each hostile line gets the answer JSON-RPC gives it (tests/support/hostile_lines.py), in valid
    UTF-8 JSON, and the connection serves the next request; nothing escapes to asyncio."""
    if not use_orjson:
        monkeypatch.setattr(runtime_module("_runtime"), "ORJSON", None)
    unhandled: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context))
    async with raw_client() as peer:
        await peer.initialize()
        await peer.send(hostile.line + b"\n")
        await peer.send(request("next", "session/new", {"cwd": "/w"}))
        answers = []
        while True:
            line = await asyncio.wait_for(peer.reader.readline(), 10)
            assert line, f"the connection ended after {hostile.name}"
            answer = json.loads(line.decode("utf-8"))  # strict UTF-8: no lone surrogate written raw
            if answer.get("id") == "next":
                assert answer["result"] == {"sessionId": "s1"}
                break
            answers.append((answer["id"], answer["error"]["code"] if "error" in answer else None))
        expected = hostile.expected(use_orjson)
        assert answers == expected
    gc.collect()  # a task whose exception nobody retrieved is reported when it is collected
    await asyncio.sleep(0)
    assert not unhandled


# --- limits and backpressure ---------------------------------------------------------


async def flood(writer: asyncio.StreamWriter, lines: Any, written: list[int] | None = None) -> None:
    """Write `lines` as a peer would, waiting whenever the socket pushes back; `written[0]`
    counts the lines written so far. (`write`, not `writelines`: on Python 3.12.1 to 3.13.0,
    `writelines` never pauses the writer, CPython gh-127655, and `drain` would not wait.)"""
    written = [0] if written is None else written
    batch = []
    for line in lines:
        batch.append(line)
        if len(batch) == 100:
            writer.write(b"".join(batch))
            written[0] += len(batch)
            batch.clear()
            await writer.drain()
    writer.write(b"".join(batch))
    written[0] += len(batch)
    await writer.drain()


async def until_pushed_back(sending: asyncio.Task[None], written: list[int], quiet: float = 1.0) -> None:
    """Wait until the flood is done or has written nothing for `quiet` seconds (the socket
    pushes back because the connection stopped reading). Without the limits, the connection
    reads the whole flood: then the flood ends, and the test's checks fail."""
    while not sending.done():
        before = written[0]
        await asyncio.wait([sending], timeout=quiet)
        if written[0] == before:
            return


async def test_a_flood_of_notifications_to_a_slow_handler_keeps_memory_flat():
    """100,000 notifications while the handler is stuck: the reader stops at
    max_queued_notifications, the socket pushes back on the peer, memory stays bounded."""

    class SlowClient(acp.Client):
        def __init__(self) -> None:
            self.release = asyncio.Event()
            self.count = 0

        async def session_update(self, params: Any) -> None:
            await self.release.wait()
            self.count += 1

    client = SlowClient()
    update = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "x" * 300},
    }
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}})
    tracemalloc.start()
    try:
        # A reader limit of 64 KiB (asyncio's default): a StreamReader buffers up to twice its
        # limit before it pauses the socket.
        async with raw_agent(client, limit=2**16) as (peer, conn):
            initializing = asyncio.create_task(conn.initialize(INIT))
            asked = await peer.receive()
            info = {"name": "raw", "version": "1"}
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"protocolVersion": 2, "info": info}})
            await initializing
            written = [0]
            lines = (line.encode() + b"\n" for _ in range(100_000))
            sending = asyncio.create_task(flood(peer.writer, lines, written))
            await until_pushed_back(sending, written)
            assert not sending.done(), "the connection read the whole flood: nothing pushed back"
            assert written[0] < 10_000, f"{written[0]} notifications read while the handler is stuck"
            _, held = tracemalloc.get_traced_memory()
            assert held < 30 * 2**20, f"{held / 2**20:.1f} MiB while the handler is stuck"
            client.release.set()
            await asyncio.wait_for(sending, 60)
            while client.count < 100_000:
                await asyncio.sleep(0.05)
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 30 * 2**20, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.async_timeout(180)  # 20,000 requests under tracemalloc: 32 s alone on a loaded machine
async def test_a_peer_that_sends_requests_without_reading_answers_cannot_grow_memory():
    """20,000 requests written without reading one answer, their handlers stuck: at most
    max_concurrent_requests are served at once (the reader stops, the socket pushes back),
    answers wait in bounded buffers, and every one arrives once the peer reads."""

    class SlowAgent(EchoAgent):
        def __init__(self) -> None:
            super().__init__()
            self.release = asyncio.Event()
            self.running = self.most = 0

        async def session_new(self, params: Any) -> Any:
            self.running += 1
            self.most = max(self.most, self.running)
            try:
                await self.release.wait()
            finally:
                self.running -= 1
            return acp.NewSessionResponse(session_id="s1")

    agent = SlowAgent()
    tracemalloc.start()
    try:
        async with raw_client(agent, limit=2**16) as peer:
            await peer.initialize()
            lines = (json.dumps(request(n, "session/new", {"cwd": "/w"})).encode() + b"\n" for n in range(1, 20_001))
            written = [0]
            sending = asyncio.create_task(flood(peer.writer, lines, written))
            await until_pushed_back(sending, written)
            assert not sending.done(), "the connection read every request: nothing pushed back"
            assert agent.most == acp.DEFAULT_LIMITS.max_concurrent_requests
            _, held = tracemalloc.get_traced_memory()
            assert held < 30 * 2**20, f"{held / 2**20:.1f} MiB while the peer reads nothing"
            agent.release.set()
            await asyncio.sleep(0.5)  # answers pile up: the peer still reads nothing
            answered = set()
            while len(answered) < 20_000:
                answer = json.loads(await asyncio.wait_for(peer.reader.readline(), 10))
                answered.add(answer["id"])
            await sending
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answered == set(range(1, 20_001))
    assert agent.most == acp.DEFAULT_LIMITS.max_concurrent_requests
    assert peak < 30 * 2**20, f"peak {peak / 2**20:.1f} MiB"


async def test_a_peer_that_stops_reading_fails_the_connection_after_the_output_stall():
    limits = acp.ConnectionLimits(max_buffered_bytes=64 * 1024, max_output_stall=0.5)
    (client_reader, client_writer), (_peer_reader, peer_writer) = await stream_pair()
    conn = acp.connect_to_agent(
        RecordingClient(), client_reader, client_writer, options=acp.ConnectionOptions(limits=limits)
    )
    started = asyncio.get_running_loop().time()
    with pytest.raises(acp.ConnectionClosed, match=r"read none of the output for 0\.5 s"):
        for _ in range(1000):  # the peer reads nothing: far more than any socket buffer holds
            await asyncio.wait_for(conn.ext_notification("_test/big", {"data": "x" * 100_000}), 10)
    await asyncio.wait_for(conn.wait_closed(), 5)
    assert asyncio.get_running_loop().time() - started < 5
    with pytest.raises(acp.ConnectionClosed):
        await conn.ext_notification("_test/after", {})
    peer_writer.close()


def test_connection_limits_have_the_typescript_sdks_defaults_and_refuse_nonsense():
    limits = acp.ConnectionLimits()
    assert (limits.max_message_bytes, limits.max_buffered_bytes, limits.max_output_stall, limits.max_id_length) == (
        32 * 2**20,
        64 * 2**20,
        60.0,
        1024,
    )
    with pytest.raises(ValueError, match="max_concurrent_requests"):
        acp.ConnectionLimits(max_concurrent_requests=0)


# --- strict decoding and salvage reports -----------------------------------------------

SALVAGEABLE_NEW = {"cwd": "/w", "mcpServers": None}  # lenient: `mcpServers` is dropped (a salvage)
SALVAGEABLE_UPDATE = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "kind": 5}},
}


async def test_a_strict_connection_refuses_params_lenient_decoding_would_salvage():
    async with raw_client() as peer:
        await peer.initialize()
        assert (await peer.ask(request(1, "session/new", SALVAGEABLE_NEW)))["result"] == {"sessionId": "s1"}
    async with raw_client(strict=True) as peer:
        await peer.initialize()
        answer = await peer.ask(request(1, "session/new", SALVAGEABLE_NEW))
        assert answer["error"]["code"] == -32602
        assert "$.params.mcpServers" in json.dumps(answer["error"])
        assert (await peer.ask(request(2, "session/new", {"cwd": "/w"})))["result"] == {"sessionId": "s1"}


async def test_on_salvage_sees_each_salvage_of_served_params_with_its_path():
    seen: list[Any] = []
    async with raw_client(on_salvage=seen.append) as peer:
        await peer.initialize()
        assert seen == []  # a valid message reports nothing
        assert (await peer.ask(request(1, "session/new", SALVAGEABLE_NEW)))["result"] == {"sessionId": "s1"}
        assert [report.path for report in seen] == ["$.params.mcpServers"]
        assert isinstance(seen[0], acp.Salvage) and "expected array, found null" in seen[0].reason


async def test_strict_and_on_salvage_reach_notifications_and_results_the_connection_receives():
    for strict in (False, True):
        seen: list[Any] = []
        client = RecordingClient()
        async with raw_agent(client, strict=strict, on_salvage=seen.append) as (peer, conn):
            initializing = asyncio.create_task(conn.initialize(INIT))
            asked = await peer.receive()
            info = {"name": "raw", "version": "1"}
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"protocolVersion": 2, "info": info}})
            await initializing
            listing = asyncio.create_task(conn.session_list(acp.ListSessionsRequest()))
            asked = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {}})  # lenient: sessions []
            await peer.send(SALVAGEABLE_UPDATE)
            await peer.send({**SALVAGEABLE_UPDATE, "params": {**SALVAGEABLE_UPDATE["params"], "sessionId": "ok"}})
            if strict:
                with pytest.raises(acp.DecodeError, match=r"\$\.result\.sessions"):
                    await listing
            else:
                assert (await listing).sessions == []
            valid = {"sessionUpdate": "tool_call_update", "toolCallId": "t"}
            await peer.send({**SALVAGEABLE_UPDATE, "params": {"sessionId": "last", "update": valid}})
            while len(client.updates) < (1 if strict else 3):
                await asyncio.sleep(0.01)
        if strict:
            assert seen == [] and len(client.updates) == 1  # both salvageable updates refused
        else:
            paths = [report.path for report in seen]
            assert paths == ["$.result.sessions", "$.params.update.kind", "$.params.update.kind"], paths


# --- the end of a connection, and params left out -------------------------------------


async def test_closing_a_connection_awaits_its_handler_tasks_not_only_cancels_them():
    """A handler cancelled by `close` finishes its cleanup (which awaits) before `close` returns."""

    class CleaningAgent(EchoAgent):
        def __init__(self) -> None:
            super().__init__()
            self.cleaned: list[str] = []
            self.notified = asyncio.Event()

        async def session_new(self, params: Any) -> Any:
            self.blocked.set()
            try:
                await asyncio.get_running_loop().create_future()
            finally:
                await asyncio.sleep(0.05)  # cleanup that takes a few steps of the loop
                self.cleaned.append("request")
            raise AssertionError("unreachable")

        async def session_cancel(self, params: Any) -> None:
            self.notified.set()
            try:
                await asyncio.get_running_loop().create_future()
            finally:
                await asyncio.sleep(0.05)
                self.cleaned.append("notification")

    agent = CleaningAgent()
    (agent_reader, agent_writer), (peer_reader, peer_writer) = await stream_pair()
    conn = acp.connect_to_client(agent, agent_reader, agent_writer)
    peer = RawPeer(peer_reader, peer_writer)
    await peer.initialize()
    await peer.send(request(1, "session/new", {"cwd": "/w"}))
    await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
    await agent.blocked.wait()
    await agent.notified.wait()
    await conn.close()
    assert sorted(agent.cleaned) == ["notification", "request"]
    peer_writer.close()


@pytest.mark.parametrize("params", ["missing", None, {}])
async def test_a_request_whose_params_are_all_optional_reads_missing_or_null_params_as_empty(params):
    """As the TypeScript SDK's zod schemas read them: `session/list` has only optional params."""

    class ListingAgent(EchoAgent):
        async def session_list(self, params: Any) -> Any:
            assert params == acp.ListSessionsRequest()
            return acp.ListSessionsResponse(sessions=[])

    async with raw_client(ListingAgent()) as peer:
        await peer.initialize()
        message = request(1, "session/list")
        if params != "missing":
            message["params"] = params
        assert await peer.ask(message) == {"jsonrpc": "2.0", "id": 1, "result": {"sessions": []}}


async def test_a_connection_nobody_references_keeps_serving_through_garbage_collection():
    (agent_reader, agent_writer), (peer_reader, peer_writer) = await stream_pair()
    acp.connect_to_client(EchoAgent(), agent_reader, agent_writer)  # the connection is not kept
    del agent_reader, agent_writer
    peer = RawPeer(peer_reader, peer_writer)
    await asyncio.sleep(0.01)
    gc.collect()
    await peer.initialize()
    assert (await peer.ask(request(1, "session/new", {"cwd": "/w"})))["result"] == {"sessionId": "s1"}
    peer_writer.close()
    while len(asyncio.all_tasks()) > 1:  # the agent's connection ends with the stream
        await asyncio.sleep(0.01)


# --- cancelling the owner, and how long a close takes -------------------------------------


async def a_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hang_up: Callable[[], bool]) -> None:
    """A client's whole life with an agent (initialize, a session, a prompt whose updates stream,
    a notification), then it ends its output if `hang_up()`, and reads until the agent's output
    ends; it stops early when that ends first (a socket closed with input unread is reset)."""
    peer = RawPeer(reader, writer)
    messages = [
        request(0, "initialize", acp.encode(INIT)),
        request(1, "session/new", {"cwd": "/w"}),
        request(2, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}),
    ]
    with contextlib.suppress(ConnectionResetError):
        for message in messages:
            await peer.send(message)
            while (line := await reader.readline()) and json.loads(line).get("id") != message["id"]:
                pass
            if not line:
                return
        await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
        if hang_up():
            writer.write_eof()
        while await reader.readline():
            pass


@pytest.mark.parametrize("routed", [False, True], ids=["alone", "routed"])
async def test_cancelling_run_agent_at_any_await_closes_its_connection(routed, monkeypatch):
    """`run_agent` (alone, and routed through `serve_agent`) serving a client's whole life,
    cancelled at each of its awaits: it ends, and closes its connection (a client that has not
    hung up yet sees the agent's output end), leaving no task behind."""
    stdio: list[tuple[Any, Any]] = []

    async def stdio_streams(limit: int = 0) -> tuple[Any, Any]:
        return stdio.pop()

    monkeypatch.setattr(acp.transports, "stdio_streams", stdio_streams)
    others = [acp_v1.Agent()] if routed else []

    async def serve(point: int | None, steps: list[int]) -> None:
        """run_agent serving a client, cancelled at its await `point` (None: never)."""

        def on_step(step: int) -> None:
            steps.append(step)
            if step == point:
                asyncio.current_task().cancel()  # run_agent's task

        agent_end, (reader, writer) = await stream_pair()
        stdio.append(agent_end)
        client = asyncio.create_task(a_client(reader, writer, hang_up=lambda: point not in steps))
        owner = asyncio.ensure_future(Stepped(acp.run_agent(EchoAgent(), *others), on_step))
        await asyncio.wait([owner], timeout=10)
        assert owner.done(), "run_agent did not end"
        await asyncio.wait_for(client, 10)  # the agent's output ended
        writer.close()

    steps: list[int] = []
    await serve(None, steps)
    for point in steps:
        await serve(point, [])
        leaked = asyncio.all_tasks() - {asyncio.current_task()}
        assert not leaked, f"cancelled at await {point} of {len(steps)}: {leaked}"


@pytest.mark.parametrize("connect", [acp.connect_to_agent, acp.connect_to_client])
async def test_close_drops_output_the_peer_has_not_read_after_close_timeout(connect):
    (reader, writer), (_, peer_writer) = await stream_pair()  # the peer reads nothing
    handler = acp.Client() if connect is acp.connect_to_agent else EchoAgent()
    conn = connect(handler, reader, writer, options=acp.ConnectionOptions(close_timeout=0.2))
    for _ in range(20):  # more than the socket holds; the peer reads none of it
        await conn.ext_notification("_x", "y" * 2**20)
    started = time.monotonic()
    await conn.close()
    assert time.monotonic() - started < 3  # 5 s: the transport's default
    peer_writer.close()


STUBBORN_AGENT = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"


async def test_spawn_agent_process_exits_within_its_timeouts_from_an_agent_that_reads_nothing():
    """The agent reads none of its input and ignores SIGTERM: leaving the block drops the input
    after `timeout`, terminates after another, kills after a third (5.6 s when closing the
    connection waited 5 s), and asyncio reports no error (the pipe's close waiter is intact)."""
    unhandled: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context))
    command = (sys.executable, "-c", STUBBORN_AGENT)
    async with acp.spawn_agent_process(acp.Client(), *command, timeout=0.3) as (conn, process):
        for _ in range(10):  # more than a pipe holds
            await conn.ext_notification("_x", "y" * 100_000)
        started = time.monotonic()
    assert time.monotonic() - started < 3
    assert process.returncode == -9
    await asyncio.sleep(0.1)  # the pipe's connection_lost runs
    assert not unhandled, unhandled


# --- v1 turns, as real v1 agents run them -------------------------------------------


class V1TurnAgent(acp_v1.Agent):
    """Sends a turn's last updates just before the answer that ends it (as real v1 agents do);
    `hold` keeps the turn running until it is cancelled."""

    def __init__(self, hold: bool = False) -> None:
        self.conn: Any = None
        self.hold = hold
        self.cancelled: list[str] = []
        self.prompt_cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, params: Any) -> Any:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def session_prompt(self, params: Any) -> Any:
        if self.hold:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.prompt_cancelled.set()
                raise
        for text in ("last", "words"):
            chunk = acp_v1.SessionUpdateAgentMessageChunk(content=acp_v1.ContentBlockText(text=text))
            await self.conn.session_update(acp_v1.SessionNotification(session_id=params.session_id, update=chunk))
        return acp_v1.PromptResponse(stop_reason=acp_v1.StopReason.END_TURN)

    async def session_cancel(self, params: Any) -> None:
        self.cancelled.append(params.session_id)


class SlowV1Client(acp_v1.Client):
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, params: Any) -> None:
        await asyncio.sleep(0.02)
        self.texts.append(params.update.content.text)


V1_PROMPT = acp_v1.PromptRequest(session_id="s1", prompt=[acp_v1.ContentBlockText(text="hi")])


async def test_a_v1_prompt_returns_after_the_updates_received_before_its_answer_are_handled():
    client = SlowV1Client()
    async with acp_v1.connect_pair(V1TurnAgent(), client) as (_, conn):
        await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        for _ in range(3):
            client.texts.clear()
            await conn.session_prompt(V1_PROMPT)
            assert client.texts == ["last", "words"]


async def test_cancelling_a_prompts_task_sends_session_cancel_for_its_session_and_cancels_the_request():
    agent = V1TurnAgent(hold=True)
    async with acp_v1.connect_pair(agent, acp_v1.Client()) as (_, conn):
        await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        prompting = asyncio.create_task(conn.session_prompt(V1_PROMPT))
        await asyncio.sleep(0.05)
        prompting.cancel()
        await asyncio.wait_for(agent.prompt_cancelled.wait(), 5)  # `$/cancel_request`
        for _ in range(100):
            if agent.cancelled:
                break
            await asyncio.sleep(0.01)
        assert agent.cancelled == ["s1"]


async def test_cancelling_a_v2_prompts_task_withdraws_the_held_prompt_and_leaves_the_running_turn():
    """A v2 prompt is answered once inserted: a pending one is held, its turn not started, and
    `session/cancel` would cancel the turn before it. Cancelling its task sends `$/cancel_request`
    alone."""
    agent = EchoAgent()
    async with connected(agent) as (_, conn):
        held = acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="block")])
        prompting = asyncio.create_task(conn.session_prompt(held))
        await agent.blocked.wait()
        prompting.cancel()
        await asyncio.wait_for(agent.handler_cancelled.wait(), 5)  # `$/cancel_request`
        await asyncio.sleep(0.1)  # a `session/cancel` sent before it would have been handled
        assert agent.cancelled_sessions == []


class ForkingV1Agent(V1TurnAgent):
    """Forks sessions and reports each turn's token usage, beyond the stable v1 schema as the
    agents built on the TypeScript and Python SDKs do."""

    async def session_fork(self, params: Any) -> Any:
        return acp_v1.ForkSessionResponse(session_id=f"{params.session_id}-fork")

    async def session_prompt(self, params: Any) -> Any:
        usage = acp_v1.Usage(total_tokens=12, input_tokens=10, output_tokens=2)
        return acp_v1.PromptResponse(stop_reason=acp_v1.StopReason.END_TURN, usage=usage)


async def test_v1_reaches_what_real_agents_use_beyond_the_stable_schema_typed():
    """acp_v1 comes from the v1 schema's unstable edition, a superset of the stable one: a v1
    client forks a session and reads a turn's usage as typed values, not unknown properties."""
    async with acp_v1.connect_pair(ForkingV1Agent(), acp_v1.Client()) as (_, conn):
        await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        forked = await conn.session_fork(acp_v1.ForkSessionRequest(session_id="s1", cwd="/"))
        assert forked.session_id == "s1-fork"
        answer = await conn.session_prompt(V1_PROMPT)
        assert answer.usage == acp_v1.Usage(total_tokens=12, input_tokens=10, output_tokens=2)
        assert answer.unknown_properties == {}
