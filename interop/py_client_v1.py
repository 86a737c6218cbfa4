"""A v1 client written with the official Python SDK (`agent-client-protocol` 0.12.1, v1 only):
starts the agent given on the command line, runs a turn whose permission request it allows, then a
turn it cancels with `session/cancel` while the permission request is pending, and prints what it
saw as one JSON line. Run with the SDK on PYTHONPATH (`make test` and `make interop` install it into .cache/peers).
`py_client_v1.py --url http://HOST:PORT/acp` (or `ws://`) connects to a running agent with the SDK's
`acp.http.create_http_stream` (given an HTTP/1.1 httpx client: its default asks for HTTP/2, which needs
`h2`) or `acp.ws.create_websocket_stream` instead."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from acp import connect_to_agent, spawn_agent_process, text_block
from acp.schema import AllowedOutcome, ClientCapabilities, DeniedOutcome, Implementation, RequestPermissionResponse


class Client:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.asked: list[list[str]] = []
        self.hold = False
        self.pending = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        pass

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        self.asked.append([option.option_id for option in options])
        if self.hold:  # the second turn: wait to be cancelled
            self.pending.set()
            await asyncio.sleep(30)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id="allow", outcome="selected"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))


@contextlib.asynccontextmanager
async def connected(client: Client, argv: list[str]) -> AsyncIterator[Any]:
    if argv[:1] != ["--url"]:
        async with spawn_agent_process(client, *argv, env=dict(os.environ)) as (conn, _process):
            yield conn
        return
    if argv[1].startswith("ws"):
        from acp.ws import create_websocket_stream

        transport = await create_websocket_stream(argv[1])
    else:
        import httpx
        from acp.http import create_http_stream

        transport = create_http_stream(argv[1], client=httpx.AsyncClient(timeout=httpx.Timeout(None)))
    conn = connect_to_agent(client, transport)
    try:
        yield conn
    finally:
        await conn.close()


async def main() -> None:
    client = Client()
    async with connected(client, sys.argv[1:]) as conn:
        init = await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="py", version="1"),
        )
        session = await conn.new_session(cwd="/tmp", mcp_servers=[])
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("hello from python")])
        first_updates, client.updates = client.updates, []
        client.hold = True
        second = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("again")]))
        await asyncio.wait_for(client.pending.wait(), 10)
        await conn.cancel(session_id=session.session_id)
        stopped = await asyncio.wait_for(second, 10)
        report = {
            "init": init.model_dump(by_alias=True, exclude_none=True),
            "firstStop": first.stop_reason,
            "firstUpdates": first_updates,
            "secondStop": stopped.stop_reason,
            "asked": client.asked,
        }
    print(json.dumps(report))


asyncio.run(asyncio.wait_for(main(), 30))
