"""Proxy chains against the official TypeScript SDK, live: its v2 client (interop/ts_client.mjs)
as the client of `python -m acp_v2.conductor` running examples/proxy.py in front of
examples/echo_agent.py and in front of its echo agent (interop/ts_agent.mjs); and the example
client (examples/client.py) through the same chain to the TypeScript agent. The TypeScript SDK
2.4.0 has no conductor and no proxy of its own (only their types): the chain is ours, its ends
theirs. The client's whole scenario (two turns, permission requests allowed and withdrawn,
`$/cancel_request` and `session/cancel`, error answers) crosses the conductor and the proxy."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

from tests.test_interop import (  # noqa: F401 (node: the fixture)
    ENV,
    EXAMPLE_CLIENT_OUTPUT,
    EXAMPLES,
    INTEROP,
    ROOT,
    check_typescript_client_report,
    node,
)


def chain(*agent: str) -> list[str]:
    """The conductor's command: examples/proxy.py in front of `agent`."""
    proxy = shlex.join([sys.executable, str(EXAMPLES / "proxy.py")])
    return [sys.executable, "-m", "acp_v2.conductor", proxy, shlex.join(agent)]


def test_a_typescript_client_drives_the_example_agent_through_a_proxy(node):  # noqa: F811
    command = [node, str(INTEROP / "ts_client.mjs"), *chain(sys.executable, str(EXAMPLES / "echo_agent.py"))]
    result = subprocess.run(command, cwd=ROOT, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    check_typescript_client_report(json.loads(result.stdout))


def test_a_typescript_client_drives_a_typescript_agent_through_a_proxy(node):  # noqa: F811
    command = [node, str(INTEROP / "ts_client.mjs"), *chain(node, str(INTEROP / "ts_agent.mjs"))]
    result = subprocess.run(command, cwd=ROOT, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["init"]["info"]["name"] == "ts-echo-agent"
    report["init"]["info"]["name"] = "echo-agent"  # the rest of the scenario is the same, turn for turn
    check_typescript_client_report(report)


def test_the_example_client_drives_a_typescript_agent_through_a_proxy(node):  # noqa: F811
    command = [sys.executable, str(EXAMPLES / "client.py"), *chain(node, str(INTEROP / "ts_agent.mjs"))]
    result = subprocess.run(command, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXAMPLE_CLIENT_OUTPUT
