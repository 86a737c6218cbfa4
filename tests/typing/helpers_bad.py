"""Misuses of the agent helpers that mypy --strict must refuse (tests/package/test_helpers.py)."""

import acp_v2 as acp


async def turn(conn: acp.AgentSideConnection) -> None:
    session = conn.session("s1")
    await session.idle("finished")  # not a stop reason of the schema
    call = await session.tool_call("Read", kind=3)  # not a tool kind
    await session.say(3)  # text or a content block
    await session.ask_permission(call, allow=True)  # an option's name is a string
    raise acp.RequestError.session_not_found(42)  # a session id is a string
