"""Two connected transports in one process, no sockets: what a message written to one end is
read, as the same bytes, from the other. The connections on either end encode and decode as
over a pipe; the limits hold as they do over one (`ConnectionLimits`)."""

from __future__ import annotations

import asyncio
import collections

from ._connection import DEFAULT_LIMITS, HEAD_BYTES, ConnectionClosed, ConnectionLimits, MessageTooLarge, request_id_of


class _Channel:
    """One direction: the messages written and not yet read, and how many bytes they hold."""

    def __init__(self) -> None:
        self.messages: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.ended = False  # the writer closed it: the reader sees the end once it is empty
        self.abandoned = False  # the reader closed its end: writes fail
        self.changed = asyncio.Condition()

    async def notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()


class MemoryTransport:
    """One end of `memory_transports()`. `send` waits while the other end holds more than
    `limits.max_buffered_bytes` unread, and fails the transport (`ConnectionClosed`) when it
    reads none of it for `limits.max_output_stall` seconds; `receive` skips a message over
    `limits.max_message_bytes` (`MessageTooLarge`); `close` ends the outgoing direction (the other
    end reads what is left, then the end) and drops the incoming one (its writes fail)."""

    def __init__(self, incoming: _Channel, outgoing: _Channel, limits: ConnectionLimits) -> None:
        self._incoming = incoming
        self._outgoing = outgoing
        self._limits = limits
        self._lock = asyncio.Lock()

    async def receive(self) -> bytes | None:
        channel = self._incoming
        async with channel.changed:
            await channel.changed.wait_for(lambda: bool(channel.messages) or channel.ended)
            if not channel.messages:
                return None
            message = channel.messages.popleft()
            channel.buffered -= len(message)
            channel.changed.notify_all()
        if len(message) > self._limits.max_message_bytes:
            too_long = f"a message longer than {self._limits.max_message_bytes} bytes"
            raise MessageTooLarge(too_long, request_id_of(message[:HEAD_BYTES]))
        return message

    async def send(self, message: bytes) -> None:
        channel = self._outgoing
        async with self._lock, channel.changed:
            if channel.abandoned or channel.ended:
                raise ConnectionResetError("the other end of the in-memory connection is closed")
            channel.messages.append(bytes(message))
            channel.buffered += len(message)
            channel.changed.notify_all()
            while channel.buffered > self._limits.max_buffered_bytes:
                before = channel.buffered
                try:
                    await asyncio.wait_for(channel.changed.wait(), self._limits.max_output_stall)
                except TimeoutError:
                    if channel.buffered < before:
                        continue  # a slow reader, but a reader
                    self._abort(drop_output=True)
                    channel.changed.notify_all()
                    stall = self._limits.max_output_stall
                    raise ConnectionClosed(
                        f"the peer read none of the output for {stall} s: the connection is closed"
                    ) from None
            if channel.abandoned:
                raise ConnectionResetError("the other end of the in-memory connection closed before reading")

    async def close(self) -> None:
        self._abort(drop_output=False)
        await self._incoming.notify()
        await self._outgoing.notify()

    def _abort(self, *, drop_output: bool) -> None:
        """End the outgoing direction (dropping what the other end has not read, with
        `drop_output`) and drop the incoming one."""
        self._outgoing.ended = True
        self._incoming.abandoned = True
        self._incoming.messages.clear()
        self._incoming.buffered = 0
        if drop_output:
            self._outgoing.messages.clear()
            self._outgoing.buffered = 0


def memory_transports(
    limits: ConnectionLimits = DEFAULT_LIMITS, other_limits: ConnectionLimits | None = None
) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected in-memory transports: the first end's `limits`, the second's `other_limits`
    (the same when not given). Create them in the event loop that uses them."""
    forth, back = _Channel(), _Channel()
    return MemoryTransport(back, forth, limits), MemoryTransport(forth, back, other_limits or limits)
