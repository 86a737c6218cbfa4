"""Correct builder usage: must pass `mypy --strict`."""

from pathlib import Path

import acp_v2
from acp_v2 import UNDEFINED

update: acp_v2.SubagentUpdate = acp_v2.SubagentUpdate.builder(session_id="child").title("Tests").state(None).build()
request = acp_v2.NewSessionRequest.builder(cwd=Path("/work")).mcp_servers([]).meta({"trace": 1}).build()
call: acp_v2.SessionUpdate = (
    acp_v2.SessionUpdateToolCallUpdate.builder(tool_call_id="t1").title(UNDEFINED).kind(acp_v2.ToolKind.READ).build()
)
