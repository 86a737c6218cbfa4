"""A v2 agent that calls its client's ACP-transport MCP server `calc` the hostile ways, for
tests/test_interop_mcp.py: examples/mcp_agent.py's `McpAgent`, whose answer to the prompt
`hostile` is one JSON object of what each call got (`code`: the `MCPError`'s code, or `result`)
and what the agent still held afterwards (`routes`: the caller's notification routes, `waiting`:
the connection's requests without an answer; both must be 0):

- `unknownServer`: `tools/list` of a server id nobody declared (the provider: outer -33001);
- `hugeParams`: `add` with params longer than the connection reads (refused here, -32600);
- `neverAnswers`: the tool `wait`, which answers only when cancelled, with a 0.5 s read timeout
  (the mcp client's -32001; the `mcp/message` request is withdrawn with `$/cancel_request`);
- `afterwards`: `add 2 3` on the same mcp client (5: the connection goes on).

Over stdio, or with `--listen HOST:PORT` over Streamable HTTP and WebSocket as
`examples/mcp_agent.py --listen`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

import acp_v2 as acp
import mcp_agent
from mcp.shared.exceptions import MCPError


async def outcome(call: Any) -> dict[str, Any]:
    """What one MCP call got: its error's code, or its result's text."""
    try:
        result = await call
    except MCPError as error:
        return {"code": error.error.code}
    return {"result": " ".join(block.text for block in result.content if block.type == "text")}


class HostileMcpAgent(mcp_agent.McpAgent):
    async def answer(self, servers: dict[str, acp.McpServerAcp], text: str) -> str:
        if text != "hostile" or "calc" not in servers:
            return await super().answer(servers, text)
        huge = {"a": 1, "b": 2, "padding": "x" * self.client.options.limits.max_message_bytes}
        report: dict[str, Any] = {}
        async with self.mcp.client("no-such-server") as unknown:
            report["unknownServer"] = await outcome(unknown.list_tools())
        async with self.mcp.client(servers["calc"], read_timeout_seconds=30) as calc:
            report["hugeParams"] = await outcome(calc.call_tool("add", huge))  # measured: no hurry
            report["neverAnswers"] = await outcome(calc.call_tool("wait", {}, read_timeout_seconds=0.5))
            for _ in range(500):  # the withdrawn call's task ends a few event-loop steps later
                if not self.mcp._routes and not self.client._waiting:
                    break
                await asyncio.sleep(0.01)
            report["routes"], report["waiting"] = len(self.mcp._routes), len(self.client._waiting)
            report["afterwards"] = await outcome(calc.call_tool("add", {"a": 2, "b": 3}))
        return json.dumps(report)


def main() -> None:
    if sys.argv[1:2] == ["--listen"]:
        from echo_agent import address, listen

        host, port = address(sys.argv[2])
        asyncio.run(listen(host, port, app=acp.http_app(HostileMcpAgent)))
    else:
        asyncio.run(acp.run_agent(HostileMcpAgent()))


if __name__ == "__main__":
    main()
