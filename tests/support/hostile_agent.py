"""The agent that tests/package/test_hostile_peer.py attacks: acp_v2's `run_agent` over this
process's stdin/stdout, as a real agent runs. `HOSTILE_LIMITS` (JSON) holds `ConnectionLimits`
fields to override. It logs to stderr.

Requests: `session/new` answers `{"sessionId": "s1"}`; `session/prompt` with the text
`sleep S` sleeps S seconds first; `_test/echo` answers its params; `_test/big` answers a string
of `params["bytes"]` bytes. The notification `_test/sleep` sleeps `params["seconds"]`.
With `HOSTILE_LINGER` (seconds), the process ignores SIGTERM and lingers that long once its
stdin has ended: a child only SIGKILL stops in time."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

import acp_v2 as acp


class HostileTarget(acp.Agent):
    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=2, info=acp.Implementation(name="target", version="1"))

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        block = params.prompt[0]
        if isinstance(block, acp.ContentBlockText) and block.text.startswith("sleep "):
            await asyncio.sleep(float(block.text.split()[1]))
        return acp.PromptResponse(message_id="m1")

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_test/echo":
            return params
        if method == "_test/big":
            return "x" * params["bytes"]
        return await super().ext_method(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        if method == "_test/sleep":
            await asyncio.sleep(params["seconds"])


def main() -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    limits = acp.ConnectionLimits(**json.loads(os.environ.get("HOSTILE_LIMITS", "{}")))
    asyncio.run(acp.run_agent(HostileTarget(), options=acp.ConnectionOptions(limits=limits)))
    if "HOSTILE_LINGER" in os.environ:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(float(os.environ["HOSTILE_LINGER"]))


if __name__ == "__main__":
    main()
