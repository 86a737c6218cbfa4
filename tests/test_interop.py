"""acp_v2 against the official TypeScript SDK 2.4.0 (experimental v2), both over stdio.

Needs `node` and the SDK in interop/node_modules (`make interop` installs it); skipped otherwise."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from tests.helpers import ROOT, import_package

acp = import_package(ROOT / "generated", "acp_v2")
INTEROP = ROOT / "interop"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not (INTEROP / "node_modules" / "@agentclientprotocol" / "sdk").is_dir(),
    reason="interop needs node and the TypeScript SDK: run `make interop`",
)


def test_the_example_agent_serves_a_typescript_client():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    command = [NODE, str(INTEROP / "ts_client.mjs"), sys.executable, str(ROOT / "examples" / "echo_agent.py")]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["init"]["info"]["name"] == "echo-agent"
    assert report["prompt"] == {"messageId": "reply-1"}
    assert report["unknown"] == -32601
    assert [update["content"]["text"] for update in report["updates"]] == ["hello from typescript"]
    assert report["exitCode"] == 0


class PermissiveClient(acp.Client):
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, params: Any) -> None:
        self.updates.append(params.update)

    async def session_request_permission(self, params: Any) -> Any:
        return acp.RequestPermissionResponse(
            outcome=acp.RequestPermissionOutcomeSelected(option_id=params.options[0].option_id)
        )


def test_a_python_client_drives_a_typescript_agent():
    async def test() -> None:
        client = PermissiveClient()
        init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="py-client", version="1"))
        async with acp.spawn_agent_process(client, NODE, str(INTEROP / "ts_agent.mjs"), cwd=INTEROP) as (conn, process):
            assert (await conn.initialize(init)).info.name == "ts-echo-agent"
            session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT)))
            prompt = [acp.ContentBlockText(text="hello from python")]
            assert await conn.session_prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
            with pytest.raises(acp.RequestError) as caught:
                await conn.session_list(acp.ListSessionsRequest())
            assert caught.value.code == -32601
            with pytest.raises(acp.RequestError) as caught:
                await conn.ext_method("_py/unknown", {})
            assert caught.value.code == -32601
        assert process.returncode == 0
        assert [update.content.text for update in client.updates] == ["hello from python", "permission selected yes"]

    asyncio.run(test())
