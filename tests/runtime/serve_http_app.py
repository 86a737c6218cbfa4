"""`AcpHttpApp` under uvicorn on 127.0.0.1, for the tests that measure a server process from
outside (its resident memory, its sockets): `python -m tests.runtime.serve_http_app SETTINGS`,
SETTINGS a JSON object of `ServerSettings` fields. Its agent answers `initialize`, then reads
until its connection ends. It prints its URL once it listens, and serves until SIGTERM."""

from __future__ import annotations

import asyncio
import json
import socket
import sys

import uvicorn

from generator.runtime import _http_server as hs
from generator.runtime._connection import Transport


async def agent(transport: Transport) -> None:
    message = json.loads(await transport.receive() or b"{}")
    answer = {"jsonrpc": "2.0", "id": message.get("id"), "result": {}}
    await transport.send(json.dumps(answer).encode())
    while await transport.receive() is not None:
        pass


def main() -> None:
    settings = hs.ServerSettings(**json.loads(sys.argv[1]))
    app = hs.AcpHttpApp(agent, server_settings=settings)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/acp", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on", timeout_graceful_shutdown=1))
    asyncio.run(server.serve(sockets=[listener]))


if __name__ == "__main__":
    main()
