"""Connection latency: how long a client takes to open an ACP connection, `initialize` it and close
it, against `examples/echo_agent.py --listen` (a child process) on 127.0.0.1:

- HTTP: `acp_v2.connect_http` as it is, every transport's httpx client given one TLS context
  made once (`_http_client.default_ssl_context`);
- HTTP, a context each: the same with that cache emptied before each connection, as when each
  httpx client made its own (httpx loads its CA bundle for every client, even to `http://`);
- WebSocket: `acp_v2.connect_websocket`.

Every pass opens `CONNECTIONS` of each in turn (interleaved); the table gives, per case, the
median over the passes of each pass's median, the spread of those medians (min-max), and the
p10-p90 of all connections.

    .venv/bin/python bench/http_latency.py     (make bench-rpc runs it)
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))

import acp_v2 as acp  # noqa: E402
from acp_runtime import _http_client  # noqa: E402

CONNECTIONS = int(os.environ.get("CONNECTIONS", "40"))
PASSES = int(os.environ.get("PASSES", "5"))
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="bench", version="1"))


async def http(url: str) -> None:
    async with acp.connect_http(acp.Client(), url) as conn:
        await conn.initialize(INIT)


async def http_own_context(url: str) -> None:
    _http_client.default_ssl_context.cache_clear()
    await http(url)


async def websocket(url: str) -> None:
    async with acp.connect_websocket(acp.Client(), url.replace("http", "ws", 1)) as conn:
        await conn.initialize(INIT)


CASES: dict[str, Callable[[str], Awaitable[None]]] = {
    "HTTP": http,
    "HTTP, a TLS context each": http_own_context,
    "WebSocket": websocket,
}


async def timed(case: Callable[[str], Awaitable[None]], url: str) -> list[float]:
    times = []
    for _ in range(CONNECTIONS):
        start = time.perf_counter()
        await case(url)
        times.append((time.perf_counter() - start) * 1000)
    return times


async def run(url: str) -> dict[str, list[list[float]]]:
    for case in CASES.values():  # warm up: imports, the server's first connections
        await timed(case, url)
    results: dict[str, list[list[float]]] = {name: [] for name in CASES}
    for _ in range(PASSES):
        for name, case in CASES.items():
            results[name].append(await timed(case, url))
    return results


def main() -> None:
    command = [sys.executable, str(ROOT / "examples" / "echo_agent.py"), "--listen", "127.0.0.1:0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as server:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        try:
            results = asyncio.run(run(url))
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(15)
    print(f"connect, initialize and close, ms ({PASSES} passes of {CONNECTIONS} connections each, interleaved)")
    print(f"{'':26} {'median':>8} {'medians min-max':>18} {'p10-p90':>14}")
    for name, passes in results.items():
        medians = [statistics.median(times) for times in passes]
        every = sorted(t for times in passes for t in times)
        deciles = statistics.quantiles(every, n=10)
        spread = f"{min(medians):.1f}-{max(medians):.1f}"
        print(f"{name:26} {statistics.median(medians):8.1f} {spread:>18} {deciles[0]:6.1f}-{deciles[-1]:.1f}")


if __name__ == "__main__":
    main()
