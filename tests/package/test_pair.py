"""The test and process helpers of the generated connection module: `connect_pair` (agent and
client in one process over `memory_transports`), `spawn_client_process`, `send_request` for
methods outside the schema, and wire observers on typed, routed and process connections."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from tests.package.test_connection import INIT, PROMPT, EchoAgent, RecordingClient
from tests.support.helpers import ROOT, import_package, uvicorn_serving

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")


class Recorder(acp.WireObserver):
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.closed = 0

    def on_message(self, event: Any) -> None:
        self.events.append(event)

    def on_close(self) -> None:
        self.closed += 1


# --- connect_pair ------------------------------------------------------------------------


async def test_a_pair_carries_a_full_turn_through_the_real_codec():
    client = RecordingClient()
    async with acp.connect_pair(EchoAgent(), client) as (agent_conn, client_conn):
        assert isinstance(agent_conn, acp.AgentSideConnection)
        assert isinstance(client_conn, acp.ClientSideConnection)
        assert (await client_conn.initialize(INIT)).info.name == "echo"
        session = await client_conn.session_new(acp.NewSessionRequest(cwd="/"))
        prompt = [acp.ContentBlockText(text="ask")]
        answer = await client_conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
        assert answer.message_id == "m1"
        with pytest.raises(acp.RequestError) as error:
            await client_conn.session_prompt(
                acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="refuse")])
            )
        assert (error.value.code, error.value.data) == (acp.ErrorCode.INVALID_PARAMS, {"why": "no"})
    assert [update.content.text for update in client.updates] == ["permission:", "yes"]


async def test_a_pair_of_the_v1_package_works_the_same():
    class V1Agent(acp_v1.Agent):
        async def initialize(self, params: Any) -> Any:
            return acp_v1.InitializeResponse(protocol_version=1)

    async with acp_v1.connect_pair(V1Agent(), acp_v1.Client()) as (_, client_conn):
        assert (await client_conn.initialize(acp_v1.InitializeRequest(protocol_version=1))).protocol_version == 1


async def test_a_pair_passes_strict_and_on_salvage_to_both_ends():
    """A lenient pair salvages a bad tool kind (dropped, reported with its path); a strict one
    refuses the whole update. The valid update sent after it shows the first was handled."""

    class Sloppy(EchoAgent):
        async def session_new(self, params: Any) -> Any:
            bad = acp.SessionUpdateToolCallUpdate(tool_call_id="t")
            bad.kind = 5  # not a ToolKind: written as given
            for update in (bad, acp.SessionUpdateToolCallUpdate(tool_call_id="ok")):
                await self.client.session_update(acp.UpdateSessionNotification(session_id="s1", update=update))
            return acp.NewSessionResponse(session_id="s1")

    for strict in (False, True):
        seen: list[Any] = []
        client = RecordingClient()
        async with acp.connect_pair(
            Sloppy(), client, options=acp.ConnectionOptions(strict=strict, on_salvage=seen.append)
        ) as (_, client_conn):
            await client_conn.initialize(INIT)
            await client_conn.session_new(acp.NewSessionRequest(cwd="/"))
            while not client.updates or client.updates[-1].tool_call_id != "ok":
                await asyncio.sleep(0.01)
        assert [update.tool_call_id for update in client.updates] == (["ok"] if strict else ["t", "ok"])
        assert [report.path for report in seen] == ([] if strict else ["$.params.update.kind"])


async def test_a_pair_honours_the_limit_on_requests_served_at_once():
    running, most = 0, 0

    class Slow(EchoAgent):
        async def session_new(self, params: Any) -> Any:
            nonlocal running, most
            running += 1
            most = max(most, running)
            await asyncio.sleep(0.01)
            running -= 1
            return acp.NewSessionResponse(session_id="s")

    limits = acp.ConnectionLimits(max_concurrent_requests=2)
    async with acp.connect_pair(Slow(), RecordingClient(), options=acp.ConnectionOptions(limits=limits)) as (
        _,
        client_conn,
    ):
        await client_conn.initialize(INIT)
        answers = await asyncio.gather(*(client_conn.session_new(acp.NewSessionRequest(cwd="/")) for _ in range(8)))
    assert [answer.session_id for answer in answers] == ["s"] * 8
    assert most == 2


async def test_a_pair_holds_output_its_peer_does_not_read_only_up_to_the_limit_then_fails():
    class Deaf(RecordingClient):
        async def session_update(self, params: Any) -> None:
            await asyncio.sleep(60)  # the client's reader waits for room in its notification queue

    agent = EchoAgent()
    limits = acp.ConnectionLimits(max_queued_notifications=1, max_buffered_bytes=4096, max_output_stall=0.3)
    async with acp.connect_pair(agent, Deaf(), options=acp.ConnectionOptions(limits=limits), timeout=1) as (
        agent_conn,
        client_conn,
    ):
        await client_conn.initialize(INIT)
        prompt = acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="w " * 2000)])
        call = asyncio.create_task(client_conn.session_prompt(prompt))
        await asyncio.wait_for(agent_conn.wait_closed(), 10)  # its updates stalled: it gave up
        call.cancel()
    assert agent.client._closed


async def test_leaving_a_pair_delivers_what_the_client_sent_last_and_leaves_no_task():
    class Slow(EchoAgent):
        async def session_cancel(self, params: Any) -> None:
            await asyncio.sleep(0.1)  # still handling it when the block ends
            await super().session_cancel(params)

    agent = Slow()
    async with acp.connect_pair(agent, RecordingClient()) as (_, client_conn):
        await client_conn.initialize(INIT)
        await client_conn.session_cancel(acp.CancelSessionNotification(session_id="s1"))
    assert agent.cancelled_sessions == ["s1"]


async def test_an_exception_in_the_block_closes_both_connections_and_propagates():
    with pytest.raises(KeyError, match="boom"):
        async with acp.connect_pair(EchoAgent(), RecordingClient()) as (agent_conn, client_conn):
            await client_conn.initialize(INIT)
            raise KeyError("boom")
    with pytest.raises(acp.ConnectionClosed):
        await client_conn.session_new(acp.NewSessionRequest(cwd="/"))
    with pytest.raises(acp.ConnectionClosed):
        await agent_conn.session_update(
            acp.UpdateSessionNotification(
                session_id="s1",
                update=acp.SessionUpdateAgentMessageChunk(message_id="m", content=acp.ContentBlockText(text="x")),
            )
        )


async def test_a_pair_can_be_routed_through_serve_agent_with_memory_transports():
    agent_end, client_end = acp.memory_transports()
    serving = asyncio.create_task(acp.serve_agent(agent_end, EchoAgent()))
    conn, answer = await acp.connect_negotiated(RecordingClient(), client_end, INIT)
    assert answer.info.name == "echo"
    await conn.close()
    await asyncio.wait_for(serving, 5)


# --- requests for any method ---------------------------------------------------------------


async def test_send_request_for_a_method_outside_the_schema_returns_the_raw_result():
    ours, theirs = acp.memory_transports()
    client_conn = acp.ClientSideConnection(RecordingClient(), ours)
    try:
        call = asyncio.create_task(client_conn.send_request("vendor/answer"))
        assert json.loads(await theirs.receive()) == {"jsonrpc": "2.0", "id": 0, "method": "vendor/answer"}
        await theirs.send(b'{"jsonrpc":"2.0","id":0,"result":{"sessionId":7,"raw":true}}')
        assert await asyncio.wait_for(call, 5) == {"sessionId": 7, "raw": True}  # not typed, not checked
        with pytest.raises(ValueError, match="'session/new' is a method of the schema"):
            await client_conn.send_request("session/new", {"cwd": "/"})
        with pytest.raises(ValueError, match="'session/cancel' is a method of the schema"):
            await client_conn.send_notification("session/cancel", {"sessionId": "s"})
    finally:
        await client_conn.close()


async def test_send_request_and_send_notification_write_the_method_and_raw_params_as_given():
    recorder = Recorder()
    async with acp.connect_pair(EchoAgent(), RecordingClient()) as (agent_conn, client_conn):
        agent_conn.add_observer(recorder)
        await client_conn.initialize(INIT)
        with pytest.raises(acp.RequestError) as error:
            await client_conn.send_request("vendor/thing", {"a": [1, None]})
        assert error.value.code == acp.ErrorCode.METHOD_NOT_FOUND  # our agent serves the schema only
        await client_conn.send_notification("vendor/event")
        assert await client_conn.send_request("_test/echo", {"b": 2}) == {"b": 2}  # extensions too
    sent = [event.message for event in recorder.events if event.direction == "in"]
    assert sent[1:] == [
        {"jsonrpc": "2.0", "id": 1, "method": "vendor/thing", "params": {"a": [1, None]}},
        {"jsonrpc": "2.0", "method": "vendor/event"},
        {"jsonrpc": "2.0", "id": 2, "method": "_test/echo", "params": {"b": 2}},
    ]


# --- background tasks ----------------------------------------------------------------------


async def test_a_handler_starts_work_the_connection_owns_and_cancels_when_it_ends():
    class Streaming(EchoAgent):
        def __init__(self) -> None:
            super().__init__()
            self.stopped = asyncio.Event()

        async def session_new(self, params: Any) -> Any:
            self.client.start_task(self.tick(), name="ticker")
            return acp.NewSessionResponse(session_id="s1")

        async def tick(self) -> None:
            try:
                while True:
                    chunk = acp.SessionUpdateAgentMessageChunk(
                        message_id="m", content=acp.ContentBlockText(text="tick")
                    )
                    await self.client.session_update(acp.UpdateSessionNotification(session_id="s1", update=chunk))
                    await asyncio.sleep(0.01)
            finally:
                self.stopped.set()

    agent, client = Streaming(), RecordingClient()
    async with acp.connect_pair(agent, client) as (_, client_conn):
        await client_conn.initialize(INIT)
        await client_conn.session_new(acp.NewSessionRequest(cwd="/"))
        while len(client.updates) < 3:
            await asyncio.sleep(0.01)
    assert agent.stopped.is_set()


# --- observers -----------------------------------------------------------------------------


async def test_observers_attached_in_on_connect_see_a_routed_connection_from_its_initialize(caplog):
    with caplog.at_level(logging.INFO, logger="test.routed"):

        class Observed(EchoAgent):
            def on_connect(self, conn: Any) -> None:
                super().on_connect(conn)
                conn.add_observer(acp.LoggingObserver(logging.getLogger("test.routed"), level=logging.INFO))

        agent_end, client_end = acp.memory_transports()
        serving = asyncio.create_task(acp.serve_agent(agent_end, Observed(), acp_v1.Agent()))
        client_conn = acp.ClientSideConnection(RecordingClient(), client_end)
        await client_conn.initialize(INIT)
        await client_conn.session_new(acp.NewSessionRequest(cwd="/"))
        await client_conn.close()
        await asyncio.wait_for(serving, 5)
    lines = [record.getMessage() for record in caplog.records if record.name == "test.routed"]
    assert [line.split(" B ")[0].rsplit(" ", 1)[0] for line in lines] == [
        "agent <- request initialize id=0",
        "agent -> response initialize id=0",
        "agent <- request session/new id=1",
        "agent -> response session/new id=1",
    ]


async def test_an_observer_over_a_pair_sees_both_directions_and_the_close():
    agent_side, client_side = Recorder(), Recorder()
    async with acp.connect_pair(EchoAgent(), RecordingClient()) as (agent_conn, client_conn):
        agent_conn.add_observer(agent_side)
        client_conn.add_observer(client_side)
        await client_conn.initialize(INIT)
        await client_conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=PROMPT))
    kinds = [(e.direction, e.kind, e.method) for e in client_side.events]
    assert kinds == [
        ("out", "request", "initialize"),
        ("in", "response", "initialize"),
        ("out", "request", "session/prompt"),
        ("in", "notification", "session/update"),
        ("in", "response", "session/prompt"),
    ]
    assert [(e.direction, e.kind) for e in agent_side.events] == [
        ("in" if d == "out" else "out", k) for d, k, _ in kinds
    ]
    assert [e.data for e in agent_side.events] == [e.data for e in client_side.events]  # the same bytes
    assert agent_side.closed == client_side.closed == 1


async def test_the_opentelemetry_observer_traces_each_request_on_both_sides_under_the_callers_span():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    async with acp.connect_pair(EchoAgent(), RecordingClient()) as (agent_conn, client_conn):
        agent_conn.add_observer(acp.opentelemetry_observer(tracer))
        client_conn.add_observer(acp.opentelemetry_observer(tracer))
        with tracer.start_as_current_span("turn") as turn:
            await client_conn.initialize(INIT)
            with pytest.raises(acp.RequestError):
                await client_conn.session_prompt(
                    acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="fail")])
                )
    spans = {(span.name, span.kind): span for span in exporter.get_finished_spans()}
    assert set(spans) == {
        ("initialize", SpanKind.CLIENT),
        ("initialize", SpanKind.SERVER),
        ("session/prompt", SpanKind.CLIENT),
        ("session/prompt", SpanKind.SERVER),
        ("turn", SpanKind.INTERNAL),
    }
    client_span = spans[("session/prompt", SpanKind.CLIENT)]
    assert client_span.parent is not None and client_span.parent.span_id == turn.get_span_context().span_id
    served = spans[("session/prompt", SpanKind.SERVER)]
    assert served.attributes is not None and served.attributes["rpc.jsonrpc.error_code"] == -32603
    assert served.attributes["acp.side"] == "agent"


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_observers_see_connections_over_http_and_websocket_on_both_sides(scheme):
    served = Recorder()

    class Observed(EchoAgent):
        def on_connect(self, conn: Any) -> None:
            super().on_connect(conn)
            conn.add_observer(served)

    client_side = Recorder()
    async with uvicorn_serving(acp.http_app(Observed)) as url:
        connect = acp.connect_http if scheme == "http" else acp.connect_websocket
        async with connect(RecordingClient(), url.replace("http", scheme, 1)) as conn:
            conn.add_observer(client_side)
            await conn.initialize(INIT)
            await conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=PROMPT))
    expected = [
        ("request", "initialize"),
        ("response", "initialize"),
        ("request", "session/prompt"),
        ("notification", "session/update"),
        ("response", "session/prompt"),
    ]
    assert [(e.kind, e.method) for e in client_side.events] == expected
    assert [(e.kind, e.method) for e in served.events] == expected
    assert [e.direction for e in served.events] == ["in", "out", "in", "out", "out"]
    assert all(e.elapsed is not None for e in served.events + client_side.events if e.kind == "response")


# --- spawn_client_process ------------------------------------------------------------------

CLIENT_CHILD = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
import acp_v2 as acp

class Client(acp.Client):
    def __init__(self):
        self.texts = []

    async def session_update(self, params):
        self.texts.append(params.update.content.text)

async def main():
    client = Client()
    reader, writer = await acp.stdio_streams()
    conn = acp.connect_to_agent(client, reader, writer)
    init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="editor", version="1"))
    await conn.initialize(init)
    session = await conn.session_new(acp.NewSessionRequest(cwd="/"))
    prompt = [acp.ContentBlockText(text="hello from the child")]
    await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
    await conn.close()
    sys.exit(0 if client.texts == ["hello", "from", "the", "child"] else 3)

asyncio.run(main())
"""


async def test_spawn_client_process_serves_an_agent_to_a_client_it_starts():
    recorder = Recorder()

    class Observed(EchoAgent):
        def on_connect(self, conn: Any) -> None:
            super().on_connect(conn)
            conn.add_observer(recorder)

    command = (sys.executable, "-c", CLIENT_CHILD, str(ROOT / "generated"))
    async with acp.spawn_client_process(Observed(), *command) as (conn, process):
        assert isinstance(conn, acp.AgentSideConnection)
        await asyncio.wait_for(conn.wait_closed(), 30)
    assert process.returncode == 0
    assert [e.method for e in recorder.events if e.kind == "request"] == [
        "initialize",
        "session/new",
        "session/prompt",
    ]


SALVAGING_CLIENT = """
import json, sys

def ask(message):
    print(json.dumps(message), flush=True)
    return json.loads(sys.stdin.readline())

ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": json.loads(sys.argv[1])})
answer = ask({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": None}})
sys.exit(0 if "result" in answer else 1)
"""


async def test_spawn_client_process_passes_strict_and_on_salvage_to_its_connection():
    """A lenient connection salvages the client's `mcpServers: null` (reported), a strict one
    answers -32602: the child exits 0 on a result, 1 on an error."""
    for strict in (False, True):
        seen: list[Any] = []
        command = (sys.executable, "-c", SALVAGING_CLIENT, json.dumps(acp.encode(INIT)))
        async with acp.spawn_client_process(
            EchoAgent(), *command, options=acp.ConnectionOptions(strict=strict, on_salvage=seen.append)
        ) as (
            conn,
            process,
        ):
            await asyncio.wait_for(conn.wait_closed(), 30)
        assert process.returncode == (1 if strict else 0)
        assert [report.path for report in seen] == ([] if strict else ["$.params.mcpServers"])


STUBBORN_CLIENT = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
)


async def test_a_spawned_client_that_ignores_the_end_of_its_input_is_terminated_then_killed():
    async with acp.spawn_client_process(acp.Agent(), sys.executable, "-c", STUBBORN_CLIENT, timeout=0.2) as (
        _,
        process,
    ):
        await asyncio.sleep(0.3)
    assert process.returncode == -signal.SIGKILL


async def test_cancelling_the_owner_while_it_waits_for_a_spawned_client_kills_it_at_once():
    started: asyncio.Queue[Any] = asyncio.Queue()

    async def owner() -> None:
        async with acp.spawn_client_process(acp.Agent(), sys.executable, "-c", STUBBORN_CLIENT, timeout=30) as (
            _,
            process,
        ):
            assert process.stdout is not None
            started.put_nowait(process)
        # leaving the block waits up to 30 s for the client, which ignores the end of its input and SIGTERM

    task = asyncio.create_task(owner())
    process = await asyncio.wait_for(started.get(), 10)
    await asyncio.sleep(0.3)  # the owner is now waiting for the client to exit
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.wait_for(process.wait(), 5) == -signal.SIGKILL
