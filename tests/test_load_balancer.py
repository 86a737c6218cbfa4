"""Scale-out behind a load balancer: examples/haproxy.cfg in front of two examples/echo_agent.py
processes (`--listen` on ephemeral ports of 127.0.0.1, `--instance a` and `--instance b`), and
full sessions driven through it over HTTP and WebSocket at once. Needs haproxy (`make test`
installs it with apt-get where apt-get is available: `make haproxy`); elsewhere it is skipped."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.helpers import ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
acp_v1 = import_package(ROOT / "generated", "acp_v1")
EXAMPLES = ROOT / "examples"
HAPROXY = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if os.access(p, os.X_OK)), None)
INIT = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="lb-client", version="1"))
CLIENTS_PER_TRANSPORT = 8

pytestmark = [
    pytest.mark.skipif(
        HAPROXY is None, reason="haproxy is not installed (`make haproxy` installs it where apt-get is available)"
    ),
    pytest.mark.async_timeout(120),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def echo_agent(instance: str, logs: Path, *options: str) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    """`echo_agent.py --listen 127.0.0.1:0 --instance NAME` (and `options`): its `host:port`, its
    log file and its process. Stopped with SIGINT on exit (unless it has ended), within 10 s."""
    log = logs / f"agent-{instance}.log"
    listen = ["--listen", "127.0.0.1:0", "--instance", instance, *options]
    command = [sys.executable, str(EXAMPLES / "echo_agent.py"), *listen]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    with (
        log.open("w") as stderr,
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True) as agent,
    ):
        assert agent.stdout is not None
        try:
            url = agent.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and url.endswith("/acp"), (url, log.read_text())
            yield url.removeprefix("http://").removesuffix("/acp"), log, agent
        finally:
            if agent.poll() is None:
                agent.send_signal(signal.SIGINT)
            try:
                agent.wait(10)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()


def stats(port: int) -> dict[str, dict[str, str]]:
    """haproxy's statistics (its CSV page): one row per frontend, server and backend, by
    `proxy/name`."""
    text = httpx.get(f"http://127.0.0.1:{port}/stats;csv", timeout=5).text
    rows = csv.DictReader(io.StringIO(text.removeprefix("# ")))
    return {f"{row['pxname']}/{row['svname']}": row for row in rows}


@contextlib.contextmanager
def haproxy(backends: dict[str, str], logs: Path) -> Iterator[tuple[str, int]]:
    """haproxy running examples/haproxy.cfg (and a statistics page, from a second file) in front
    of `backends` (instance → `host:port`), both servers seen up: its URL and statistics port."""
    assert HAPROXY is not None
    front, stats_port = free_port(), free_port()
    extra = logs / "stats.cfg"
    extra.write_text(f"frontend stats\n    bind 127.0.0.1:{stats_port}\n    stats enable\n    stats uri /stats\n")
    env = {**os.environ, "ACP_FRONTEND": f"127.0.0.1:{front}", "ACP_A": backends["a"], "ACP_B": backends["b"]}
    command = [HAPROXY, "-db", "-f", str(EXAMPLES / "haproxy.cfg"), "-f", str(extra)]
    with (
        (logs / "haproxy.log").open("w") as output,
        subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT) as proxy,
    ):
        try:
            deadline = time.monotonic() + 20
            while True:
                assert proxy.poll() is None, (logs / "haproxy.log").read_text()
                with contextlib.suppress(httpx.HTTPError):
                    if all(stats(stats_port)[f"agents/{name}"]["status"] == "UP" for name in backends):
                        break
                assert time.monotonic() < deadline, "haproxy never saw both agents up"
                time.sleep(0.1)
            yield f"http://127.0.0.1:{front}/acp", stats_port
        finally:
            proxy.terminate()
            try:
                proxy.wait(10)
            except subprocess.TimeoutExpired:
                proxy.kill()
                proxy.wait()


class AllowingClient(acp.Client):
    """Allows every permission request; keeps the text the agent says and the turn's end."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def session_update(self, params: Any) -> None:
        update = params.update.to_dict()
        if update["sessionUpdate"] == "agent_message_chunk":
            self.said.append(update["content"]["text"])
        if update["sessionUpdate"] == "state_update" and update["state"] == "idle" and not self.ended.done():
            self.ended.set_result(update["stopReason"])

    async def session_request_permission(self, params: Any) -> Any:
        return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id="allow"))


async def full_session(connect: Any, url: str, number: int) -> tuple[str, str]:
    """initialize, session/new, a prompt turn to its end, close: the turn's stop reason and text."""
    client = AllowingClient()
    async with connect(client, url) as conn:
        assert (await conn.initialize(INIT)).info.name == "echo-agent"
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
        text = f"client {number} says hello"
        await conn.session_prompt(
            acp.PromptRequest(session_id=session.session_id, prompt=[acp.ContentBlockText(text=text)])
        )
        stop_reason = await client.ended
    return stop_reason, "".join(client.said)


async def test_sessions_over_http_and_websocket_through_haproxy_reach_one_process_each(tmp_path):
    """8 HTTP and 8 WebSocket clients at once, each a whole session: every one completes, haproxy
    answers no 4xx or 5xx, both processes get connections, and neither sees a request for a
    connection of the other (the misrouting warning). The affinity cookie alone routes too: an
    `initialize` carrying `acp_instance=b` is answered by b."""
    with contextlib.ExitStack() as stack:
        a, a_log, _ = stack.enter_context(echo_agent("a", tmp_path))
        b, b_log, _ = stack.enter_context(echo_agent("b", tmp_path))
        url, stats_port = stack.enter_context(haproxy({"a": a, "b": b}, tmp_path))
        ws_url = url.replace("http", "ws", 1)
        sessions = [full_session(acp.connect_http, url, n) for n in range(CLIENTS_PER_TRANSPORT)]
        sessions += [full_session(acp.connect_websocket, ws_url, n) for n in range(CLIENTS_PER_TRANSPORT)]
        async with asyncio.timeout(60):
            outcomes = await asyncio.gather(*sessions)
        expected = [("end_turn", f"client {n} says hello") for n in range(CLIENTS_PER_TRANSPORT)]
        assert outcomes == expected * 2

        message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT.to_dict()}
        async with httpx.AsyncClient(timeout=10) as http:
            for instance in ("b", "a", "b"):
                answer = await http.post(url, json=message, headers={"Cookie": f"acp_instance={instance}"})
                connection_id = answer.headers["acp-connection-id"]
                assert answer.status_code == 200 and connection_id.startswith(f"{instance}.")
                cookie = f"acp_instance={instance}; Path=/; HttpOnly; SameSite=Lax"
                assert answer.headers.get_list("set-cookie") == [cookie]  # the application's: haproxy adds none
                assert (await http.delete(url, headers={"Acp-Connection-Id": connection_id})).status_code == 202

        seen = stats(stats_port)
    for proxy in ("acp/FRONTEND", "agents/BACKEND"):
        statuses = {f"{n}xx": int(seen[proxy][f"hrsp_{n}xx"] or 0) for n in range(1, 6)}
        assert statuses["4xx"] == statuses["5xx"] == 0, (proxy, statuses)
        assert statuses["1xx"] == CLIENTS_PER_TRANSPORT, (proxy, statuses)  # the WebSocket upgrades
    sessions_per_server = {name: int(seen[f"agents/{name}"]["stot"]) for name in ("a", "b")}
    assert all(count > 0 for count in sessions_per_server.values()), sessions_per_server
    for log in (a_log, b_log):
        assert "reached instance" not in log.read_text(), log.read_text()


class WaitingClientV1(acp_v1.Client):
    """acp_v1's client: answers a session's permission request "allow" once the test releases
    that session; keeps what the agent says in each session."""

    def __init__(self) -> None:
        self.asked: asyncio.Queue[str] = asyncio.Queue()
        self.released: dict[str, asyncio.Event] = {}
        self.said: dict[str, list[str]] = {}

    async def session_update(self, params: Any) -> None:
        update = params.update.to_dict()
        if update["sessionUpdate"] == "agent_message_chunk":
            self.said.setdefault(params.session_id, []).append(update["content"]["text"])

    async def session_request_permission(self, params: Any) -> Any:
        release = self.released.setdefault(params.session_id, asyncio.Event())
        self.asked.put_nowait(params.session_id)
        await release.wait()
        return acp_v1.RequestPermissionResponse(outcome=acp_v1.RequestPermissionOutcomeSelected(option_id="allow"))


async def test_a_draining_process_behind_haproxy_finishes_a_turn_and_gets_no_new_connection(tmp_path):
    """SIGTERM to process a while two v1 turns of its connection wait for the client's
    permission: its health check fails and haproxy takes it out (DOWN), new connections go to b,
    and the client's answer, posted after that, still reaches a (`force-persist`), whose turn
    ends `end_turn`; a exits 0 once it has drained. (The second turn keeps the connection
    pending while the first one's answer travels: a drained connection ends as soon as none of
    its requests waits, and its client may see its main stream end before that answer.)"""
    with contextlib.ExitStack() as stack:
        a, _, a_process = stack.enter_context(echo_agent("a", tmp_path, "--drain", "30"))
        b, _, _ = stack.enter_context(echo_agent("b", tmp_path))
        url, stats_port = stack.enter_context(haproxy({"a": a, "b": b}, tmp_path))
        client, cookies = WaitingClientV1(), acp.AffinityCookies()
        cookies.store(["acp_instance=a"])  # haproxy sends this connection's initialize to a
        async with asyncio.timeout(60), acp_v1.connect_http(client, url, cookies=cookies) as conn:
            await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
            turns = {}
            for text in ("still here", "kept pending"):
                session = await conn.session_new(acp_v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
                prompt = acp_v1.PromptRequest(
                    session_id=session.session_id, prompt=[acp_v1.ContentBlockText(text=text)]
                )
                turns[session.session_id] = asyncio.create_task(conn.session_prompt(prompt))
                assert await client.asked.get() == session.session_id
            first, second = turns
            a_process.send_signal(signal.SIGTERM)
            while not stats(stats_port)["agents/a"]["status"].startswith("DOWN"):
                await asyncio.sleep(0.1)
            message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT.to_dict()}
            async with httpx.AsyncClient(timeout=10) as http:
                for _ in range(2):
                    answer = await http.post(url, json=message)
                    assert answer.status_code == 200 and answer.headers["acp-connection-id"].startswith("b.")
            client.released[first].set()
            assert (await turns[first]).stop_reason == "end_turn"
            assert "".join(client.said[first]) == "still here"
            client.released[second].set()
            with contextlib.suppress(acp_v1.ConnectionClosed):
                await turns[second]
        assert a_process.wait(30) == 0
