"""acp_v2 against the official TypeScript SDK 2.4.0 (experimental v2), over stdio and WebSocket: the
example agent serves a TypeScript client (interop/ts_client.mjs; over WebSocket its
`createWebSocketStream` against interop/ws_echo_agent.py) and the example client drives a
TypeScript agent (interop/ts_agent.mjs, the example agent's counterpart; over WebSocket behind the
SDK's `AcpServer`), on every path: a turn with streamed updates and a permission request,
cancellation both ways, error codes.

Needs `node` and the SDK in interop/node_modules (`make interop` installs it); skipped otherwise."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest

from tests.helpers import ROOT, import_package
from tests.test_examples import ALLOW, ENV, EXAMPLES, INIT, UserClient, prompt, run

acp = import_package(ROOT / "generated", "acp_v2")
INTEROP = ROOT / "interop"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not (INTEROP / "node_modules" / "@agentclientprotocol" / "sdk").is_dir(),
    reason="interop needs node and the TypeScript SDK: run `make interop`",
)
needs_ws = pytest.mark.skipif(
    not (INTEROP / "node_modules" / "ws").is_dir(),
    reason="the TypeScript SDK's WebSocket transports need the `ws` package in node: run `make interop`",
)


def test_the_example_agent_serves_a_typescript_client():
    command = [NODE, str(INTEROP / "ts_client.mjs"), sys.executable, str(EXAMPLES / "echo_agent.py")]
    env = {**os.environ, **ENV}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_client_report(json.loads(result.stdout))


@contextmanager
def listening(command: list[str]) -> Iterator[str]:
    """A server process that prints its `ws://` or `http://127.0.0.1:PORT/acp` and serves until its stdin ends: that URL."""
    env = {**os.environ, **ENV}
    with subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdin is not None and server.stdout is not None
        try:
            url = server.stdout.readline().strip()
            assert url.startswith(("ws://127.0.0.1:", "http://127.0.0.1:")) and url.endswith("/acp"), url
            yield url
        finally:
            server.stdin.close()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()


@needs_ws
def test_the_example_agent_serves_a_typescript_client_over_websocket():
    with listening([sys.executable, str(INTEROP / "ws_echo_agent.py")]) as url:
        command = [NODE, str(INTEROP / "ts_client.mjs"), "--url", url]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_client_report(json.loads(result.stdout))


@needs_ws
@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_example_agent_serves_a_typescript_client_over_http_and_websocket_from_its_asgi_app(scheme):
    """interop/http_echo_agent.py: `http_app` under uvicorn, HTTP and WebSocket on one path;
    the SDK's `createHttpStream` and `createWebSocketStream`."""
    with listening([sys.executable, str(INTEROP / "http_echo_agent.py")]) as url:
        command = [NODE, str(INTEROP / "ts_client.mjs"), "--url", url.replace("http", scheme, 1)]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_client_report(json.loads(result.stdout))


def check_typescript_client_report(report: dict[str, Any]) -> None:
    """What interop/ts_client.mjs saw of the example agent, over any transport."""
    assert report["init"]["info"]["name"] == "echo-agent"
    assert report["exitCode"] == 0

    first = report["firstTurn"]
    assert first["stopReason"] == "end_turn"
    user, running, opened, in_progress, *chunks, completed, idle = first["updates"]
    assert user["sessionUpdate"] == "user_message" and user["messageId"] == first["messageId"]
    assert running == {"sessionUpdate": "state_update", "state": "running"}
    assert (opened["sessionUpdate"], opened["title"], opened["rawInput"]) == (
        "tool_call_update",
        "Echo",
        {"text": "hello from typescript"},
    )
    assert in_progress["status"] == "in_progress"
    assert [chunk["sessionUpdate"] for chunk in chunks] == ["agent_message_chunk"] * 3
    assert [chunk["content"]["text"] for chunk in chunks] == ["hello", " from", " typescript"]
    assert (completed["toolCallId"], completed["status"]) == (opened["toolCallId"], "completed")
    assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}

    second = report["secondTurn"]
    assert second["stopReason"] == "cancelled"
    assert [update.get("status") for update in second["updates"]][-2] == "cancelled"
    assert report["asked"] == ["Echo?", "Echo?"]
    assert report["withdrawn"] == ["Echo?"]  # the agent withdrew the second request: $/cancel_request
    assert report["held"] == {"withdrawn": -32800, "cancelled": -32800}  # by $/cancel_request, by session/cancel
    assert report["errors"] == {
        "invalidParams": -32602,
        "unknownSession": -32002,
        "unknownMethod": -32601,
        "unknownExtension": -32601,
    }


def test_the_example_client_drives_a_typescript_agent():
    command = [sys.executable, str(EXAMPLES / "client.py"), NODE, str(INTEROP / "ts_agent.mjs")]
    result = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXAMPLE_CLIENT_OUTPUT


@needs_ws
@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_example_client_drives_a_typescript_agent_over_http_and_websocket(scheme):
    """interop/ts_agent.mjs --listen: the SDK's AcpServer with its Node adapter and `ws`."""
    with listening([NODE, str(INTEROP / "ts_agent.mjs"), "--listen"]) as url:
        command = [sys.executable, str(EXAMPLES / "client.py"), "--url", url.replace("http", scheme, 1)]
        result = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXAMPLE_CLIENT_OUTPUT


EXAMPLE_CLIENT_OUTPUT = [
    "connected to ts-echo-agent 1.0",
    "permission asked: Echo? -> Echo",
    "user message: hello world, echo me",
    "tool call 'Echo': completed",
    "agent message: hello world, echo me",
    "turn ended: end_turn",
    "permission asked: Echo? -> cancel the turn",
    "user message: and this too",
    "tool call 'Echo': cancelled",
    "turn ended: cancelled",
]


@asynccontextmanager
async def typescript_agent() -> AsyncIterator[tuple[Any, UserClient, str]]:
    client = UserClient()
    async with acp.spawn_agent_process(client, NODE, str(INTEROP / "ts_agent.mjs")) as (conn, process):
        assert (await conn.initialize(INIT)).info.name == "ts-echo-agent"
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        yield conn, client, session.session_id
    assert process.returncode == 0


def test_a_python_client_cancels_a_typescript_agents_requests_and_turns():
    async def test() -> None:
        async with typescript_agent() as (conn, client, session_id):
            await conn.session_prompt(prompt(session_id, "first"))
            question, _ = await client.questions.get()
            withdrawn = asyncio.create_task(conn.session_prompt(prompt(session_id, "withdrawn")))
            held = asyncio.create_task(conn.session_prompt(prompt(session_id, "held")))
            await asyncio.sleep(0.2)
            withdrawn.cancel()  # $/cancel_request: the agent's handler sees its signal abort
            with pytest.raises(asyncio.CancelledError):
                await withdrawn
            while not (await conn.ext_method("_interop/seen", {}))["seen"]:  # before session/cancel
                await asyncio.sleep(0.05)
            await conn.session_cancel(acp.CancelSessionNotification(session_id=session_id))
            with pytest.raises(acp.RequestError) as caught:
                await held
            assert caught.value.code == -32800
            assert await client.withdrawn.get() is question  # the agent withdrew its permission request
            assert await client.idle.get() == "cancelled"
            *_, cancelled, idle = client.take()
            assert cancelled == {"sessionUpdate": "tool_call_update", "toolCallId": "echo-3", "status": "cancelled"}
            assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
            assert await conn.ext_method("_interop/seen", {}) == {
                "seen": ["prompt withdrawn: withdrawn", "turn cancelled: first"]
            }

            sent = asyncio.create_task(conn.session_prompt(prompt(session_id, "one more time")))
            _, answer = await client.questions.get()
            answer.set_result(ALLOW)
            await sent
            assert await client.idle.get() == "end_turn"
            updates = client.take()
            chunks = [
                update["content"]["text"] for update in updates if update["sessionUpdate"] == "agent_message_chunk"
            ]
            assert chunks == ["one", " more", " time"]

    run(test)


def test_a_typescript_agent_answers_errors_a_python_client_reads():
    async def test() -> None:
        async with typescript_agent() as (conn, _, _session_id):
            with pytest.raises(acp.RequestError) as caught:
                await conn.session_prompt(prompt("nope", "hello"))
            assert (caught.value.code, caught.value.data) == (-32002, acp.SessionNotFoundErrorData(session_id="nope"))
            with pytest.raises(acp.RequestError) as caught:
                await conn.session_list(acp.ListSessionsRequest())
            assert caught.value.code == -32601
            with pytest.raises(acp.RequestError) as caught:
                await conn.ext_method("_py/unknown", {})
            assert caught.value.code == -32601

    run(test)


PEERS = ROOT / ".cache" / "peers"  # `make interop` installs agent-client-protocol 0.12.1 here


@pytest.mark.skipif(not (PEERS / "acp").is_dir(), reason="needs the Python SDK in .cache/peers: run `make interop`")
def test_the_example_agent_routes_a_python_sdk_v1_client_to_its_v1_agent():
    command = [sys.executable, str(INTEROP / "py_client_v1.py"), sys.executable, str(EXAMPLES / "echo_agent.py")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PEERS), str(ROOT / "generated")])}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_python_v1_client_report(json.loads(result.stdout))


@pytest.mark.skipif(not (PEERS / "acp").is_dir(), reason="needs the Python SDK in .cache/peers: run `make interop`")
@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_example_agents_asgi_app_routes_a_python_sdk_v1_client_over_http_and_websocket(scheme):
    """The Python SDK 0.12.1's `acp.http` and `acp.ws` clients against `http_app` under uvicorn; its
    HTTP client answers the session's permission request without `Acp-Session-Id`."""
    with listening([sys.executable, str(INTEROP / "http_echo_agent.py")]) as url:
        command = [sys.executable, str(INTEROP / "py_client_v1.py"), "--url", url.replace("http", scheme, 1)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PEERS), str(ROOT / "generated")])}
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_python_v1_client_report(json.loads(result.stdout))


def check_python_v1_client_report(report: dict[str, Any]) -> None:
    """What interop/py_client_v1.py saw of the example agent's v1 route, over any transport."""
    assert report["init"]["protocolVersion"] == 1
    assert report["init"]["agentInfo"] == {"name": "echo-agent", "version": "1.0"}
    assert report["firstStop"] == "end_turn"
    opened, *chunks, completed = report["firstUpdates"]
    assert (opened["sessionUpdate"], opened["title"]) == ("tool_call", "Echo")
    assert [chunk["sessionUpdate"] for chunk in chunks] == ["agent_message_chunk"] * 3
    assert [chunk["content"]["text"] for chunk in chunks] == ["hello", " from", " python"]
    assert (completed["toolCallId"], completed["status"]) == (opened["toolCallId"], "completed")
    assert report["asked"] == [["allow", "reject"], ["allow", "reject"]]
    assert report["secondStop"] == "cancelled"  # session/cancel during the permission request


def loads_deep(raw: bytes) -> Any:
    """json.loads of a line the TypeScript SDK wrote, which may echo a value nested ~1000 deep."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))
    try:
        return json.loads(raw)
    finally:
        sys.setrecursionlimit(limit)


def test_the_typescript_sdk_answers_each_hostile_line_as_tests_hostile_lines_says():
    """tests/hostile_lines.py's answers, checked against the TypeScript agent live: the same
    `(id, code)` on every line, except the differences the table lists (and explains)."""
    from tests.hostile_lines import LINES, TS_EXITS

    async def exchange(process: Any, line: bytes) -> list[tuple[Any, Any]]:
        # The TypeScript SDK serves messages concurrently: a sentinel request after the line, and
        # once it is answered a second one (an I/O round trip runs every pending handler to its
        # end); every answer that is not a sentinel's until the second one comes back.
        answers = []
        for sentinel in ("s1", "s2"):
            ask = {"jsonrpc": "2.0", "id": sentinel, "method": "session/new", "params": {"cwd": "/w"}}
            process.stdin.write((line + b"\n" if sentinel == "s1" else b"") + json.dumps(ask).encode() + b"\n")
            await process.stdin.drain()
            while True:
                raw = await asyncio.wait_for(process.stdout.readline(), 10)
                assert raw, "the TypeScript agent exited"
                answer = loads_deep(raw)
                if answer.get("id") == sentinel:
                    break
                if "method" not in answer:
                    answers.append((answer["id"], answer["error"]["code"] if "error" in answer else None))
        return answers

    async def test() -> None:
        process = await asyncio.create_subprocess_exec(
            NODE, str(INTEROP / "ts_agent.mjs"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=1 << 26
        )
        try:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": acp.encode(INIT)}
            process.stdin.write(json.dumps(init).encode() + b"\n")
            assert "result" in json.loads(await asyncio.wait_for(process.stdout.readline(), 30))
            mismatches = {}
            for hostile in LINES:
                if hostile.ts == TS_EXITS:
                    continue
                answers = await exchange(process, hostile.line)
                if answers != (hostile.answers if hostile.ts is None else hostile.ts):
                    mismatches[hostile.name] = answers
            assert not mismatches
        finally:
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 5)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()

    asyncio.run(asyncio.wait_for(test(), 120))
