"""Correct usage of builders and tri-state fields: must pass `mypy --strict`."""

from pathlib import Path
from typing import assert_type

import acp_v2
from acp_v2 import UNDEFINED

update: acp_v2.SubagentUpdate = acp_v2.SubagentUpdate.builder(session_id="child").title("Tests").state(None).build()
request = acp_v2.NewSessionRequest.builder(cwd=Path("/work")).mcp_servers([]).meta({"trace": 1}).build()
call: acp_v2.SessionUpdate = (
    acp_v2.SessionUpdateToolCallUpdate.builder(tool_call_id="t1").title(UNDEFINED).kind(acp_v2.ToolKind.READ).build()
)


def title_of(update: acp_v2.ToolCallUpdate) -> str:
    """`is not UNDEFINED` and `is not None` narrow a tri-state field to its value type."""
    title = update.title
    if title is not UNDEFINED and title is not None:
        assert_type(title, str)
        return title
    return ""
