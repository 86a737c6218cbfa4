"""Live tests against the official SDKs, run by `make test` (which installs them: the TypeScript
SDK 2.4.0 into interop/node_modules, the Python SDK 0.12.1 into .cache/peers). The matrix:

- the TypeScript SDK's v2 client (interop/ts_client.mjs) against the example agent over stdio,
  and over Streamable HTTP and WebSocket against `echo_agent.py --listen` (`http_app` under
  uvicorn) and over WebSocket against `serve_websocket` (interop/ws_echo_agent.py); its v1
  client (interop/ts_client_v1.mjs) over stdio;
- the Python SDK's v1 client (interop/py_client_v1.py) over stdio, HTTP and WebSocket;
- the example client (v2) against a TypeScript SDK agent (interop/ts_agent.mjs) over stdio, and
  over HTTP and WebSocket behind the SDK's `AcpServer`; a Python client cancelling its requests
  and turns; its error answers and its answer to each hostile line;
- acp_v1's client against the Python SDK's own server (interop/py_agent_v1.py: `acp.http`'s
  ASGI `AcpServer` under uvicorn, WebSocket through `acp.ws`) over HTTP and WebSocket, and the
  example client negotiating down to v1 with it;
- a Python SDK agent over stdio (interop/py_agent_stdio.py) that answers a v2 `initialize` with
  `protocolVersion: 2` and a v1 body, negotiated by our client, and the same agent behind
  `sh -c` and a node shim, ignoring the end of its stdin and SIGTERM, stopped with its group.

A test that needs node is skipped where node is absent; a missing SDK is a failure that says
how to install it. Every peer runs on 127.0.0.1 with a bounded wait."""

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

from tests.support.helpers import ROOT, import_package
from tests.test_examples import ALLOW, ENV, EXAMPLES, INIT, UserClient, listening_echo_agent, prompt

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")
INTEROP = ROOT / "interop"
PEERS = ROOT / ".cache" / "peers"
TS_SDK_VERSION = "2.4.0"
PY_SDK_VERSION = "0.12.1"


@pytest.fixture
def node() -> str:
    """The `node` command, with the TypeScript SDK (and `ws`: Node 20 has no global WebSocket)
    installed in interop/node_modules; the test is skipped where node is absent."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed: the tests against the TypeScript SDK need it")
    manifests = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
    if not manifests.is_file() or not (INTEROP / "node_modules" / "ws" / "package.json").is_file():
        pytest.fail("the TypeScript SDK is not in interop/node_modules: `make test` (or `make interop`) installs it")
    version = json.loads(manifests.read_text())["version"]
    assert version == TS_SDK_VERSION, f"interop/node_modules has the TypeScript SDK {version}, not {TS_SDK_VERSION}"
    return found


@pytest.fixture
def python_sdk() -> dict[str, str]:
    """The environment of a process that imports the Python SDK (and the generated packages)."""
    if not (PEERS / f"agent_client_protocol-{PY_SDK_VERSION}.dist-info").is_dir():
        pytest.fail(
            f"the Python SDK {PY_SDK_VERSION} is not in .cache/peers: `make test` (or `make interop`) installs it"
        )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(PEERS), str(ROOT / "generated")])}


def test_the_example_agent_serves_a_typescript_client(node):
    command = [node, str(INTEROP / "ts_client.mjs"), sys.executable, str(EXAMPLES / "echo_agent.py")]
    env = {**os.environ, **ENV}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_client_report(json.loads(result.stdout))


@contextmanager
def listening(command: list[str], env: dict[str, str] | None = None) -> Iterator[str]:
    """A server process that prints its `ws://` or `http://127.0.0.1:PORT/acp` and serves until its stdin ends: that URL."""
    with subprocess.Popen(
        command, env=env or {**os.environ, **ENV}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as server:
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


def test_the_example_agent_serves_a_typescript_client_over_websocket_from_serve_websocket(node):
    with listening([sys.executable, str(INTEROP / "ws_echo_agent.py")]) as url:
        command = [node, str(INTEROP / "ts_client.mjs"), "--url", url]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_client_report(json.loads(result.stdout))


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_listening_example_agent_serves_a_typescript_client_over_http_and_websocket(node, scheme):
    """`echo_agent.py --listen`: `http_app` under uvicorn, HTTP and WebSocket on one path; the
    SDK's `createHttpStream` and `createWebSocketStream`."""
    with listening_echo_agent() as (urls, _):
        command = [node, str(INTEROP / "ts_client.mjs"), "--url", urls[scheme]]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_typescript_client_report(json.loads(result.stdout))


def test_the_example_agent_routes_a_typescript_v1_client_to_its_v1_agent(node):
    command = [node, str(INTEROP / "ts_client_v1.mjs"), sys.executable, str(EXAMPLES / "echo_agent.py")]
    env = {**os.environ, **ENV}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["exitCode"] == 0
    check_v1_client_report(report, "echo-agent", ["hello", " from", " typescript"])


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


def test_the_example_client_drives_a_typescript_agent(node):
    command = [sys.executable, str(EXAMPLES / "client.py"), node, str(INTEROP / "ts_agent.mjs")]
    result = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXAMPLE_CLIENT_OUTPUT


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_example_client_drives_a_typescript_agent_over_http_and_websocket(node, scheme):
    """interop/ts_agent.mjs --listen: the SDK's AcpServer with its Node adapter and `ws`."""
    with listening([node, str(INTEROP / "ts_agent.mjs"), "--listen"]) as url:
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
async def typescript_agent(node: str) -> AsyncIterator[tuple[Any, UserClient, str]]:
    client = UserClient()
    async with acp.spawn_agent_process(client, node, str(INTEROP / "ts_agent.mjs")) as (conn, process):
        assert (await conn.initialize(INIT)).info.name == "ts-echo-agent"
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        yield conn, client, session.session_id
    assert process.returncode == 0


async def test_a_python_client_cancels_a_typescript_agents_requests_and_turns(node):
    async with typescript_agent(node) as (conn, client, session_id):
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
        chunks = [update["content"]["text"] for update in updates if update["sessionUpdate"] == "agent_message_chunk"]
        assert chunks == ["one", " more", " time"]


async def test_a_typescript_agent_answers_errors_a_python_client_reads(node):
    async with typescript_agent(node) as (conn, _, _session_id):
        with pytest.raises(acp.RequestError) as caught:
            await conn.session_prompt(prompt("nope", "hello"))
        assert (caught.value.code, caught.value.data) == (-32002, acp.SessionNotFoundErrorData(session_id="nope"))
        with pytest.raises(acp.RequestError) as caught:
            await conn.session_list(acp.ListSessionsRequest())
        assert caught.value.code == -32601
        with pytest.raises(acp.RequestError) as caught:
            await conn.ext_method("_py/unknown", {})
        assert caught.value.code == -32601


def test_the_example_agent_routes_a_python_sdk_v1_client_to_its_v1_agent(python_sdk):
    command = [sys.executable, str(INTEROP / "py_client_v1.py"), sys.executable, str(EXAMPLES / "echo_agent.py")]
    result = subprocess.run(command, cwd=ROOT, env=python_sdk, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_v1_client_report(json.loads(result.stdout), "echo-agent", ["hello", " from", " python"])


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_listening_example_agent_routes_a_python_sdk_v1_client_over_http_and_websocket(python_sdk, scheme):
    """The Python SDK 0.12.1's `acp.http` and `acp.ws` clients against `echo_agent.py --listen`;
    its HTTP client answers the session's permission request without `Acp-Session-Id`."""
    with listening_echo_agent() as (urls, _):
        command = [sys.executable, str(INTEROP / "py_client_v1.py"), "--url", urls[scheme]]
        result = subprocess.run(command, cwd=ROOT, env=python_sdk, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    check_v1_client_report(json.loads(result.stdout), "echo-agent", ["hello", " from", " python"])


def check_v1_client_report(report: dict[str, Any], agent: str, words: list[str]) -> None:
    """What a v1 client (interop/py_client_v1.py, interop/ts_client_v1.mjs) saw of a v1 echo agent."""
    assert report["init"]["protocolVersion"] == 1
    assert report["init"]["agentInfo"]["name"] == agent
    assert report["firstStop"] == "end_turn"
    opened, *chunks, completed = report["firstUpdates"]
    assert (opened["sessionUpdate"], opened["title"]) == ("tool_call", "Echo")
    assert [chunk["sessionUpdate"] for chunk in chunks] == ["agent_message_chunk"] * len(words)
    assert [chunk["content"]["text"] for chunk in chunks] == words
    assert (completed["toolCallId"], completed["status"]) == (opened["toolCallId"], "completed")
    assert report["asked"] == [["allow", "reject"], ["allow", "reject"]]
    assert report["secondStop"] == "cancelled"  # session/cancel during the permission request


class V1UserClient(acp_v1.Client):
    """acp_v1's client: records every update; hands each permission request to the test."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.questions: asyncio.Queue[tuple[Any, asyncio.Future[Any]]] = asyncio.Queue()

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update.to_dict())

    async def session_request_permission(self, params: Any) -> Any:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.questions.put_nowait((params, answer))
        try:
            return acp_v1.RequestPermissionResponse(outcome=await answer)
        except asyncio.CancelledError:
            return acp_v1.RequestPermissionResponse(outcome=acp_v1.RequestPermissionOutcomeCancelled())


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_acp_v1s_client_drives_the_python_sdks_own_server_over_http_and_websocket(python_sdk, scheme):
    """interop/py_agent_v1.py: the Python SDK's ASGI `AcpServer` (`acp.http`, WebSocket through
    `acp.ws`) under uvicorn; `acp_v1.connect_http` and `acp_v1.connect_websocket`."""

    def text(words: str) -> list[Any]:
        return [acp_v1.ContentBlockText(text=words)]

    async def test(url: str) -> None:
        client = V1UserClient()
        connect = acp_v1.connect_http if scheme == "http" else acp_v1.connect_websocket
        async with connect(client, url) as conn:
            init = await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
            assert (init.protocol_version, init.agent_info.name) == (1, "py-sdk-echo-agent")
            session = await conn.session_new(acp_v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
            sid = session.session_id
            first = asyncio.create_task(
                conn.session_prompt(acp_v1.PromptRequest(session_id=sid, prompt=text("hi v1 peer")))
            )
            question, answer = await client.questions.get()
            assert [option.option_id for option in question.options] == ["allow", "reject"]
            answer.set_result(acp_v1.RequestPermissionOutcomeSelected(option_id="allow"))
            assert (await first).stop_reason == "end_turn"
            opened, *chunks, completed = client.updates
            assert (opened["sessionUpdate"], opened["title"]) == ("tool_call", "Echo")
            assert [chunk["content"]["text"] for chunk in chunks] == ["hi", " v1", " peer"]
            assert (completed["toolCallId"], completed["status"]) == (opened["toolCallId"], "completed")

            second = asyncio.create_task(
                conn.session_prompt(acp_v1.PromptRequest(session_id=sid, prompt=text("again")))
            )
            _, answer = await client.questions.get()
            await conn.session_cancel(acp_v1.CancelNotification(session_id=sid))
            assert (await second).stop_reason == "cancelled"
            if not answer.done():
                answer.set_result(acp_v1.RequestPermissionOutcomeCancelled())

    with listening([sys.executable, str(INTEROP / "py_agent_v1.py")], env=python_sdk) as url:
        await test(url.replace("http", scheme, 1))


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_example_client_negotiates_down_to_v1_with_the_python_sdks_own_server(python_sdk, scheme):
    """examples/client.py asks for v2 (`connect_negotiated` over `open_http` / `open_websocket`);
    the Python SDK's agent speaks only v1 and answers 1, so the example's v1 client runs the turns."""
    with listening([sys.executable, str(INTEROP / "py_agent_v1.py")], env=python_sdk) as url:
        command = [sys.executable, str(EXAMPLES / "client.py"), "--url", url.replace("http", scheme, 1)]
        result = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "connected to py-sdk-echo-agent over v1",
        "permission asked: Echo -> Echo",
        "tool call 'Echo': completed",
        "agent message: hello world, echo me",
        "turn ended: end_turn",
        "permission asked: Echo -> cancel the turn",
        "tool call 'Echo': pending",  # what the turn changed: this agent leaves its call pending
        "turn ended: cancelled",
    ]


def loads_deep(raw: bytes) -> Any:
    """json.loads of a line the TypeScript SDK wrote, which may echo a value nested ~1000 deep."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))
    try:
        return json.loads(raw)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.async_timeout(120)
async def test_the_typescript_sdk_answers_each_hostile_line_as_tests_hostile_lines_says(node):
    """tests/support/hostile_lines.py's answers, checked against the TypeScript agent live: the same
    `(id, code)` on every line, except the differences the table lists (and explains)."""
    from tests.support.hostile_lines import LINES, TS_EXITS

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

    process = await asyncio.create_subprocess_exec(
        node, str(INTEROP / "ts_agent.mjs"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=1 << 26
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
        except TimeoutError:
            process.kill()
            await process.wait()


# --- agents as people run them: the Python SDK over stdio, behind wrappers ----------------------


class SlowV1Client(acp_v1.Client):
    """A v1 client that serves file reads and takes its time over each update."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def fs_read_text_file(self, params: Any) -> Any:
        return acp_v1.ReadTextFileResponse(content="")

    async def session_update(self, params: Any) -> None:
        await asyncio.sleep(0.01)
        self.texts.append(params.update.content.text)


V2_INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="negotiator", version="1"))


def v1_prompt(text: str) -> Any:
    return acp_v1.PromptRequest(session_id="py-sdk-session", prompt=[acp_v1.ContentBlockText(text=text)])


async def test_negotiation_with_a_python_sdk_agent_that_echoes_the_requested_version(python_sdk):
    """interop/py_agent_stdio.py answers the v2 initialize `protocolVersion: 2` with a v1 body:
    negotiation gives the v1 connection, the agent saw the v1 client's capabilities and the
    client's name, a turn's updates are handled when its prompt returns, and cancelling a
    prompt's task ends the turn through `session/cancel`."""
    client = SlowV1Client()
    agent = [sys.executable, str(INTEROP / "py_agent_stdio.py")]
    async with acp.open_agent_process(*agent, env=python_sdk) as (transport, process):
        conn, answer = await acp.connect_negotiated(acp.Client(), transport, V2_INIT, client)
        async with conn:
            assert isinstance(conn, acp_v1.ClientSideConnection)
            assert answer.protocol_version == 2  # as the agent answered: its body is v1's
            assert answer.agent_info.name == "fs:read=True,write=False;terminal=False;client=negotiator"
            await conn.session_new(acp_v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
            response = await conn.session_prompt(v1_prompt("one two three"))
            assert response.stop_reason == "end_turn"
            assert "".join(client.texts) == "one two three"
            waiting = asyncio.create_task(conn.session_prompt(v1_prompt("wait")))
            await asyncio.sleep(0.3)
            waiting.cancel()
            await asyncio.sleep(0.3)  # the agent ends the turn on session/cancel
            response = await conn.session_prompt(v1_prompt("after"))
            assert response.stop_reason == "end_turn"
    assert process.returncode == 0


NODE_SHIM = "require('child_process').spawnSync(process.argv[1], process.argv.slice(2), {stdio: 'inherit'})"


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_an_agent_behind_sh_and_a_node_shim_that_ignores_stdin_eof_does_not_survive(python_sdk, node):
    """`sh -c` running a node shim (as npm's bin shims: spawnSync, no signal forwarded) running
    the Python SDK agent, which ignores the end of its stdin and SIGTERM: leaving
    `spawn_agent_process` takes at most its timeout and stops every one of them."""
    pids: list[str] = []
    wrapped = ["sh", "-c", f'{node} -e "$0" "$@"', NODE_SHIM, sys.executable, str(INTEROP / "py_agent_stdio.py")]
    loop = asyncio.get_running_loop()
    async with acp_v1.spawn_agent_process(
        SlowV1Client(), *wrapped, "--deaf", env=python_sdk, timeout=2, stderr=pids.append
    ) as (conn, _process):
        answer = await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        assert answer.agent_info.version == "0.12.1"
        leaving = loop.time()
    assert loop.time() - leaving < 3
    await asyncio.sleep(0.2)  # the agent, reparented, is reaped
    assert pids and not running(int(pids[0]))
