"""The generated `SessionState` of both packages: realistic streams folded into exact state,
timeline order, snapshots and subscriber calls; the rules read off each schema; tool-call
patches folded as `merge` applies them; v1's tool calls, plans and message chunks without
ids; and a client keeping one over a real connection."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.config import load_config
from generator.emit.session import session_context
from generator.ir.model import ObjectType
from generator.pipeline import build_ir
from tests.package.test_connection import connected
from tests.support.helpers import ROOT, V2_SCHEMA, import_package

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")
UNDEFINED = acp.UNDEFINED
MODULE = build_ir(V2_SCHEMA, "acp_v2", ROOT, load_config(ROOT).options)
MODULE_V1 = build_ir(ROOT / "schema" / "v1" / "schema.json", "acp_v1", ROOT, load_config(ROOT).options)


def text(value: str) -> Any:
    return acp.ContentBlockText(text=value)


def note(update: Any) -> Any:
    return acp.UpdateSessionNotification(session_id="s1", update=update)


def stream() -> list[Any]:
    """Two interleaved messages, a tool call created then patched three times (one a null
    clear), a plan replaced, state, usage, a notice and an unknown `_vendor` update."""
    patches = [
        acp.ToolCallUpdate.builder(tool_call_id="t1").status("in_progress").meta({"attempt": 1}).build(),
        acp.ToolCallUpdate.builder(tool_call_id="t1").title(None).build(),
        acp.ToolCallUpdate.builder(tool_call_id="t1").status("completed").meta({"attempt": None}).build(),
    ]
    return [
        acp.SessionUpdateUserMessage(message_id="u1", content=[text("hi")]),
        acp.SessionUpdateStateUpdate(state=acp.StateUpdateRunning()),
        acp.SessionUpdateAgentMessageChunk(message_id="m1", content=text("Hel")),
        acp.SessionUpdateAgentThoughtChunk(message_id="th1", content=text("think")),
        acp.SessionUpdateAgentMessageChunk(message_id="m1", content=text("lo")),
        acp.SessionUpdateAgentThoughtChunk(message_id="th1", content=text("ing")),
        acp.SessionUpdateToolCallUpdate(tool_call_id="t1", title="Run tests", kind="execute"),
        acp.SessionUpdatePlanUpdate(plan=acp.PlanUpdateContentItems(plan_id="p1", entries=[])),
        *[
            acp.SessionUpdateToolCallUpdate.from_dict({"sessionUpdate": "tool_call_update", **p.to_dict()})
            for p in patches
        ],
        acp.decode("SessionUpdate", {"sessionUpdate": "_vendor", "x": [1, 2]}),
        acp.SessionUpdateAgentMessageChunk(message_id="m1", content=text("!")),
        acp.SessionUpdatePlanUpdate(
            plan=acp.PlanUpdateContentItems(
                plan_id="p1", entries=[acp.PlanEntry(content="test", priority="high", status="pending")]
            )
        ),
        acp.SessionUpdateUsageUpdate(used=10, size=100),
        acp.SessionUpdateNotice(severity="info", title="note"),
        acp.SessionUpdateStateUpdate(state=acp.StateUpdateIdle(stop_reason=acp.IdleStateUpdateStopReasonEndTurn())),
    ]


def folded() -> Any:
    state = acp.SessionState()
    for update in stream():
        state.apply(note(update))
    return state


def test_a_stream_folds_into_exact_state_in_first_seen_order():
    state = folded()
    entities = [entry for entry in state if entry.session_update not in {"_vendor", "notice"}]
    assert [entry.session_update for entry in state] == [
        *["user_message", "agent_message", "agent_thought", "tool_call_update", "plan_update"],
        *["_vendor", "notice"],  # where they came; the values (state, usage) are not in the timeline
    ]
    assert [entry.to_dict() for entry in entities] == [
        {"sessionUpdate": "user_message", "messageId": "u1", "content": [{"type": "text", "text": "hi"}]},
        {
            "sessionUpdate": "agent_message",
            "messageId": "m1",
            "content": [{"type": "text", "text": t} for t in ("Hel", "lo", "!")],
        },
        {
            "sessionUpdate": "agent_thought",
            "messageId": "th1",
            "content": [{"type": "text", "text": t} for t in ("think", "ing")],
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "title": None,
            "kind": "execute",
            "status": "completed",
            "content": [],
            "locations": [],
            "_meta": {},
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p1",
                "entries": [{"content": "test", "priority": "high", "status": "pending"}],
            },
        },
    ]
    assert state.session_id == "s1"
    assert list(state.agent_messages) == ["m1"] and list(state.tool_calls) == ["t1"]
    assert isinstance(state.state.state, acp.StateUpdateIdle)
    assert state.usage.to_dict() == {"sessionUpdate": "usage_update", "used": 10, "size": 100}
    assert [n.title for n in state.notices] == ["note"]
    assert [o.to_dict() for o in state.other] == [{"sessionUpdate": "_vendor", "x": [1, 2]}]
    assert state.session_info is None and state.terminals == {}


def test_a_full_message_replaces_the_chunks_and_later_chunks_append():
    state = acp.SessionState()
    state.apply(acp.SessionUpdateAgentMessageChunk(message_id="m", content=text("a")))
    state.apply(acp.SessionUpdateAgentMessage(message_id="m", content=[text("whole")]))
    state.apply(acp.SessionUpdateAgentMessageChunk(message_id="m", content=text("+")))
    assert [block.text for block in state.agent_messages["m"].content] == ["whole", "+"]
    state.apply(acp.SessionUpdateAgentMessage(message_id="m", content=None))
    assert state.agent_messages["m"].content == []


def test_tool_call_content_terminal_output_and_compaction_chunks_append_to_their_entity():
    state = acp.SessionState()
    diff = acp.ToolCallContentVariant(content=text("out"))
    state.apply(acp.SessionUpdateToolCallContentChunk(tool_call_id="t", content=diff))
    state.apply(acp.SessionUpdateTerminalOutputChunk(terminal_id="T", data="aGVs"))
    state.apply(acp.SessionUpdateTerminalOutputChunk(terminal_id="T", data="bG8="))
    state.apply(acp.SessionUpdateCompactionSummaryChunk(compaction_id="c", content=text("sum")))
    assert state.tool_calls["t"].content == [diff] and state.tool_calls["t"].status is acp.ToolCallStatus.PENDING
    assert state.terminals["T"].output.data == "aGVsbG8="  # b"hel" + b"lo"
    assert state.compactions["c"].status is acp.CompactionStatus.IN_PROGRESS
    assert state.compactions["c"].summary == [text("sum")]


def test_a_removed_plan_leaves_the_timeline():
    state = folded()
    state.apply(acp.SessionUpdatePlanRemoved(plan_id="p1"))
    assert state.plans == {} and "plan_update" not in [entry.session_update for entry in state]


def test_the_snapshot_is_json_that_restores_the_same_state():
    state = folded()
    state.apply_permission_request(permission("t1"))
    text_ = state.to_json()
    data = json.loads(text_)
    assert [u["sessionUpdate"] for u in data["updates"]] == [
        *["user_message", "agent_message", "agent_thought", "tool_call_update", "plan_update"],
        *["_vendor", "notice", "state_update", "usage_update"],  # the timeline, then the values
    ]
    restored = acp.SessionState.from_json(text_)
    assert restored == state and restored.to_json() == text_
    assert restored.other[0].to_dict() == {"sessionUpdate": "_vendor", "x": [1, 2]}
    assert restored.requests_for("tool_calls", "t1") == [permission("t1")]
    assert acp.SessionState.from_dict(data).tool_calls == state.tool_calls


def test_subscribers_get_one_change_per_update_with_what_changed():
    state = acp.SessionState()
    changes: list[Any] = []
    state.subscribe(changes.append)
    for update in stream():
        state.apply(note(update))
    assert len(changes) == len(stream())
    assert [(c.slot, c.key) for c in changes[:4]] == [
        ("user_messages", "u1"),
        ("state", None),
        ("agent_messages", "m1"),
        ("agent_thoughts", "th1"),
    ]
    created = [c for c in changes if c.slot == "tool_calls"]
    assert [c.created for c in created] == [True, False, False, False]
    assert created[1].before.status is acp.ToolCallStatus.PENDING and created[1].after.status == "in_progress"
    assert changes[11].slot == "other" and changes[11].after.session_update == "_vendor"


def permission(tool_call_id: str, **patch: Any) -> Any:
    option = acp.PermissionOption(option_id="yes", name="Yes", kind="allow_once")
    call = acp.ToolCallUpdate(tool_call_id=tool_call_id, **patch)
    subject = acp.RequestPermissionSubjectToolCall(tool_call=call)
    return acp.RequestPermissionRequest(session_id="s1", title="Run?", options=[option], subject=subject)


def test_a_permission_request_is_applied_to_its_tool_call_and_tied_to_it():
    state = folded()
    request = permission("t1", status="pending", title="Run the tests?")
    change = state.apply_permission_request(request)
    assert (change.slot, change.key, change.update) == ("tool_calls", "t1", request)
    assert state.tool_calls["t1"].title == "Run the tests?" and state.tool_calls["t1"].status == "pending"
    assert state.requests_for("tool_calls", "t1") == [request]
    first_seen = permission("t9")
    state.apply_permission_request(first_seen)  # a first-seen id creates the tool call
    assert isinstance(state.tool_calls["t9"], acp.SessionUpdateToolCallUpdate)
    assert state.tool_calls["t9"].status is acp.ToolCallStatus.PENDING
    assert state.resolve_request(request) and state.requests_for("tool_calls", "t1") == []


def test_a_command_permission_and_an_elicitation_link_to_what_they_name():
    state = folded()
    option = acp.PermissionOption(option_id="yes", name="Yes", kind="allow_once")
    command = acp.RequestPermissionSubjectCommand(command="ls", cwd="/w", terminal_id="T")
    ask = acp.RequestPermissionRequest(session_id="s1", title="ls?", options=[option], subject=command)
    assert (state.apply_permission_request(ask).slot, state.requests[-1].key) == ("terminals", "T")
    schema = acp.decode("ElicitationSchema", {"type": "object", "properties": {}})
    scope = acp.ElicitationSessionScope(session_id="s1", tool_call_id="t1")
    elicit = acp.CreateElicitationRequest(
        message="Which?", mode=acp.CreateElicitationRequestModeForm(requested_schema=schema, variant=scope)
    )
    change = state.apply_elicitation_request(elicit)
    assert (change.slot, change.key, change.before, change.after) == ("tool_calls", "t1", *[state.tool_calls["t1"]] * 2)
    assert state.requests_for("tool_calls", "t1") == [elicit]
    unscoped = acp.RequestPermissionRequest(session_id="s1", title="?", options=[option])
    assert state.apply_permission_request(unscoped).slot == "permission"


def test_every_variant_of_the_union_has_a_rule_or_is_the_fallback():
    types = MODULE.by_name()
    objects = [t for t in MODULE.types if isinstance(t, ObjectType)]
    context = session_context(MODULE, objects)
    assert context is not None and context.other == []
    union = types["SessionUpdate"]
    ruled = {rule.cls for rule in context.rules}
    variants = {v.type.name for v in union.variants} - {union.fallback}
    assert ruled >= variants
    kinds = {rule.cls: (rule.kind, rule.slot) for rule in context.rules}
    assert kinds["SessionUpdateToolCallUpdate"] == ("ENTITY", "tool_calls")  # an upsert with identity
    assert kinds["SessionUpdateToolCallContentChunk"] == ("ENTITY", "tool_calls")  # a chunk of it
    assert kinds["SessionUpdateSessionMessageChunk"] == ("ENTITY", "session_messages")  # by tag among messageIds
    assert kinds["SessionUpdateUsageUpdate"] == ("VALUE", "usage")  # an upsert without identity
    assert kinds["SessionUpdateStateUpdate"] == ("VALUE", "state")  # a `_update` without identity


def v1_chunk(kind: str, value: str, message_id: str | None = None) -> Any:
    ids = {} if message_id is None else {"messageId": message_id}
    return acp_v1.decode("SessionUpdate", {"sessionUpdate": kind, "content": {"type": "text", "text": value}, **ids})


def test_every_v1_variant_has_a_rule_or_is_the_fallback():
    objects = [t for t in MODULE_V1.types if isinstance(t, ObjectType)]
    context = session_context(MODULE_V1, objects)
    assert context is not None and context.other == []
    union = MODULE_V1.by_name()["SessionUpdate"]
    kinds = {rule.cls: (rule.kind, rule.slot) for rule in context.rules}
    assert set(kinds) >= {v.type.name for v in union.variants} - {union.fallback}
    assert kinds["SessionUpdateToolCall"] == ("ENTITY", "tool_calls")  # a report of the tool_call_update entity
    assert kinds["SessionUpdateToolCallUpdate"] == ("ENTITY", "tool_calls")
    assert kinds["SessionUpdatePlan"] == ("VALUE", "plan")  # explicit: the whole plan each time
    assert kinds["SessionUpdateAgentMessageChunk"] == ("JOIN", "agent_messages")  # no entity to append to
    assert kinds["SessionUpdateUserMessageChunk"] == ("JOIN", "user_messages")
    assert kinds["SessionUpdateAgentThoughtChunk"] == ("JOIN", "agent_thoughts")


def test_a_v1_tool_call_creates_or_replaces_its_entity_and_updates_merge_into_it():
    state = acp_v1.SessionState()
    state.apply(acp_v1.SessionUpdateToolCall(tool_call_id="t", title="Read", kind="read", raw_input={"p": 1}))
    state.apply(acp_v1.SessionUpdateToolCallUpdate(tool_call_id="t", status="in_progress"))
    call = state.tool_calls["t"]
    assert isinstance(call, acp_v1.SessionUpdateToolCallUpdate)
    assert (call.title, call.kind, call.status, call.raw_input) == ("Read", "read", "in_progress", {"p": 1})
    assert call.content == [] and call.locations == []  # the start values of what it left out
    state.apply(
        acp_v1.decode("SessionUpdate", {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Again", "x": 1})
    )
    call = state.tool_calls["t"]  # replaced: the update's status and raw input are gone
    assert (call.title, call.status, call.unknown_properties) == ("Again", "pending", {"x": 1})
    assert call.raw_input is acp_v1.UNDEFINED
    state.apply(acp_v1.SessionUpdateToolCallUpdate(tool_call_id="u", title="first seen by an update"))
    assert list(state.tool_calls) == ["t", "u"]


def test_v1_chunks_without_ids_join_the_current_message_of_their_kind():
    """A message goes on while no other entity starts: a thought, a tool call or the user's
    prompt (applied as user_message_chunks, as session/load replays it) ends it."""
    state = acp_v1.SessionState()
    stream = [
        v1_chunk("user_message_chunk", "Hi"),
        v1_chunk("agent_thought_chunk", "hm"),
        v1_chunk("agent_message_chunk", "Hel"),
        acp_v1.SessionUpdateToolCallUpdate(tool_call_id="t", status="completed"),  # patches t: t is not new
        v1_chunk("agent_message_chunk", "lo"),
        acp_v1.SessionUpdateToolCall(tool_call_id="u", title="Run"),
        v1_chunk("agent_message_chunk", "Done"),
        v1_chunk("user_message_chunk", "Again"),
        v1_chunk("agent_message_chunk", "Sure"),
        v1_chunk("agent_message_chunk", "Named", "m1"),
        v1_chunk("agent_message_chunk", " on"),  # no id: joins the last message, m1
    ]
    state.apply(acp_v1.SessionUpdateToolCall(tool_call_id="t", title="Earlier"))
    for update in stream:
        state.apply(acp_v1.SessionNotification(session_id="s1", update=update))
    texts = {key: [block.text for block in message.content] for key, message in state.agent_messages.items()}
    assert texts == {3: ["Hel", "lo"], 4: ["Done"], 6: ["Sure"], "m1": ["Named", " on"]}
    assert [[b.text for b in m.content] for m in state.user_messages.values()] == [["Hi"], ["Again"]]
    assert [type(entry).__name__ for entry in state] == [
        *["SessionUpdateToolCallUpdate", "ChunkedMessage", "ChunkedMessage", "ChunkedMessage"],
        *["SessionUpdateToolCallUpdate", "ChunkedMessage", "ChunkedMessage", "ChunkedMessage", "ChunkedMessage"],
    ]
    assert isinstance(state.agent_messages[3], acp_v1.ChunkedMessage)
    assert state.agent_messages[3].chunks[1].message_id is acp_v1.UNDEFINED  # kept as they came
    data = json.loads(state.to_json())
    assert [u["sessionUpdate"].removesuffix("_chunk") for u in data["updates"]] == [
        *["tool_call_update", "user_message", "agent_thought", "agent_message", "agent_message"],  # Hel, lo
        *["tool_call_update", "agent_message", "user_message", "agent_message", "agent_message", "agent_message"],
    ]  # each message as its chunks, in its place; t's update folded into it
    restored = acp_v1.SessionState.from_json(state.to_json())
    assert restored == state and restored.agent_messages == state.agent_messages


def test_a_v1_plan_replaces_the_one_before_and_notices_stay_in_the_timeline():
    state = acp_v1.SessionState()
    entry = acp_v1.PlanEntry(content="test", priority="high", status="pending")
    state.apply(acp_v1.SessionUpdatePlan(entries=[entry, entry]))
    state.apply(acp_v1.SessionUpdateNotice(severity="info", title="note"))
    state.apply(acp_v1.SessionUpdatePlan(entries=[entry]))
    assert state.plan == acp_v1.SessionUpdatePlan(entries=[entry])
    assert [e.session_update for e in state] == ["notice"]
    assert acp_v1.SessionState.from_json(state.to_json()) == state


TOOL_CALL_PATCH = st.fixed_dictionaries(
    {"toolCallId": st.just("t")},
    optional={
        "title": st.none() | st.text(max_size=5),
        "kind": st.none() | st.sampled_from(["read", "edit", "execute"]),
        "status": st.none() | st.sampled_from(["pending", "in_progress", "completed", "failed"]),
        "content": st.none()
        | st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.just("content"),
                    "content": st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=3)}),
                }
            ),
            max_size=2,
        ),
        "rawInput": st.none() | st.integers(),
        "_meta": st.none() | st.dictionaries(st.sampled_from("abc"), st.none() | st.integers(), max_size=2),
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(TOOL_CALL_PATCH, min_size=1, max_size=8))
def test_folding_tool_call_patches_equals_merging_them_in_turn(patches):
    state = acp.SessionState()
    stored = None
    for patch in patches:
        update = acp.decode("SessionUpdate", {"sessionUpdate": "tool_call_update", **patch})
        state.apply(update)
        stored = acp.merge(stored, update)
    assert state.tool_calls["t"] == stored
    assert acp.SessionState.from_json(state.to_json()).tool_calls["t"] == stored


class StateClient(acp.Client):
    """A client keeping a `SessionState` per session and answering permission requests."""

    def __init__(self) -> None:
        self.sessions: dict[str, Any] = {}
        self.changes: list[Any] = []

    def session(self, session_id: str) -> Any:
        if session_id not in self.sessions:
            self.sessions[session_id] = acp.SessionState(session_id)
            self.sessions[session_id].subscribe(self.changes.append)
        return self.sessions[session_id]

    async def session_update(self, params: Any) -> None:
        self.session(params.session_id).apply(params)

    async def session_request_permission(self, params: Any) -> Any:
        self.session(params.session_id).apply_permission_request(params)
        return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id="yes"))


class StreamingAgent(acp.Agent):
    """Streams `stream()` then asks permission for the tool call, in one prompt."""

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, params: Any) -> Any:
        return acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="s", version="1"))

    async def session_prompt(self, params: Any) -> Any:
        for update in stream():
            await self.client.session_update(note(update))
        await self.client.session_request_permission(permission("t1", status="in_progress"))
        return acp.PromptResponse(message_id="p")


async def test_a_client_folds_the_stream_of_a_real_connection():
    client = StateClient()
    async with connected(StreamingAgent(), client) as (_, conn):
        await conn.session_prompt(acp.PromptRequest(session_id="s1", prompt=[text("go")]))
        await asyncio.sleep(0)
    expected = folded()
    expected.apply_permission_request(permission("t1", status="in_progress"))
    state = client.sessions["s1"]
    assert state == expected
    assert state.tool_calls["t1"].status == "in_progress" and len(client.changes) == len(stream()) + 1


def test_v1_timeline_messages_carry_their_session_update_as_v2_entries_do():
    state = acp_v1.SessionState()
    for update in [
        v1_chunk("user_message_chunk", "Hi"),
        v1_chunk("agent_thought_chunk", "hm"),
        v1_chunk("agent_message_chunk", "Hel"),
        v1_chunk("agent_message_chunk", "lo"),
        acp_v1.SessionUpdateToolCall(tool_call_id="t", title="Run"),
    ]:
        state.apply(update)
    assert [entry.session_update for entry in state] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call_update",
    ]


def test_a_v1_message_is_a_value_a_later_chunk_leaves_the_earlier_one_as_it_was():
    state = acp_v1.SessionState()
    first = state.apply(v1_chunk("agent_message_chunk", "Hel"))
    second = state.apply(v1_chunk("agent_message_chunk", "lo"))
    third = state.apply(v1_chunk("agent_message_chunk", "!"))
    assert [b.text for b in first.after.content] == ["Hel"]
    assert [b.text for b in second.before.content] == ["Hel"] and len(second.after) == 2
    assert [b.text for b in third.after.content] == ["Hel", "lo", "!"]
    branch = second.after.appended(v1_chunk("agent_message_chunk", "?"))  # from an older value
    assert [b.text for b in branch.content] == ["Hel", "lo", "?"] and len(third.after) == 3


def test_a_v2_chunk_never_changes_a_list_the_user_gave():
    state = acp.SessionState()
    given_content = [text("a")]
    state.apply(acp.SessionUpdateAgentMessage(message_id="m", content=given_content))
    state.apply(acp.SessionUpdateAgentMessageChunk(message_id="m", content=text("b")))
    state.apply(acp.SessionUpdateAgentMessageChunk(message_id="m", content=text("c")))
    assert given_content == [text("a")]
    assert [b.text for b in state.agent_messages["m"].content] == ["a", "b", "c"]
    state.apply(acp.SessionUpdateAgentMessage(message_id="m", content=[text("x")]))  # replaces the content
    change = state.apply(acp.SessionUpdateAgentMessageChunk(message_id="m", content=text("y")))
    assert [b.text for b in change.after.content] == ["x", "y"]
    later = state.apply(acp.SessionUpdateAgentMessageChunk(message_id="m", content=text("z")))
    assert later.before is later.after  # appended in place, as SessionChange says
    assert acp.SessionState.from_json(state.to_json()) == state


def folding_times(state_type: Any, small: list[Any], large: list[Any]) -> tuple[float, float]:
    """Seconds per update to fold `small` and `large` into new states: the best of five runs
    each, the two sizes taking turns (so that a burst of load on the machine hits both)."""
    best = [float("inf"), float("inf")]
    for _ in range(5):
        for index, updates in enumerate((small, large)):
            state = state_type()
            start = time.perf_counter()
            for update in updates:
                state.apply(update)
            best[index] = min(best[index], (time.perf_counter() - start) / len(updates))
    return best[0], best[1]


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_message_of_many_chunks_folds_in_linear_time(version):
    """The time per chunk at 50,000 chunks of one message stays within 6 times the time at
    1,000 (quadratic folding took about 25 times as much per chunk at 50,000)."""

    def chunks(n: int) -> list[Any]:
        if version == "v1":
            return [v1_chunk("agent_message_chunk", f"w{i}") for i in range(n)]
        return [acp.SessionUpdateAgentMessageChunk(message_id="m", content=text(f"w{i}")) for i in range(n)]

    state_type = acp_v1.SessionState if version == "v1" else acp.SessionState
    small, large = folding_times(state_type, chunks(1_000), chunks(50_000))
    assert large < 6 * small, f"{small * 1e6:.1f} µs per chunk at 1,000, {large * 1e6:.1f} µs at 50,000"
