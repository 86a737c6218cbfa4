"""An ACP v2 client: starts examples/echo_agent.py, runs one prompt turn, prints the reply.

Run it with `generated/` on PYTHONPATH (or `acp_v2` copied next to it)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import acp_v2 as acp

AGENT = Path(__file__).with_name("echo_agent.py")


class ConsoleClient(acp.Client):
    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        update = params.update
        if isinstance(update, acp.SessionUpdateAgentMessageChunk) and isinstance(update.content, acp.ContentBlockText):
            print(f"agent: {update.content.text}")

    async def session_request_permission(self, params: acp.RequestPermissionRequest) -> acp.RequestPermissionResponse:
        print(f"permission asked: {params.title}; allowing {params.options[0].name}")
        return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id=params.options[0].option_id))


async def main(text: str) -> None:
    async with acp.spawn_agent_process(ConsoleClient(), sys.executable, str(AGENT)) as (conn, _process):
        info = acp.Implementation(name="console-client", version="1.0")
        init = await conn.initialize(acp.InitializeRequest(protocol_version=acp.ProtocolVersion(2), info=info))
        print(f"connected to {init.info.name} {init.info.version}")
        session = await conn.session_new(acp.NewSessionRequest(cwd=acp.AbsolutePath(str(Path.cwd().resolve()))))
        prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text=text)]
        await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "hello"))
