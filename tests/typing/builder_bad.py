"""Wrong builder usage: `mcpServers` is not nullable, so mypy --strict must reject the call."""

import acp_v2

request = acp_v2.NewSessionRequest.builder(cwd="/work").mcp_servers(None).build()
