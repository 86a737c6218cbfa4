"""The example agent (examples/echo_agent.py, v2 and v1) served over WebSocket for the interop
tests: `python interop/ws_echo_agent.py` listens on a free port of 127.0.0.1, prints its
`ws://127.0.0.1:PORT/acp` on one line and serves until stdin ends."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import acp_v2 as acp
from echo_agent import EchoAgent, EchoAgentV1


async def main() -> None:
    async with acp.serve_websocket(EchoAgent, EchoAgentV1, host="127.0.0.1", port=0) as server:
        print(server.url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(main())
