"""The examples as real processes over stdio: echo_agent.py (a turn with streamed updates and a
permission request, a rejected one, cancellation by `session/cancel` and by `$/cancel_request`,
held prompts), client.py and live_client.py (their output), helpers_agent.py (rejection,
"allow always", cancellation); and `echo_agent.py --listen` over HTTP and WebSocket, driven by
`client.py --url`, stopped by SIGINT. (tests/package/test_package.py type-checks them.)"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import pytest

from tests.support.helpers import ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
EXAMPLES = ROOT / "examples"
ENV = {"PYTHONPATH": str(ROOT / "generated")}
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="test-client", version="1"))


class UserClient(acp.Client):
    """Records every update; hands each permission request to the test, which answers it."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.idle: asyncio.Queue[str] = asyncio.Queue()  # stop reasons
        self.questions: asyncio.Queue[tuple[Any, asyncio.Future[Any]]] = asyncio.Queue()
        self.withdrawn: asyncio.Queue[Any] = asyncio.Queue()  # requests the agent cancelled

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update)
        if isinstance(params.update, acp.SessionUpdateStateUpdate) and isinstance(
            params.update.state, acp.StateUpdateIdle
        ):
            self.idle.put_nowait(params.update.state.stop_reason.stop_reason)

    async def session_request_permission(self, params: Any) -> Any:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.questions.put_nowait((params, answer))
        try:
            return acp.RequestPermissionResponse(outcome=await answer)
        except asyncio.CancelledError:
            self.withdrawn.put_nowait(params)
            return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeCancelled())

    def take(self) -> list[dict[str, Any]]:
        """The updates so far as JSON, forgetting them."""
        updates, self.updates = [update.to_dict() for update in self.updates], []
        return updates

    def take_inserted(self) -> list[str]:
        """The text of each prompt the agent inserted (its `user_message` updates), forgetting the updates."""
        return [update["content"][0]["text"] for update in self.take() if update["sessionUpdate"] == "user_message"]


@asynccontextmanager
async def echo_agent() -> AsyncIterator[tuple[Any, UserClient, str]]:
    """A connection to examples/echo_agent.py, initialized, with a new session."""
    client = UserClient()
    agent = [sys.executable, str(EXAMPLES / "echo_agent.py")]
    async with acp.spawn_agent_process(client, *agent, env=ENV) as (conn, process):
        assert (await conn.initialize(INIT)).info.name == "echo-agent"
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        yield conn, client, session.session_id
    assert process.returncode == 0


pytestmark = pytest.mark.async_timeout(60)


def prompt(session_id: str, text: str) -> Any:
    return acp.PromptRequest(session_id=session_id, prompt=[acp.ContentBlockText(text=text)])


ALLOW = acp.RequestPermissionOutcomeSelected(option_id="allow")


async def test_a_turn_streams_the_echo_word_by_word_once_the_client_allows_it():
    async with echo_agent() as (conn, client, session_id):
        sent = asyncio.create_task(conn.session_prompt(prompt(session_id, "hello big  world")))
        question, answer = await client.questions.get()
        inserted = await sent  # answered on insertion, before the turn ends
        assert question.title == "Echo?"
        assert [(o.option_id, o.kind) for o in question.options] == [
            ("allow", "allow_once"),
            ("reject", "reject_once"),
        ]
        answer.set_result(ALLOW)
        assert await client.idle.get() == "end_turn"
        updates = client.take()
    user, running, opened, in_progress, *chunks, completed, idle = updates
    assert user == {
        "sessionUpdate": "user_message",
        "messageId": inserted.message_id,
        "content": [{"type": "text", "text": "hello big  world"}],
    }
    assert running == {"sessionUpdate": "state_update", "state": "running"}
    tool_call_id = opened["toolCallId"]
    assert opened == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": tool_call_id,
        "name": "echo",
        "title": "Echo",
        "rawInput": {"text": "hello big  world"},
    }
    assert question.subject.tool_call.tool_call_id == tool_call_id
    assert in_progress == {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "status": "in_progress"}
    assert [chunk["content"]["text"] for chunk in chunks] == ["hello", " big", "  world"]
    assert len({chunk["messageId"] for chunk in chunks}) == 1
    assert completed == {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "status": "completed"}
    assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


@pytest.mark.parametrize(
    ("outcome", "status", "stop_reason"),
    [
        (acp.RequestPermissionOutcomeSelected(option_id="reject"), "failed", "end_turn"),
        (acp.RequestPermissionOutcomeCancelled(), "cancelled", "cancelled"),  # the user dismissed it
    ],
)
async def test_a_permission_not_given_echoes_nothing(outcome, status, stop_reason):
    async with echo_agent() as (conn, client, session_id):
        sent = asyncio.create_task(conn.session_prompt(prompt(session_id, "hello")))
        _, answer = await client.questions.get()
        answer.set_result(outcome)
        await sent
        assert await client.idle.get() == stop_reason
        updates = client.take()
    assert [update["sessionUpdate"] for update in updates] == [
        "user_message",
        "state_update",
        "tool_call_update",
        "tool_call_update",
        "state_update",
    ]
    assert updates[-2]["status"] == status


async def test_session_cancel_withdraws_the_permission_request_and_ends_the_turn_cancelled():
    async with echo_agent() as (conn, client, session_id):
        await conn.session_prompt(prompt(session_id, "hello"))
        question, _ = await client.questions.get()
        await conn.session_cancel(acp.CancelSessionNotification(session_id=session_id))
        sent = asyncio.create_task(conn.session_prompt(prompt(session_id, "again")))  # not cancelled
        assert await client.withdrawn.get() is question  # the agent sent $/cancel_request
        assert await client.idle.get() == "cancelled"
        _, answer = await client.questions.get()
        *_, cancelled, idle, _again, _running, _opened = client.take()
        assert cancelled["status"] == "cancelled"
        assert idle == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
        answer.set_result(ALLOW)
        await sent
        assert await client.idle.get() == "end_turn"


async def test_a_prompt_sent_during_a_turn_is_held_and_session_cancel_answers_it_minus_32800():
    async with echo_agent() as (conn, client, session_id):
        await conn.session_prompt(prompt(session_id, "first"))
        await client.questions.get()
        held = asyncio.create_task(conn.session_prompt(prompt(session_id, "second")))
        await asyncio.sleep(0.2)
        assert not held.done()
        await conn.session_cancel(acp.CancelSessionNotification(session_id=session_id))
        with pytest.raises(acp.RequestError) as caught:
            await held
        assert caught.value.code == -32800
        assert await client.idle.get() == "cancelled"
        assert client.take_inserted() == ["first"]


async def test_a_held_prompt_withdrawn_with_cancel_request_is_never_inserted():
    async with echo_agent() as (conn, client, session_id):
        await conn.session_prompt(prompt(session_id, "first"))
        _, answer = await client.questions.get()
        held = asyncio.create_task(conn.session_prompt(prompt(session_id, "withdrawn")))
        await asyncio.sleep(0.2)
        held.cancel()  # sends $/cancel_request; the agent answers -32800, dropped quietly
        with pytest.raises(asyncio.CancelledError):
            await held
        answer.set_result(ALLOW)
        assert await client.idle.get() == "end_turn"
        sent = asyncio.create_task(conn.session_prompt(prompt(session_id, "third")))
        _, answer = await client.questions.get()
        answer.set_result(ALLOW)
        await sent
        assert await client.idle.get() == "end_turn"
        assert client.take_inserted() == ["first", "third"]


async def test_a_prompt_to_an_unknown_session_is_answered_minus_32002():
    async with echo_agent() as (conn, _, _session_id):
        with pytest.raises(acp.RequestError) as caught:
            await conn.session_prompt(prompt("nope", "hello"))
        assert (caught.value.code, caught.value.data) == (-32002, acp.SessionNotFoundErrorData(session_id="nope"))


def test_the_mcp_agent_adds_with_the_calc_tool_its_client_serves_over_acp():
    agent = [sys.executable, str(EXAMPLES / "mcp_agent.py")]
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "mcp_client.py"), *agent], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["connected to mcp-agent", "agent: 2 + 3 = 5.0"]


class HeldCalc:
    """An MCP server `calc` whose `add` (when `held`) waits until it is cancelled, and the client
    that serves it over ACP (`acp_v2.mcp.McpProvider`), with each turn's end, each agent message
    and every update as JSON."""

    def __init__(self, held: bool = True) -> None:
        from mcp.server.mcpserver import MCPServer

        self.server = MCPServer("calc")
        self.called: asyncio.Queue[None] = asyncio.Queue()
        self.cancelled: asyncio.Queue[None] = asyncio.Queue()
        self.idle: asyncio.Queue[str] = asyncio.Queue()
        self.said: list[str] = []
        self.updates: list[Any] = []

        @self.server.tool()
        async def add(a: float, b: float) -> float:
            self.called.put_nowait(None)
            try:
                if held:
                    await asyncio.Event().wait()
            finally:
                self.cancelled.put_nowait(None)
            return a + b

    def client(self, provider: Any) -> Any:
        held = self

        class Client(acp.Client):
            def on_connect(self, conn: Any) -> None:
                self.conn = conn

            async def mcp_message(self, params: Any) -> Any:
                return await provider.handle(params, self.conn)

            async def session_update(self, params: Any) -> None:
                held.updates.append(params.update.to_dict())
                match params.update:
                    case acp.SessionUpdateAgentMessageChunk(content=acp.ContentBlockText(text=text)):
                        held.said.append(text)
                    case acp.SessionUpdateStateUpdate(state=acp.StateUpdateIdle(stop_reason=reason)):
                        held.idle.put_nowait(reason.stop_reason)

        return Client()


async def test_the_mcp_agent_withdraws_its_mcp_call_when_the_turn_is_cancelled_or_the_session_closed():
    """session/cancel and session/close cancel the turn and the `mcp/message` request it waits
    for (the tool is cancelled); the turn ends `cancelled`; a prompt to the closed session is
    answered -32002, and the connection goes on."""
    acp_mcp = import_package(ROOT / "generated", "acp_v2.mcp")
    held = HeldCalc()
    async with acp_mcp.McpProvider() as provider:
        calc = await provider.serve(held.server, name="calc")
        agent = [sys.executable, str(EXAMPLES / "mcp_agent.py")]
        async with acp.spawn_agent_process(held.client(provider), *agent, env=ENV) as (conn, process):
            await conn.initialize(INIT)
            session_id = (await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT), mcp_servers=[calc]))).session_id
            await conn.session_prompt(prompt(session_id, "add 2 3"))
            await held.called.get()
            await conn.session_cancel(acp.CancelSessionNotification(session_id=session_id))
            await held.cancelled.get()
            assert await held.idle.get() == "cancelled"
            await conn.session_prompt(prompt(session_id, "add 2 3"))
            await held.called.get()
            await conn.session_close(acp.CloseSessionRequest(session_id=session_id))
            await held.cancelled.get()
            assert await held.idle.get() == "cancelled"
            with pytest.raises(acp.RequestError) as closed:
                await conn.session_prompt(prompt(session_id, "add 2 3"))
            assert closed.value.code == -32002
            other = (await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))).session_id
            await conn.session_prompt(prompt(other, "add 2 3"))
            assert await held.idle.get() == "end_turn"
            assert held.said[-1] == "no MCP server named calc was given"
    assert process.returncode == 0


async def test_the_mcp_agent_resumes_a_closed_session_replays_it_and_calls_the_servers_redeclared():
    acp_mcp = import_package(ROOT / "generated", "acp_v2.mcp")
    calc = HeldCalc(held=False)
    async with acp_mcp.McpProvider() as provider:
        agent = [sys.executable, str(EXAMPLES / "mcp_agent.py")]
        async with acp.spawn_agent_process(calc.client(provider), *agent, env=ENV) as (conn, process):
            await conn.initialize(INIT)
            first = await provider.serve(calc.server, name="calc")
            new = acp.NewSessionRequest(cwd=str(ROOT), mcp_servers=[first])
            session_id = (await conn.session_new(new)).session_id
            await conn.session_prompt(prompt(session_id, "add 2 3"))
            assert await calc.idle.get() == "end_turn"
            turn, calc.updates = calc.updates, []
            await conn.session_close(acp.CloseSessionRequest(session_id=session_id))
            again = await provider.serve(calc.server, name="calc")  # a new serverId
            resume = acp.ResumeSessionRequest(
                session_id=session_id, cwd=str(ROOT), mcp_servers=[again], replay_from=acp.ReplayFromStartVariant()
            )
            await conn.session_resume(resume)
            while len(calc.updates) < len(turn):
                await asyncio.sleep(0.01)
            assert calc.updates == turn
            assert await calc.idle.get() == "end_turn"  # the replayed turn's end
            await conn.session_prompt(prompt(session_id, "add 1 1"))
            assert await calc.idle.get() == "end_turn"
            assert calc.said[-1] == "1 + 1 = 2.0"
            with pytest.raises(acp.RequestError) as unknown:
                await conn.session_resume(acp.ResumeSessionRequest(session_id="never-made", cwd=str(ROOT)))
            assert unknown.value.code == -32002
    assert process.returncode == 0
    assert [update["sessionUpdate"] for update in turn] == [
        "user_message",
        "state_update",
        "agent_message_chunk",
        "state_update",
    ]


def test_the_example_client_folds_a_turn_answers_permission_and_cancels_the_second_turn():
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "client.py")], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "connected to echo-agent 1.0",
        "permission asked: Echo? -> Echo",
        "user message: hello world, echo me",  # what the turn changed, folded by SessionState:
        "tool call 'Echo': completed",  # four tool_call_updates and the permission subject
        "agent message: hello world, echo me",  # five chunks of one message
        "turn ended: end_turn",
        "permission asked: Echo? -> cancel the turn",
        "user message: and this too",
        "tool call 'Echo': cancelled",
        "turn ended: cancelled",
    ]


def test_the_live_client_prints_the_helpers_agents_turn_as_the_session_state_folds_it():
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "live_client.py")], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "+ user message: 'count these five words please'",
        "+ state: running",
        "+ plan: Read the prompt (in_progress), Count the words (pending), Answer (pending)",
        "+ agent thought: 'The user wants their words counted.'",
        "+ tool call 'Count words': pending",
        "~ plan: Read the prompt (completed), Count the words (in_progress), Answer (pending)",
        "? permission: Count words [Count, Always count, Don't]",
        "~ tool call 'Count words': pending",  # the permission request's subject, applied
        "~ tool call 'Count words': in_progress",
        "~ tool call 'Count words': completed",
        "~ plan: Read the prompt (completed), Count the words (completed), Answer (in_progress)",
        "+ agent message: 'Your prompt has '",
        "~ agent message: 'Your prompt has 5 '",
        "~ agent message: 'Your prompt has 5 words.'",
        "~ plan: Read the prompt (completed), Count the words (completed), Answer (completed)",
        "+ session title: '5 words'",
        "~ state: idle (end_turn)",
    ]


@asynccontextmanager
async def helpers_agent() -> AsyncIterator[tuple[Any, UserClient, str]]:
    """A connection to examples/helpers_agent.py, initialized, with a new session."""
    client = UserClient()
    agent = [sys.executable, str(EXAMPLES / "helpers_agent.py")]
    async with acp.spawn_agent_process(client, *agent, env=ENV) as (conn, process):
        assert (await conn.initialize(INIT)).info.name == "word-count-agent"
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        yield conn, client, session.session_id
    assert process.returncode == 0


async def test_the_helpers_agent_fails_its_tool_call_when_the_user_rejects_it():
    async with helpers_agent() as (conn, client, session_id):
        await conn.session_prompt(prompt(session_id, "one two"))
        question, answer = await client.questions.get()
        assert [(o.option_id, o.kind) for o in question.options] == [
            ("allow", "allow_once"),
            ("allow_always", "allow_always"),
            ("reject", "reject_once"),
        ]
        assert question.subject.tool_call.tool_call_id == client.updates[4].tool_call_id
        answer.set_result(acp.RequestPermissionOutcomeSelected(option_id="reject"))
        assert await client.idle.get() == "end_turn"
        *_, failed, said, _idle = client.take()
    assert failed == {"sessionUpdate": "tool_call_update", "toolCallId": failed["toolCallId"], "status": "failed"}
    assert said["content"] == {"type": "text", "text": "I did not count them."}


async def test_the_helpers_agent_remembers_allow_always_for_the_session():
    async with helpers_agent() as (conn, client, session_id):
        await conn.session_prompt(prompt(session_id, "one two"))
        _, answer = await client.questions.get()
        answer.set_result(acp.RequestPermissionOutcomeSelected(option_id="allow_always"))
        assert await client.idle.get() == "end_turn"
        await conn.session_prompt(prompt(session_id, "one two three"))
        assert await client.idle.get() == "end_turn"  # not asked again
        assert client.questions.empty()
        updates = client.take()
    results = [u["rawOutput"] for u in updates if u["sessionUpdate"] == "tool_call_update" and "rawOutput" in u]
    assert results == [2, 3]
    titles = [u["title"] for u in updates if u["sessionUpdate"] == "session_info_update"]
    assert titles == ["2 words", "3 words"]


async def test_the_helpers_agent_replays_a_resumed_session_from_its_start():
    async with helpers_agent() as (conn, client, session_id):
        sent = asyncio.create_task(conn.session_prompt(prompt(session_id, "one two three")))
        _, answer = await client.questions.get()
        answer.set_result(ALLOW)
        await sent
        assert await client.idle.get() == "end_turn"
        turn = client.take()
        resume = acp.ResumeSessionRequest(
            session_id=session_id, cwd=str(ROOT), replay_from=acp.ReplayFromStartVariant()
        )
        await conn.session_resume(resume)
        while len(client.updates) < len(turn):
            await asyncio.sleep(0.01)
        assert client.take() == turn
        with pytest.raises(acp.RequestError) as unknown:
            await conn.session_resume(acp.ResumeSessionRequest(session_id="never-made", cwd=str(ROOT)))
        assert unknown.value.code == -32002
    kinds = [update["sessionUpdate"] for update in turn]  # the whole turn, its tool call and answer too
    assert kinds[:2] == ["user_message", "state_update"] and {"tool_call_update", "agent_message_chunk"} <= set(kinds)


async def test_session_cancel_withdraws_the_helpers_agents_permission_request_and_ends_the_turn_cancelled():
    async with helpers_agent() as (conn, client, session_id):
        await conn.session_prompt(prompt(session_id, "one"))
        question, _ = await client.questions.get()
        await conn.session_cancel(acp.CancelSessionNotification(session_id=session_id))
        assert await client.withdrawn.get() is question
        assert await client.idle.get() == "cancelled"


EXAMPLE_CLIENT_OUTPUT = [
    "connected to echo-agent 1.0",
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


@contextmanager
def listening_echo_agent(
    script: str = "echo_agent.py", *options: str
) -> Iterator[tuple[dict[str, str], subprocess.Popen[str]]]:
    """`echo_agent.py --listen 127.0.0.1:0` (or `script` with `options`) running: its URLs by
    scheme (`http`, `ws`) and its process. On exit it is sent SIGINT (unless it has ended) and
    must have stopped cleanly (exit status 0) within 10 s."""
    command = [sys.executable, str(EXAMPLES / script), "--listen", "127.0.0.1:0", *options]
    with subprocess.Popen(command, env={**os.environ, **ENV}, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdout is not None
        try:
            urls = {line.partition(":")[0]: line for line in (server.stdout.readline().strip() for _ in "hw")}
            assert urls.keys() == {"http", "ws"}, urls
            assert urls["http"].startswith("http://127.0.0.1:") and urls["http"].endswith("/acp"), urls
            assert urls["ws"] == urls["http"].replace("http", "ws", 1), urls
            yield urls, server
        finally:
            if server.poll() is None:
                server.send_signal(signal.SIGINT)
            try:
                status = server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                raise
    assert status == 0


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_the_example_client_drives_the_listening_example_agent(scheme):
    with listening_echo_agent() as (urls, _):
        command = [sys.executable, str(EXAMPLES / "client.py"), "--url", urls[scheme]]
        result = subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXAMPLE_CLIENT_OUTPUT


async def test_the_listening_example_agent_stops_on_sigint_while_clients_are_connected():
    """An open event stream (HTTP) and an open WebSocket do not hold the shutdown: the agent ends
    both connections, the clients see their connections end, and the process exits 0."""
    with listening_echo_agent() as (urls, server):
        async with (
            acp.connect_http(UserClient(), urls["http"]) as over_http,
            acp.connect_websocket(UserClient(), urls["ws"]) as over_ws,
        ):
            for conn in (over_http, over_ws):
                assert (await conn.initialize(INIT)).info.name == "echo-agent"
                await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
            server.send_signal(signal.SIGINT)
            await asyncio.wait_for(over_http.wait_closed(), 10)
            await asyncio.wait_for(over_ws.wait_closed(), 10)


def resident_mib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads resident memory from /proc")
def test_the_listening_example_agent_holds_its_memory_under_a_ping_flood():
    """A client that floods pings and reads no pongs, for 3 s: the server's resident memory stays
    within 40 MiB of where it was (uvicorn's `ws="websockets"`, which `--listen` chooses, stops
    reading a client that does not take its pongs)."""
    import base64
    import socket
    import time

    with listening_echo_agent() as (urls, server):
        host, port = urls["http"].removeprefix("http://").removesuffix("/acp").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as flood:
            flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            key = base64.b64encode(os.urandom(16)).decode()
            upgrade = f"GET /acp HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            flood.sendall(f"{upgrade}Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
            assert flood.recv(1024).startswith(b"HTTP/1.1 101")
            before = peak = resident_mib(server.pid)
            ping = bytes([0x89, 0x80 | 125]) + b"\0\0\0\0" + os.urandom(125)  # masked, as from a client
            flood.setblocking(False)
            end = time.monotonic() + 3
            while time.monotonic() < end:
                with contextlib.suppress(BlockingIOError):
                    flood.send(ping * 500)
                time.sleep(0.005)
                peak = max(peak, resident_mib(server.pid))
        time.sleep(0.5)
        after = resident_mib(server.pid)
    assert peak - before < 40 and after - before < 40, (before, peak, after)


@pytest.mark.async_timeout(60)
async def test_the_authorized_example_agent_takes_a_bearer_token_or_a_pages_cookie_and_binds_the_connection(tmp_path):
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("# NAME TOKEN\nalice token-of-alice\nbob token-of-bob\n")
    page = "https://editor.example"
    init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init.to_dict()}
    alice = {"Authorization": "Bearer token-of-alice"}
    options = ("--tokens", str(tokens), "--allow-origin", page)
    with listening_echo_agent("authorized_agent.py", *options) as (urls, _):
        async with acp.connect_http(UserClient(), urls["http"], headers=alice) as conn:
            assert (await conn.initialize(init)).info.name == "echo-agent (alice)"
        cookie = {"Cookie": "acp_token=token-of-bob"}
        async with acp.connect_websocket(UserClient(), urls["ws"], headers=cookie) as conn:
            assert (await conn.initialize(init)).info.name == "echo-agent (bob)"
        async with httpx.AsyncClient(timeout=10) as http:
            url = urls["http"]
            assert (await http.post(url, json=message)).status_code == 401
            assert (await http.post(url, json=message, headers={"Authorization": "Bearer x"})).status_code == 401
            from_page = await http.post(url, json=message, headers={**cookie, "Origin": page})
            assert from_page.status_code == 200 and from_page.json()["result"]["info"]["name"] == "echo-agent (bob)"
            foreign = await http.post(url, json=message, headers={**cookie, "Origin": "https://evil.example"})
            assert foreign.status_code == 403
            named = {"Acp-Connection-Id": from_page.headers["Acp-Connection-Id"]}
            assert (await http.delete(url, headers={**alice, **named})).status_code == 403  # bob's
            assert (await http.delete(url, headers={**cookie, **named})).status_code == 202


def test_the_authorized_example_agent_refuses_to_start_without_a_token(tmp_path):
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("# nobody yet\n")
    command = [sys.executable, str(EXAMPLES / "authorized_agent.py"), "--listen", "0.0.0.0:0", "--tokens", str(tokens)]
    result = subprocess.run(command, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "no token" in result.stderr, result.stderr


def test_the_listening_example_agent_refuses_a_public_address_without_authorization():
    command = [sys.executable, str(EXAMPLES / "echo_agent.py"), "--listen", "0.0.0.0:0"]
    result = subprocess.run(command, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "--allow-unauthenticated" in result.stderr, result.stderr


def test_the_listening_example_agent_refuses_several_workers_and_says_what_to_run_instead():
    command = [sys.executable, str(EXAMPLES / "echo_agent.py"), "--listen", "127.0.0.1:0", "--workers", "2"]
    result = subprocess.run(command, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    why = " ".join(result.stderr.split())
    assert "--workers 2: uvicorn's workers share one listening socket" in why, why
    assert "Run 2 processes instead" in why and "--instance NAME" in why and "examples/haproxy.cfg" in why, why


async def test_the_listening_example_agent_named_an_instance_prefixes_its_ids_and_sets_the_affinity_cookie():
    init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init.to_dict()}
    with listening_echo_agent("echo_agent.py", "--instance", "blue-1") as (urls, _):
        async with httpx.AsyncClient(timeout=10) as http:
            opened = await http.post(urls["http"], json=message)
            assert opened.status_code == 200, opened.text
            assert opened.headers["acp-connection-id"].startswith("blue-1.")
            assert opened.cookies["acp_instance"] == "blue-1"
            other = await http.delete(urls["http"], headers={"Acp-Connection-Id": "green-2." + "0" * 32})
            assert (other.status_code, other.text) == (
                404,
                "Unknown Acp-Connection-Id: issued by instance 'green-2', this is instance 'blue-1'",
            )
            closed = await http.delete(urls["http"], headers={"Acp-Connection-Id": opened.headers["acp-connection-id"]})
            assert closed.status_code == 202


async def read_message(stdout: asyncio.StreamReader) -> dict[str, Any]:
    line = await stdout.readline()
    assert line, "the agent closed its stdout"
    return dict(json.loads(line))


async def test_a_cancelled_v1_turn_withdraws_its_permission_request_before_answering_and_fails_its_tool_call():
    """As the wire shows it: `session/cancel` during the permission request is followed by the
    request's withdrawal (`$/cancel_request`), then the tool call's `failed` update (v1 has no
    `cancelled` status), then the `cancelled` answer to `session/prompt`."""
    agent = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / "echo_agent.py"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **ENV},
    )
    assert agent.stdin is not None and agent.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert agent.stdin is not None
        agent.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    try:
        send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        assert (await read_message(agent.stdout))["id"] == 1
        send({"id": 2, "method": "session/new", "params": {"cwd": str(ROOT), "mcpServers": []}})
        session_id = (await read_message(agent.stdout))["result"]["sessionId"]
        prompt = [{"type": "text", "text": "hello"}]
        send({"id": 3, "method": "session/prompt", "params": {"sessionId": session_id, "prompt": prompt}})
        while (message := await read_message(agent.stdout)).get("method") != "session/request_permission":
            pass
        send({"method": "session/cancel", "params": {"sessionId": session_id}})
        after = [await read_message(agent.stdout)]
        while after[-1].get("id") != 3:  # until the answer to the prompt
            after.append(await read_message(agent.stdout))
    finally:
        agent.stdin.close()
        await agent.wait()
    assert [m.get("method", "answer") for m in after] == ["$/cancel_request", "session/update", "answer"]
    withdrawal, failed, answer = after
    assert withdrawal == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": message["id"]}}
    assert failed["params"]["update"]["status"] == "failed"
    assert answer == {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}


async def test_the_v1_echo_agent_advertises_load_session_and_replays_the_session_before_answering():
    """A client that reloads a session (`session/load`) gets the conversation again, before the
    answer: the prompt as `user_message_chunk`s, then every update the agent sent in its turn."""
    agent = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / "echo_agent.py"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **ENV},
    )
    assert agent.stdin is not None and agent.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert agent.stdin is not None
        agent.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def until_answer(request_id: int) -> list[dict[str, Any]]:
        """The session updates the agent sends before answering `request_id` (permission allowed)."""
        assert agent.stdout is not None
        updates = []
        while (message := await read_message(agent.stdout)).get("id") != request_id:
            if message.get("method") == "session/request_permission":
                send({"id": message["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}})
            else:
                updates.append(message["params"]["update"])
        assert "error" not in message, message
        return updates

    try:
        send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        initialized = await read_message(agent.stdout)
        send({"id": 2, "method": "session/new", "params": {"cwd": str(ROOT), "mcpServers": []}})
        session_id = (await read_message(agent.stdout))["result"]["sessionId"]
        prompt = [{"type": "text", "text": "hello again"}]
        send({"id": 3, "method": "session/prompt", "params": {"sessionId": session_id, "prompt": prompt}})
        turn = await until_answer(3)
        load = {"sessionId": session_id, "cwd": str(ROOT), "mcpServers": []}
        send({"id": 4, "method": "session/load", "params": load})
        replayed = await until_answer(4)
        send({"id": 5, "method": "session/load", "params": {**load, "sessionId": "never-made"}})
        unknown = await read_message(agent.stdout)
    finally:
        agent.stdin.close()
        await agent.wait()
    assert initialized["result"]["agentCapabilities"]["loadSession"] is True
    assert [update["sessionUpdate"] for update in turn] == [
        "tool_call",
        "agent_message_chunk",
        "agent_message_chunk",
        "tool_call_update",
    ]
    assert replayed == [{"sessionUpdate": "user_message_chunk", "content": prompt[0]}, *turn]
    assert unknown["id"] == 5 and unknown["error"]["code"] == -32002


async def test_the_v1_echo_agent_with_a_sessions_folder_loads_a_session_an_earlier_process_made(tmp_path):
    """`--sessions DIR`: clients (acpx) start the agent anew for a later prompt and reload the
    session; the new process replays what the first one sent. Ids it never made name no file."""
    sessions = tmp_path / "sessions"

    async def one_process(*requests: tuple[str, dict[str, Any]]) -> list[tuple[list[Any], dict[str, Any]]]:
        """Each request's session updates and answer (permission allowed), in one agent process."""
        agent = await asyncio.create_subprocess_exec(
            *[sys.executable, str(EXAMPLES / "echo_agent.py"), "--sessions", str(sessions)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **ENV},
        )
        assert agent.stdin is not None and agent.stdout is not None
        exchanges = []
        try:
            for request_id, (method, params) in enumerate([("initialize", {"protocolVersion": 1}), *requests]):
                request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
                agent.stdin.write(json.dumps(request).encode() + b"\n")
                updates = []
                while (message := await read_message(agent.stdout)).get("id") != request_id or "method" in message:
                    if message.get("method") == "session/request_permission":
                        allow = {"outcome": {"outcome": "selected", "optionId": "allow"}}
                        answer = {"jsonrpc": "2.0", "id": message["id"], "result": allow}
                        agent.stdin.write(json.dumps(answer).encode() + b"\n")
                    else:
                        updates.append(message["params"]["update"])
                exchanges.append((updates, message))
        finally:
            agent.stdin.close()
            await agent.wait()
        return exchanges[1:]

    new = {"cwd": str(ROOT), "mcpServers": []}
    [(_, made)] = await one_process(("session/new", new))
    session_id = made["result"]["sessionId"]
    [(_, other)] = await one_process(("session/new", new))
    assert other["result"]["sessionId"] != session_id  # unique across processes
    hello = [{"type": "text", "text": "hello there"}]
    [_, (turn, _)] = await one_process(
        ("session/load", {**new, "sessionId": session_id}),
        ("session/prompt", {"sessionId": session_id, "prompt": hello}),
    )
    [(replayed, loaded), (_, traversal), (_, unknown)] = await one_process(
        ("session/load", {**new, "sessionId": session_id}),
        ("session/load", {**new, "sessionId": f"../sessions/{session_id}"}),
        ("session/load", {**new, "sessionId": "session-" + "0" * 32}),
    )
    assert loaded["result"] == {}
    assert replayed == [{"sessionUpdate": "user_message_chunk", "content": hello[0]}, *turn]
    assert [update["sessionUpdate"] for update in turn] == [
        "tool_call",
        *["agent_message_chunk"] * 2,
        "tool_call_update",
    ]
    assert traversal["error"]["code"] == unknown["error"]["code"] == -32002


async def test_the_echo_agent_replays_a_resumed_session_from_its_start():
    async with echo_agent() as (conn, client, session_id):
        sent = asyncio.create_task(conn.session_prompt(prompt(session_id, "hello")))
        _, answer = await client.questions.get()
        answer.set_result(ALLOW)
        await sent
        assert await client.idle.get() == "end_turn"
        turn = client.take()
        resume = acp.ResumeSessionRequest(
            session_id=session_id, cwd=str(ROOT), replay_from=acp.ReplayFromStartVariant()
        )
        await conn.session_resume(resume)
        while len(client.updates) < len(turn):
            await asyncio.sleep(0.01)
        assert client.take() == turn
        with pytest.raises(acp.RequestError) as unknown:
            await conn.session_resume(acp.ResumeSessionRequest(session_id="never-made", cwd=str(ROOT)))
        assert unknown.value.code == -32002
    assert [update["sessionUpdate"] for update in turn][:2] == ["user_message", "state_update"]


def test_the_listening_example_agent_closes_idle_kept_alive_sockets_but_not_half_sent_requests():
    """What `--listen`'s uvicorn settings bound and what they do not: a socket idle after its
    response is closed after `timeout_keep_alive` (5 s); one whose request headers never end is
    not (uvicorn has no header timeout: the transports guide says what to put in front)."""
    import socket
    import time

    with listening_echo_agent() as (urls, _):
        host, port = urls["http"].removeprefix("http://").removesuffix("/acp").rsplit(":", 1)
        with (
            socket.create_connection((host, int(port)), timeout=10) as kept,
            socket.create_connection((host, int(port)), timeout=10) as half,
        ):
            half.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
            kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = kept.recv(4096)
            while not answer.endswith(b"ok"):  # the response's head and its body may come apart
                answer += kept.recv(4096)
            started = time.monotonic()
            assert answer.startswith(b"HTTP/1.1 200")
            assert kept.recv(4096) == b""  # closed by the server
            assert 4 < time.monotonic() - started < 8
            half.settimeout(1.5)
            with pytest.raises(TimeoutError):
                half.recv(4096)  # still open, 6.5 s after its first bytes


QUIET_AGENT = [sys.executable, str(ROOT / "tests" / "support" / "quiet_agent.py")]


def example_client(*agent: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(EXAMPLES / "client.py"), *agent]
    return subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_the_example_client_ends_turns_that_ask_no_permission_showing_the_tool_calls_latest_title(version):
    """tests/support/quiet_agent.py asks nothing and retitles its tool call "Run" to "Run ls"; over v1
    (`--v1`: the agent speaks v1 alone) the client folds the turn into an `acp_v1.SessionState`."""
    result = example_client(*QUIET_AGENT, *(["--v1"] if version == "v1" else []))
    assert result.returncode == 0, result.stderr
    turn = ["tool call 'Run ls': completed", "agent message: done", "turn ended: end_turn"]
    if version == "v2":
        assert result.stdout.splitlines() == [
            "connected to quiet-agent 1.0",
            *["user message: hello world, echo me", *turn],
            *["user message: and this too", *turn],
        ]
    else:
        assert result.stdout.splitlines() == ["connected to quiet-agent over v1", *turn, *turn]


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_the_example_client_prints_the_agents_error_with_its_data_and_exits_1(version):
    result = example_client(*QUIET_AGENT, "--fail", *(["--v1"] if version == "v1" else []))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1] == "the agent answered: Internal error (-32603): 'OPENAI_API_KEY is not set'"


@pytest.mark.parametrize("name", ["acp_v2", "acp_v1"])
def test_an_error_codes_member_shows_as_its_number(name):
    package = import_package(ROOT / "generated", name)
    error = package.RequestError.internal_error(data="OPENAI_API_KEY is not set")
    assert str(error) == "Internal error (-32603): 'OPENAI_API_KEY is not set'"
    assert error.args == ("Internal error (-32603)",)
