"""The typed connections over WebSocket (`serve_websocket`, `connect_websocket`) and Streamable
HTTP (`http_app` under uvicorn, `connect_http`) on 127.0.0.1: v2 and v1 clients on one server,
each connection with its own agents, and the extras' absence.
(tests/runtime/test_websocket.py tests the transport itself; tests/test_interop.py runs the
TypeScript SDK's WebSocket client against the example agent.)"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.helpers import ROOT, import_package, uvicorn_serving

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")
TIMEOUT = 20


pytestmark = pytest.mark.async_timeout(TIMEOUT)


class V2Agent(acp.Agent):
    made = 0

    def __init__(self) -> None:
        V2Agent.made += 1
        self.number = V2Agent.made

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, params: Any) -> Any:
        info = acp.Implementation(name="v2", version=str(self.number))
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)

    async def session_new(self, params: Any) -> Any:
        return acp.NewSessionResponse(session_id=f"s{self.number}")

    async def session_prompt(self, params: Any) -> Any:
        chunk = acp.SessionUpdateAgentMessageChunk(message_id="m", content=params.prompt[0])
        await self.conn.session_update(acp.UpdateSessionNotification(session_id=params.session_id, update=chunk))
        return acp.PromptResponse(message_id="p")


class V1Agent(acp_v1.Agent):
    async def initialize(self, params: Any) -> Any:
        return acp_v1.InitializeResponse(protocol_version=1)


class Recorder(acp.Client):
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update.to_dict())


async def test_v2_and_v1_clients_on_one_server_each_connection_with_its_own_agent():
    async with acp.serve_websocket(V2Agent, V1Agent, port=0) as server:
        names = []
        for _ in range(2):
            client = Recorder()
            async with acp.connect_websocket(client, server.url) as conn:
                init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
                names.append((await conn.initialize(init)).info.version)
                session = await conn.session_new(acp.NewSessionRequest(cwd="/"))
                prompt = [acp.ContentBlockText(text="hi")]
                await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
            assert client.updates == [
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": {"type": "text", "text": "hi"},
                }
            ]
        assert len(set(names)) == 2  # one agent per connection

        async with acp_v1.connect_websocket(acp_v1.Client(), server.url) as conn:
            answer = await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
            assert answer.protocol_version == 1


async def test_authorization_refuses_the_upgrade():
    def authorize(request: Any) -> bool:
        return bool(request.headers.get("authorization") == "Bearer t")

    async with acp.serve_websocket(V2Agent, port=0, authorize=authorize) as server:
        with pytest.raises(Exception, match="401"):
            async with acp.connect_websocket(Recorder(), server.url):
                pass
        async with acp.connect_websocket(Recorder(), server.url, headers={"Authorization": "Bearer t"}) as conn:
            init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
            assert (await conn.initialize(init)).info.name == "v2"


class WhoAgent(V2Agent):
    """Answers `initialize` with its connection's principal as its name."""

    async def initialize(self, params: Any) -> Any:
        info = acp.Implementation(name=repr(self.conn.principal), version="1")
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)


def by_token(request: Any) -> str | None:
    return {"Bearer a": "alice", "Bearer b": "bob"}.get(request.headers.get("authorization", ""))


@pytest.mark.parametrize("server", ["http", "ws", "serve_websocket"])
async def test_the_agent_reads_its_connections_principal(server):
    init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
    async with contextlib.AsyncExitStack() as stack:
        if server == "serve_websocket":
            url = (await stack.enter_async_context(acp.serve_websocket(WhoAgent, port=0, authorize=by_token))).url
        else:
            url = await stack.enter_async_context(uvicorn_serving(acp.http_app(WhoAgent, authorize=by_token)))
            url = url.replace("http", server, 1)
        connect = acp.connect_http if server == "http" else acp.connect_websocket
        for token, name in (("Bearer a", "'alice'"), ("Bearer b", "'bob'")):
            async with connect(Recorder(), url, headers={"Authorization": token}) as conn:
                assert (await conn.initialize(init)).info.name == name


async def test_without_authorization_and_in_memory_the_principal_is_none():
    init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
    async with uvicorn_serving(acp.http_app(WhoAgent)) as url, acp.connect_http(Recorder(), url) as conn:
        assert (await conn.initialize(init)).info.name == "None"
        assert conn.principal is None  # the client's side has none
    async with acp.connect_pair(WhoAgent(), Recorder()) as (agent_conn, client_conn):
        assert (await client_conn.initialize(init)).info.name == "None"
        assert agent_conn.principal is None


def test_without_websockets_the_transport_names_the_extra_and_the_package_still_imports():
    program = (
        "import sys; sys.modules['websockets'] = None; sys.path.insert(0, sys.argv[1])\n"
        "import acp_v2; [getattr(acp_v2, name) for name in acp_v2.__all__]\n"
        "try:\n    import acp_runtime._websocket\nexcept ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program, str(ROOT / "generated")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "websocket` extra" in result.stdout and "pip install" in result.stdout


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_http_app_serves_v2_and_v1_clients_over_http_and_websocket(scheme):
    async with uvicorn_serving(acp.http_app(V2Agent, V1Agent)) as url:
        url = url.replace("http", scheme, 1)
        connect = acp.connect_http if scheme == "http" else acp.connect_websocket
        client = Recorder()
        async with connect(client, url) as conn:
            init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
            assert (await conn.initialize(init)).info.name == "v2"
            session = await conn.session_new(acp.NewSessionRequest(cwd="/"))
            prompt = [acp.ContentBlockText(text="over " + scheme)]
            await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
            with pytest.raises(acp.RequestError) as error:
                await conn.session_list(acp.ListSessionsRequest())
            assert error.value.code == acp.ErrorCode.METHOD_NOT_FOUND
        assert [update["content"]["text"] for update in client.updates] == ["over " + scheme]
        v1_connect = acp_v1.connect_http if scheme == "http" else acp_v1.connect_websocket
        async with v1_connect(acp_v1.Client(), url) as conn:
            assert (await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))).protocol_version == 1


class ManySessions(V2Agent):
    async def session_new(self, params: Any) -> Any:
        self.sessions = getattr(self, "sessions", 0) + 1
        return acp.NewSessionResponse(session_id=f"s{self.sessions}")


async def test_the_event_streams_of_many_sessions_leave_room_for_the_posts():
    """Each session's event stream holds an HTTP connection; with httpx's pool bounded at ten
    connections the ninth session's prompt waited forever."""
    async with uvicorn_serving(acp.http_app(ManySessions)) as url, acp.connect_http(Recorder(), url) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1")))
        for _ in range(12):
            session = await conn.session_new(acp.NewSessionRequest(cwd="/"))
            prompt = [acp.ContentBlockText(text="hi")]
            await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))


V1_ONLY_AGENT = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
import acp_v1

class Agent(acp_v1.Agent):
    async def initialize(self, params):
        return acp_v1.InitializeResponse(protocol_version=1, agent_info=acp_v1.Implementation(name="v1", version="1"))

    async def session_new(self, params):
        return acp_v1.NewSessionResponse(session_id="v1-session")

asyncio.run(acp_v1.run_agent(Agent()))
"""


class V1OnlyAgent(acp_v1.Agent):
    async def initialize(self, params: Any) -> Any:
        return acp_v1.InitializeResponse(protocol_version=1, agent_info=acp_v1.Implementation(name="v1", version="1"))

    async def session_new(self, params: Any) -> Any:
        return acp_v1.NewSessionResponse(session_id="v1-session")


@pytest.mark.parametrize("transport", ["process", "http", "ws"])
async def test_every_transport_negotiates_down_to_a_v1_only_agent(transport):
    """`open_agent_process`, `open_http` and `open_websocket` with `connect_negotiated`: a v2
    initialize, answered 1, gives the v1 fallback client's connection."""

    @contextlib.asynccontextmanager
    async def opened(url: str) -> AsyncIterator[Any]:
        if transport == "process":
            async with acp.open_agent_process(sys.executable, "-c", V1_ONLY_AGENT, str(ROOT / "generated")) as (
                pipe,
                process,
            ):
                yield pipe
            assert process.returncode == 0
        else:
            async with (acp.open_http if transport == "http" else acp.open_websocket)(url) as remote:
                yield remote

    async with uvicorn_serving(acp.http_app(V1OnlyAgent)) as url:
        url = url.replace("http", "ws", 1) if transport == "ws" else url
        async with opened(url) as pipe:
            init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
            conn, answer = await acp.connect_negotiated(Recorder(), pipe, init, acp_v1.Client())
            async with conn:
                assert isinstance(conn, acp_v1.ClientSideConnection)
                assert (answer.protocol_version, answer.agent_info.name) == (1, "v1")
                session = await conn.session_new(acp_v1.NewSessionRequest(cwd="/", mcp_servers=[]))
                assert session.session_id == "v1-session"


def test_without_httpx_the_http_client_names_the_extra_and_the_server_needs_nothing():
    program = (
        "import sys; sys.modules['httpx'] = None; sys.modules['websockets'] = None; sys.path.insert(0, sys.argv[1])\n"
        "import acp_v2; app = acp_v2.http_app(acp_v2.Agent)\n"
        "try:\n    import acp_runtime._http_client\nexcept ImportError as error:\n    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program, str(ROOT / "generated")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "`http` extra" in result.stdout and "pip install" in result.stdout


class Balancer:
    """An ASGI middleware in front of the app, as a load balancer pinning clients by cookie: it
    sets `worker=w1` (and `seen=1`) on every response, WebSocket upgrades included, and records
    the `Cookie` header of every request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.cookies: list[str | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        self.cookies.append(headers[b"cookie"].decode() if b"cookie" in headers else None)
        set_cookies = [(b"set-cookie", b"worker=w1; Path=/; HttpOnly"), (b"set-cookie", b"seen=1")]

        async def pinned(message: Any) -> None:
            if message["type"] in ("http.response.start", "websocket.accept"):
                message = {**message, "headers": [*message.get("headers", []), *set_cookies]}
            await send(message)

        await self.app(scope, receive, pinned)


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_affinity_cookies_set_on_one_connection_are_sent_by_the_next(scheme):
    """`cookies=AffinityCookies()` shared by two connections: the second one's requests carry the
    cookies the server set on the first (the TypeScript SDK's `cookieStore`); its own `Cookie`
    header is kept beside them."""
    balancer = Balancer(acp.http_app(V2Agent))
    cookies = acp.AffinityCookies()
    connect = acp.connect_http if scheme == "http" else acp.connect_websocket
    init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="c", version="1"))
    async with uvicorn_serving(balancer) as url:
        seen = []
        for headers in ({}, {"Cookie": "mine=x"}):
            async with connect(Recorder(), url.replace("http", scheme, 1), headers=headers, cookies=cookies) as conn:
                await conn.initialize(init)
                await conn.session_new(acp.NewSessionRequest(cwd="/"))
            seen.append(balancer.cookies)
            balancer.cookies = []
    assert cookies.cookies == {"worker": "w1", "seen": "1"}
    first, second = seen
    assert first[0] is None  # nothing stored yet
    assert second and set(second) == {"worker=w1; seen=1; mine=x"}


def test_run_agent_serves_requests_read_from_a_regular_file_into_a_regular_file(tmp_path):
    """`agent < requests.jsonl > answers.jsonl`: the event loop's pipe transports refuse files."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
    ]
    (tmp_path / "requests.jsonl").write_text("".join(json.dumps(request) + "\n" for request in requests))
    with open(tmp_path / "requests.jsonl", "rb") as stdin, open(tmp_path / "answers.jsonl", "wb") as stdout:
        result = subprocess.run(
            [sys.executable, "-c", V1_ONLY_AGENT, str(ROOT / "generated")],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr
    (answer,) = map(json.loads, (tmp_path / "answers.jsonl").read_text().splitlines())
    assert answer["id"] == 1 and answer["result"]["agentInfo"] == {"name": "v1", "version": "1"}
