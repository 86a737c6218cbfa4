"""How a proxy runs (`proxy.serve_proxy`, `proxy.run_proxy`): its one connection to the conductor
split by a `ProxyLink` (`_proxy`), the package's agent-side connection serving its predecessor
over the link's upstream and its client-side connection serving its successor over the
downstream, each forwarding class given the other's connection.

Written against the names of its package's `connection` module, which generation checks the
package defines; `proxy` re-exports both functions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._connection import DEFAULT_OPTIONS, ConnectionOptions, StreamTransport, Transport, stdio_streams
from ._proxy import ProxyLink
from .connection import AgentSideConnection, ClientSideConnection

if TYPE_CHECKING:
    from .proxy import ForwardingAgent, ForwardingClient


async def serve_proxy(
    agent: ForwardingAgent,
    transport: Transport,
    client: ForwardingClient | None = None,
    *,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> None:
    """Serve a proxy over `transport`, its connection to the conductor, until the conductor ends
    it (or the task running it is cancelled): `agent` serves the predecessor, `client` (a plain
    `ForwardingClient` when not given) the successor. Both connections take `options`; both are
    closed on return."""
    from .proxy import ForwardingClient  # proxy.py imports this module

    options = ConnectionOptions.checked(options)
    link = ProxyLink(transport, limits=options.limits)
    client = ForwardingClient() if client is None else client
    successor = ClientSideConnection(client, link.downstream, options=options)
    agent.successor = successor
    predecessor = AgentSideConnection(agent, link.upstream, options=options)
    client.predecessor = predecessor
    try:
        await predecessor.wait_closed()
    finally:
        await predecessor.close()
        await successor.close()


async def run_proxy(
    agent: ForwardingAgent,
    client: ForwardingClient | None = None,
    *,
    options: ConnectionOptions = DEFAULT_OPTIONS,
) -> None:
    """Serve a proxy over stdin/stdout, as a conductor starts it, until stdin ends (`serve_proxy`).
    stdout carries only protocol lines: log to stderr, never print."""
    reader, writer = await stdio_streams()
    transport = StreamTransport(reader, writer, limits=options.limits, close_timeout=options.close_timeout)
    await serve_proxy(agent, transport, client, options=options)
