"""The example agent (examples/echo_agent.py, v2 and v1) served over Streamable HTTP and WebSocket
for the interop tests (`http_app` under uvicorn): `python interop/http_echo_agent.py` listens on a
free port of 127.0.0.1, prints its `http://127.0.0.1:PORT/acp` on one line and serves until stdin
ends."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import acp_v2 as acp
from echo_agent import EchoAgent, EchoAgentV1


async def main() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    app = acp.http_app(EchoAgent, EchoAgentV1)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        await asyncio.sleep(0.01)
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/acp", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await serving


if __name__ == "__main__":
    asyncio.run(main())
