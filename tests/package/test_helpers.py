"""The agent-side helpers (helpers.py) over a real connection: what each sends, as the client
receives it on the wire and as `SessionState` folds it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.helpers import MYPY_CACHE, ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")
SYNC = acp.SessionUpdatePlanRemoved(plan_id="sync")  # not recorded: marks what the client has handled
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="test-client", version="1"))


pytestmark = pytest.mark.async_timeout(30)


class Recorder(acp.Client):
    """Keeps every update as JSON, folds them into a SessionState, answers permission with `answer`."""

    def __init__(self, answer: Any = None) -> None:
        self.updates: list[Any] = []
        self.state = acp.SessionState("s1")
        self.questions: list[Any] = []
        self.answer = answer or acp.RequestPermissionOutcomeSelected(option_id="allow")
        self.synced = asyncio.Event()

    async def session_update(self, params: Any) -> None:
        if params.update == SYNC:
            self.synced.set()
            return
        self.updates.append(acp.encode(params.update))
        self.state.apply(params)

    async def session_request_permission(self, params: Any) -> Any:
        self.questions.append(acp.encode(params))
        self.state.apply_permission_request(params)
        return acp.RequestPermissionResponse(outcome=self.answer)


class Agent(acp.Agent):
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, params: Any) -> Any:
        return acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="a", version="1"))


@contextlib.asynccontextmanager
async def connected(client: Any) -> AsyncIterator[Any]:
    """The agent's connection to `client`, initialized, over a socket pair."""
    left, right = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=left)
    client_reader, client_writer = await asyncio.open_connection(sock=right)
    agent = Agent()
    agent_conn = acp.connect_to_client(agent, agent_reader, agent_writer)
    client_conn = acp.connect_to_agent(client, client_reader, client_writer)
    try:
        await client_conn.initialize(INIT)
        yield agent_conn
    finally:
        await client_conn.close()
        await agent_conn.close()


async def settled(conn: Any, client: Recorder) -> None:
    """Wait until the client has handled what was sent: notifications are handled in order,
    so once it has the SYNC update it has all before it."""
    await conn.session_update(acp.UpdateSessionNotification(session_id="s1", update=SYNC))
    await client.synced.wait()


async def test_say_streams_chunks_of_one_message_until_idle():
    client = Recorder()
    async with connected(client) as conn:
        session = conn.session("s1")
        first = await session.say("Hello")
        assert await session.say(" world") == first
        await session.think("hmm")
        await session.idle()
        second = await session.say(acp.ContentBlockText(text="again"))
        await settled(conn, client)
    assert first != second
    assert client.updates[:5] == [
        {"sessionUpdate": "agent_message_chunk", "messageId": first, "content": {"type": "text", "text": "Hello"}},
        {"sessionUpdate": "agent_message_chunk", "messageId": first, "content": {"type": "text", "text": " world"}},
        {
            "sessionUpdate": "agent_thought_chunk",
            "messageId": client.updates[2]["messageId"],
            "content": {"type": "text", "text": "hmm"},
        },
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
        {"sessionUpdate": "agent_message_chunk", "messageId": second, "content": {"type": "text", "text": "again"}},
    ]
    assert [block.text for block in client.state.agent_messages[first].content] == ["Hello", " world"]


@pytest.mark.parametrize("reason", ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"])
async def test_idle_takes_every_stop_reason_of_the_schema_by_its_tag(reason):
    client = Recorder()
    async with connected(client) as conn:
        await conn.session("s1").idle(reason)
        await settled(conn, client)
    assert client.updates[0] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": reason}


async def test_running_requires_action_and_idle_with_a_stop_reason_value_report_state():
    client = Recorder()
    async with connected(client) as conn:
        session = conn.session("s1")
        await session.running()
        await session.requires_action()
        await session.idle(acp.IdleStateUpdateStopReasonOther(stop_reason="vendor_stop"))
        await settled(conn, client)
    assert client.updates[:3] == [
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "state_update", "state": "requires_action"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "vendor_stop"},
    ]


async def test_a_tool_call_is_started_and_patched_through_its_handle_and_folds_into_one_call():
    client = Recorder()
    async with connected(client) as conn:
        session = conn.session("s1")
        call = await session.tool_call("Read notes", kind=acp.ToolKind.READ, raw_input={"path": "notes.txt"})
        await call.update(status=acp.ToolCallStatus.IN_PROGRESS)
        await call.update(status=acp.ToolCallStatus.COMPLETED, content="three lines", raw_output={"lines": 3})
        await settled(conn, client)
    tool_call_id = call.tool_call_id
    assert client.updates[:3] == [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tool_call_id,
            "title": "Read notes",
            "kind": "read",
            "rawInput": {"path": "notes.txt"},
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "status": "in_progress"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tool_call_id,
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "three lines"}}],
            "rawOutput": {"lines": 3},
        },
    ]
    folded = client.state.tool_calls[tool_call_id]
    assert (folded.title, folded.kind, folded.status) == ("Read notes", "read", "completed")


@pytest.mark.parametrize(
    ("outcome", "allowed", "rejected", "cancelled", "option"),
    [
        (acp.RequestPermissionOutcomeSelected(option_id="allow"), True, False, False, "allow"),
        (acp.RequestPermissionOutcomeSelected(option_id="allow_always"), True, False, False, "allow_always"),
        (acp.RequestPermissionOutcomeSelected(option_id="reject"), False, True, False, "reject"),
        (acp.RequestPermissionOutcomeCancelled(), False, False, True, None),
        (acp.RequestPermissionOutcomeSelected(option_id="not-offered"), False, False, False, None),
    ],
)
async def test_ask_permission_offers_typed_options_about_the_tool_call_and_reads_the_answer(
    outcome, allowed, rejected, cancelled, option
):
    client = Recorder(outcome)
    async with connected(client) as conn:
        session = conn.session("s1")
        call = await session.tool_call("Delete build", kind=acp.ToolKind.DELETE, raw_input={"path": "build"})
        await call.update(title="Delete build/")
        answer = await session.ask_permission(call, allow="Delete", allow_always="Always delete", reject="Keep")
    assert (answer.allowed, answer.rejected, answer.cancelled) == (allowed, rejected, cancelled)
    assert (answer.option.option_id if answer.option else None) == option
    assert answer.outcome == outcome
    assert client.questions == [
        {
            "sessionId": "s1",
            "title": "Delete build/",
            "subject": {
                "type": "tool_call",
                "toolCall": {
                    "toolCallId": call.tool_call_id,
                    "title": "Delete build/",
                    "kind": "delete",
                    "rawInput": {"path": "build"},
                },
            },
            "options": [
                {"optionId": "allow", "name": "Delete", "kind": "allow_once"},
                {"optionId": "allow_always", "name": "Always delete", "kind": "allow_always"},
                {"optionId": "reject", "name": "Keep", "kind": "reject_once"},
            ],
        }
    ]
    assert [request.title for request in client.state.requests_for("tool_calls", call.tool_call_id)] == [
        "Delete build/"
    ]


async def test_ask_permission_needs_a_title_and_an_option():
    async with connected(Recorder()) as conn:
        session = conn.session("s1")
        with pytest.raises(ValueError, match="needs a title"):
            await session.ask_permission()
        with pytest.raises(ValueError, match="at least one option"):
            await session.ask_permission(title="Go?", allow=None, reject=None)


async def test_cancelling_ask_permission_withdraws_the_request():
    class Waiting(Recorder):
        def __init__(self) -> None:
            super().__init__()
            self.asked = asyncio.Event()
            self.withdrawn = asyncio.Event()

        async def session_request_permission(self, params: Any) -> Any:
            self.asked.set()
            try:
                await asyncio.get_running_loop().create_future()
            finally:
                self.withdrawn.set()

    client = Waiting()
    async with connected(client) as conn:
        asking = asyncio.create_task(conn.session("s1").ask_permission(title="Go?"))
        await client.asked.wait()
        asking.cancel()
        await client.withdrawn.wait()  # the client's handler was cancelled by $/cancel_request
        with pytest.raises(asyncio.CancelledError):
            await asking


async def test_plan_user_message_and_raw_updates():
    client = Recorder()
    async with connected(client) as conn:
        session = conn.session("s1")
        plan_id = await session.plan(["Read", acp.PlanEntry(content="Write", priority="high", status="in_progress")])
        assert await session.plan(["Read"]) == plan_id  # the session's plan, replaced
        user = await session.user_message("hi")
        await session.update(acp.SessionUpdateSessionInfoUpdate(title="Notes"))
        await settled(conn, client)
    assert client.updates[:4] == [
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": plan_id,
                "entries": [
                    {"content": "Read", "priority": "medium", "status": "pending"},
                    {"content": "Write", "priority": "high", "status": "in_progress"},
                ],
            },
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": plan_id,
                "entries": [{"content": "Read", "priority": "medium", "status": "pending"}],
            },
        },
        {"sessionUpdate": "user_message", "messageId": user, "content": [{"type": "text", "text": "hi"}]},
        {"sessionUpdate": "session_info_update", "title": "Notes"},
    ]
    assert list(client.state.plans) == [plan_id]


class Broken(Exception):
    pass


@pytest.mark.parametrize(("interruption", "ending"), [(Broken, "failed"), (asyncio.CancelledError, "cancelled")])
async def test_a_turn_that_raises_or_is_cancelled_ends_the_tool_calls_it_left_open(interruption, ending):
    client = Recorder()
    async with connected(client) as conn:
        with pytest.raises(interruption):
            async with conn.session("s1") as session:
                done = await session.tool_call("Read", status=acp.ToolCallStatus.IN_PROGRESS)
                await done.update(status=acp.ToolCallStatus.COMPLETED)
                open_call = await session.tool_call("Write", status=acp.ToolCallStatus.IN_PROGRESS)
                raise interruption()
        await settled(conn, client)
    assert client.updates[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": open_call.tool_call_id,
        "status": ending,
    }
    assert [call.status for call in client.state.tool_calls.values()] == ["completed", ending]


async def test_a_turn_that_ends_normally_leaves_its_tool_calls_as_they_are():
    client = Recorder()
    async with connected(client) as conn:
        async with conn.session("s1") as session:
            await session.tool_call("Read", status=acp.ToolCallStatus.IN_PROGRESS)
        await settled(conn, client)
    assert len(client.updates) == 1


# --- v1 -----------------------------------------------------------------------------


class RecorderV1(acp_v1.Client):
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.questions: list[Any] = []
        self.synced = asyncio.Event()

    async def session_update(self, params: Any) -> None:
        if params.update == SYNC_V1:
            self.synced.set()
        else:
            self.updates.append(acp_v1.encode(params.update))

    async def session_request_permission(self, params: Any) -> Any:
        self.questions.append(acp_v1.encode(params))
        return acp_v1.RequestPermissionResponse(outcome=acp_v1.RequestPermissionOutcomeSelected(option_id="reject"))


class AgentV1(acp_v1.Agent):
    async def initialize(self, params: Any) -> Any:
        return acp_v1.InitializeResponse(protocol_version=1)


SYNC_V1 = acp_v1.SessionUpdateSessionInfoUpdate(title="sync")


async def test_the_v1_helpers_speak_v1():
    client = RecorderV1()
    left, right = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=left)
    client_reader, client_writer = await asyncio.open_connection(sock=right)
    agent_conn = acp_v1.connect_to_client(AgentV1(), agent_reader, agent_writer)
    client_conn = acp_v1.connect_to_agent(client, client_reader, client_writer)
    try:
        await client_conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        session = agent_conn.session("s1")
        call = await session.tool_call("Echo", kind=acp_v1.ToolKind.EXECUTE, content="hi", raw_input={"text": "hi"})
        answer = await session.ask_permission(call, allow="Echo", reject="Don't")
        message_id = await session.say("a")
        await session.say("b")
        await call.update(status=acp_v1.ToolCallStatus.FAILED)
        await session.plan(["Echo"])
        await agent_conn.session_update(acp_v1.SessionNotification(session_id="s1", update=SYNC_V1))
        await client.synced.wait()
    finally:
        await client_conn.close()
        await agent_conn.close()
    assert answer.rejected and not answer.allowed
    tool_call_id = call.tool_call_id
    assert client.updates == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": tool_call_id,
            "title": "Echo",
            "kind": "execute",
            "content": [{"type": "content", "content": {"type": "text", "text": "hi"}}],
            "rawInput": {"text": "hi"},
        },
        {"sessionUpdate": "agent_message_chunk", "messageId": message_id, "content": {"type": "text", "text": "a"}},
        {"sessionUpdate": "agent_message_chunk", "messageId": message_id, "content": {"type": "text", "text": "b"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "status": "failed"},
        {"sessionUpdate": "plan", "entries": [{"content": "Echo", "priority": "medium", "status": "pending"}]},
    ]
    assert client.questions == [
        {
            "sessionId": "s1",
            "toolCall": {
                "toolCallId": tool_call_id,
                "title": "Echo",
                "kind": "execute",
                "rawInput": {"text": "hi"},
            },
            "options": [
                {"optionId": "allow", "name": "Echo", "kind": "allow_once"},
                {"optionId": "reject", "name": "Don't", "kind": "reject_once"},
            ],
        }
    ]


async def test_a_cancelled_v1_turn_fails_the_tool_calls_it_left_open():
    client = RecorderV1()
    left, right = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=left)
    client_reader, client_writer = await asyncio.open_connection(sock=right)
    agent_conn = acp_v1.connect_to_client(AgentV1(), agent_reader, agent_writer)
    client_conn = acp_v1.connect_to_agent(client, client_reader, client_writer)
    try:
        await client_conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        with pytest.raises(asyncio.CancelledError):
            async with agent_conn.session("s1") as session:
                call = await session.tool_call("Echo", status=acp_v1.ToolCallStatus.PENDING)
                raise asyncio.CancelledError
        await agent_conn.session_update(acp_v1.SessionNotification(session_id="s1", update=SYNC_V1))
        await client.synced.wait()
    finally:
        await client_conn.close()
        await agent_conn.close()
    assert client.updates[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call.tool_call_id,
        "status": "failed",
    }


# --- config options, model selection and the session shortcuts ------------------------------

PACKAGES = pytest.mark.parametrize("package", [acp, acp_v1], ids=["v2", "v1"])


def option_id(package: Any) -> str:
    return "configId" if package is acp else "id"


@PACKAGES
def test_config_request_types_the_value_as_its_schema_does(package):
    chosen = package.config_request("s1", "llm", "deep")
    flag = package.config_request("s1", "web", True)
    as_id = {"type": "id", "value": "deep"} if package is acp else {"value": "deep"}  # v1: no tag
    assert package.encode(chosen) == {"sessionId": "s1", "configId": "llm", **as_id}
    assert package.encode(flag) == {"sessionId": "s1", "configId": "web", "type": "boolean", "value": True}
    assert package.requested_value(chosen) == "deep" and package.requested_value(flag) is True
    wire = {"sessionId": "s1", "configId": "llm", **as_id}
    assert package.requested_value(package.decode("SetSessionConfigOptionRequest", wire)) == "deep"


@PACKAGES
def test_select_and_boolean_options_are_the_schemas_config_options(package):
    options = [
        package.select_option("llm", "Model", "fast", ["fast", ("deep", "Deep thinker")], category="model"),
        package.boolean_option("web", "Web search", False, description="Search the web"),
    ]
    assert [package.encode(option) for option in options] == [
        {
            option_id(package): "llm",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": "fast",
            "options": [{"value": "fast", "name": "fast"}, {"value": "deep", "name": "Deep thinker"}],
        },
        {
            option_id(package): "web",
            "name": "Web search",
            "description": "Search the web",
            "type": "boolean",
            "currentValue": False,
        },
    ]


@PACKAGES
def test_model_request_chooses_with_the_model_option_and_refuses_a_model_not_offered(package):
    group = "groupId" if package is acp else "group"
    grouped = package.decode(
        "SessionConfigOption",
        {
            option_id(package): "llm",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": "fast",
            "options": [
                {group: "small", "name": "Small", "options": [{"value": "fast", "name": "Fast"}]},
                {group: "large", "name": "Large", "options": [{"value": "deep", "name": "Deep"}]},
            ],
        },
    )
    options = [package.boolean_option("web", "Web search", False), grouped]
    assert package.model_option(options) is grouped
    assert [value.value for value in package.offered_values(grouped)] == ["fast", "deep"]
    request = package.model_request("s1", options, "deep")
    assert package.encode(request)["configId"] == "llm" and package.requested_value(request) == "deep"
    with pytest.raises(ValueError, match=r"model 'huge' is not offered; the agent offers \['fast', 'deep'\]"):
        package.model_request("s1", options, "huge")
    with pytest.raises(ValueError, match="no model selection"):
        package.model_request("s1", options[:1], "fast")


def shortcut_updates(package: Any) -> list[dict[str, Any]]:
    commands = [{"name": "plan", "description": "plan"}, {"name": "test", "description": "Run tests"}]
    tagged = [{"type": "command", **command} for command in commands] if package is acp else commands  # v2 tags
    return [
        {"sessionUpdate": "session_info_update", "title": "Fix the tests"},
        {"sessionUpdate": "usage_update", "used": 1200, "size": 200000, "cost": {"amount": 0.25, "currency": "USD"}},
        {"sessionUpdate": "available_commands_update", "availableCommands": tagged},
    ]


async def send_shortcuts(package: Any, session: Any) -> None:
    await session.title("Fix the tests")
    await session.usage(1200, 200000, cost=package.Cost(amount=0.25, currency="USD"))
    await session.commands(["plan", ("test", "Run tests")])
    await session.config_options([package.boolean_option("web", "Web search", True)])


async def test_the_title_usage_commands_and_config_options_shortcuts():
    client = Recorder()
    async with connected(client) as conn:
        await send_shortcuts(acp, conn.session("s1"))
        await settled(conn, client)
    options = [{"configId": "web", "name": "Web search", "type": "boolean", "currentValue": True}]
    assert client.updates == [
        *shortcut_updates(acp),
        {"sessionUpdate": "config_option_update", "configOptions": options},
    ]
    assert client.state.session_info.title == "Fix the tests" and client.state.usage.used == 1200


async def test_the_v1_shortcuts_add_the_current_mode():
    client = RecorderV1()
    left, right = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=left)
    client_reader, client_writer = await asyncio.open_connection(sock=right)
    agent_conn = acp_v1.connect_to_client(AgentV1(), agent_reader, agent_writer)
    client_conn = acp_v1.connect_to_agent(client, client_reader, client_writer)
    try:
        await client_conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        session = agent_conn.session("s1")
        await send_shortcuts(acp_v1, session)
        await session.mode("architect")
        await agent_conn.session_update(acp_v1.SessionNotification(session_id="s1", update=SYNC_V1))
        await client.synced.wait()
    finally:
        await client_conn.close()
        await agent_conn.close()
    options = [{"id": "web", "name": "Web search", "type": "boolean", "currentValue": True}]
    assert client.updates == [
        *shortcut_updates(acp_v1),
        {"sessionUpdate": "config_option_update", "configOptions": options},
        {"sessionUpdate": "current_mode_update", "currentModeId": "architect"},
    ]


# --- session history: what the agent sent, replayed on session/load ----------------------------


async def test_a_session_history_records_what_was_sent_and_replays_it_in_order_once():
    history = acp.SessionHistory()
    client = Recorder()
    async with connected(client) as conn:
        session = conn.session("s1", history)
        await session.user_message("hello")
        await session.say("Hi ")
        await session.say("there")
        call = await session.tool_call("Read", kind=acp.ToolKind.READ)
        await call.update(status=acp.ToolCallStatus.COMPLETED)
        await session.idle("end_turn")
        await conn.session("s2", history).title("another session")
        await settled(conn, client)
        sent, client.updates = client.updates, []
        client.synced.clear()
        assert [acp.encode(update) for update in history.updates("s1")] == sent[:-1]
        await conn.session("s1", history).replay()  # as a session/load handler does
        await settled(conn, client)
    assert client.updates == sent[:-1]  # in order, the other session's update left out
    assert len(history.updates("s1")) == 6  # replaying recorded nothing again
    assert [acp.encode(update) for update in history.updates("s2")] == sent[-1:]


async def test_replay_refuses_a_session_it_has_no_history_of():
    history = acp.SessionHistory()
    async with connected(Recorder()) as conn:
        with pytest.raises(ValueError, match="no history of session 's1'"):
            await conn.session("s1").replay()
        with pytest.raises(ValueError, match="no history of session 's1'"):
            await conn.session("s1", history).replay()
        history.start("s1")  # created, nothing sent yet: replays nothing
        await conn.session("s1", history).replay()
        assert "s1" in history and history.updates("s1") == []
        history.forget("s1")
        assert "s1" not in history


async def test_resume_replays_from_the_start_or_nothing_and_refuses_what_it_cannot():
    history = acp.SessionHistory()
    client = Recorder()
    async with connected(client) as conn:
        await conn.session("s1", history).say("Hi")
        await settled(conn, client)
        sent, client.updates = client.updates, []
        client.synced.clear()
        await conn.session("s1", history).resume(acp.UNDEFINED)  # no replayFrom: nothing sent
        await conn.session("s1", history).resume(None)
        await conn.session("s1", history).resume(acp.ReplayFromStartVariant())
        await settled(conn, client)
        assert client.updates == sent
        with pytest.raises(acp.RequestError) as refused:
            await conn.session("s1", history).resume(acp.decode("ReplayFrom", {"type": "_at", "entry": 3}))
        assert refused.value.code == -32602
        with pytest.raises(acp.RequestError) as unknown:
            await conn.session("s2", history).resume(acp.ReplayFromStartVariant())
        assert unknown.value.code == acp.RequestError.session_not_found("s2").code


async def test_the_v1_session_history_replays_v1_updates():
    history = acp_v1.SessionHistory()
    client = RecorderV1()
    left, right = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=left)
    client_reader, client_writer = await asyncio.open_connection(sock=right)
    agent_conn = acp_v1.connect_to_client(AgentV1(), agent_reader, agent_writer)
    client_conn = acp_v1.connect_to_agent(client, client_reader, client_writer)
    try:
        await client_conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        session = agent_conn.session("s1", history)
        await session.say("Hi")
        await session.mode("architect")
        await agent_conn.session("s1", history).replay()
        await agent_conn.session_update(acp_v1.SessionNotification(session_id="s1", update=SYNC_V1))
        await client.synced.wait()
    finally:
        await client_conn.close()
        await agent_conn.close()
    sent = client.updates[:2]
    assert [update["sessionUpdate"] for update in sent] == ["agent_message_chunk", "current_mode_update"]
    assert client.updates == sent + sent


def test_misused_helpers_fail_mypy_strict():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(MYPY_CACHE),
            str(ROOT / "tests" / "typing" / "helpers_bad.py"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT / "generated")},
    )
    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert [int(line.split(":")[1]) for line in errors] == [8, 9, 10, 11, 12], result.stdout
    assert '"idle" of "AgentSession" has incompatible type "Literal[\'finished\']"' in errors[0]
