"""Natural constructor calls: plain strings and numbers where the schema has ids, other
aliases and enums (as JSON and the TypeScript SDK have them). Must pass `mypy --strict`."""

import acp_v2 as acp

update = acp.ToolCallUpdate(tool_call_id="t1", kind="execute", status=acp.ToolCallStatus.PENDING)
session = acp.NewSessionResponse(session_id="s1")
prompt = acp.PromptRequest(session_id="s1", prompt=[acp.ContentBlockText(text="hi")])
init = acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="client", version="1"))
new = acp.NewSessionRequest(cwd="/work")
chunk = acp.SessionUpdateAgentMessageChunk(message_id="m1", content=acp.ContentBlockText(text="hello"))
notification = acp.UpdateSessionNotification(session_id=session.session_id, update=chunk)
ids: list[acp.ToolCallId] = ["t1", "t2"]
same: str = update.tool_call_id
form = acp.ElicitationSchema(type="object", properties={})  # a closed enum: its plain value too
capabilities: acp.ClientCapabilities = init.capabilities or acp.ClientCapabilities()  # Undefined is falsy
# `and` narrows the other way: its right side sees no Undefined (nor None), so `.auth` type-checks.
auth = init.capabilities and init.capabilities.auth
