"""An ACP v2 client that prints the folded state of its session live: every `session/update`
and permission request is applied to a `SessionState`, and each change it reports
(`subscribe`) is printed as one line: `+` an entity or value that appeared, `~` one that
changed, `?` a request the agent asks. It sends one prompt and allows what the agent asks.

    PYTHONPATH=generated python examples/live_client.py [agent command ...]

The agent command defaults to examples/helpers_agent.py."""

from __future__ import annotations

import asyncio
import enum
import sys
from pathlib import Path
from typing import Any

import acp_v2 as acp

HELPERS_AGENT = [sys.executable, str(Path(__file__).with_name("helpers_agent.py"))]


def text(content: acp.MaybeUndefined[list[acp.ContentBlock]] | acp.ContentBlock) -> str:
    """The text of a message's content blocks."""
    blocks = content if isinstance(content, list) else [] if content is None or content is acp.UNDEFINED else [content]
    return "".join(block.text for block in blocks if isinstance(block, acp.ContentBlockText))


def plain(value: object) -> str:
    """An enum member's wire value, anything else as text."""
    return str(value.value) if isinstance(value, enum.Enum) else str(value)


def describe(value: Any) -> str:
    """One line for a folded entity, value or request of the session."""
    match value:
        case acp.SessionUpdateUserMessage() | acp.SessionUpdateAgentMessage() | acp.SessionUpdateAgentThought():
            return f"{value.session_update.replace('_', ' ')}: {text(value.content)!r}"
        case acp.SessionUpdateToolCallUpdate():
            status = "" if value.status is acp.UNDEFINED else f": {plain(value.status)}"
            return f"tool call {value.title!r}{status}"
        case acp.SessionUpdatePlanUpdate() if isinstance(value.plan, acp.PlanUpdateContentItems):
            return "plan: " + ", ".join(f"{entry.content} ({plain(entry.status)})" for entry in value.plan.entries)
        case acp.SessionUpdateStateUpdate() if isinstance(value.state, acp.StateUpdateIdle):
            return f"state: idle ({value.state.stop_reason.stop_reason})"
        case acp.SessionUpdateStateUpdate():
            return f"state: {value.state.state}"
        case acp.SessionUpdateSessionInfoUpdate():
            return f"session title: {value.title!r}"
        case acp.RequestPermissionRequest():
            return f"permission: {value.title} [{', '.join(option.name for option in value.options)}]"
    return repr(value)


class LiveClient(acp.Client):
    """Applies everything to `state`; prints each change; allows each permission request."""

    def __init__(self) -> None:
        self.state = acp.SessionState()
        self.state.subscribe(self.show)
        self.idle = asyncio.Event()

    def show(self, change: acp.SessionChange) -> None:
        if isinstance(change.update, acp.RequestPermissionRequest):
            print(f"? {describe(change.update)}")
        mark = "+" if change.created else "~"
        print(f"{mark} {describe(change.after)}")
        if isinstance(change.after, acp.SessionUpdateStateUpdate) and isinstance(
            change.after.state, acp.StateUpdateIdle
        ):
            self.idle.set()

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        self.state.apply(params)

    async def session_request_permission(self, params: acp.RequestPermissionRequest) -> acp.RequestPermissionResponse:
        self.state.apply_permission_request(params)
        option = next(o for o in params.options if o.kind == acp.PermissionOptionKind.ALLOW_ONCE)
        self.state.resolve_request(params)
        return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id=option.option_id))


async def main(agent: list[str]) -> None:
    client = LiveClient()
    async with acp.spawn_agent_process(client, *agent) as (conn, _process):
        info = acp.Implementation(name="live-client", version="1.0")
        await conn.initialize(acp.InitializeRequest(protocol_version=2, info=info))
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(Path.cwd().resolve())))
        prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text="count these five words please")]
        await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
        await client.idle.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or HELPERS_AGENT))
