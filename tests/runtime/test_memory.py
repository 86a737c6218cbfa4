"""generator/runtime/_memory.py: two connected in-memory transports, their limits and their close."""

from __future__ import annotations

import asyncio

import pytest

from generator.runtime import _connection as conn
from generator.runtime._memory import memory_transports


async def test_messages_cross_in_order_as_the_same_bytes_and_close_ends_the_other_side_after_them():
    left, right = memory_transports()
    for message in (b'{"a":1}', b'{"b":2}', bytearray(b'{"c":3}')):
        await left.send(message)
    await left.close()
    received = [await right.receive() for _ in range(4)]
    assert received == [b'{"a":1}', b'{"b":2}', b'{"c":3}', None]
    assert all(type(message) is bytes for message in received[:3])
    assert await right.receive() is None  # the end stays the end


async def test_after_a_close_neither_end_can_write_and_the_closed_end_reads_nothing():
    left, right = memory_transports()
    await right.send(b"unread")
    await left.close()
    with pytest.raises(ConnectionResetError):
        await left.send(b"x")
    with pytest.raises(ConnectionResetError):
        await right.send(b"y")  # nobody reads it any more
    assert await right.receive() is None


async def test_a_writer_waits_while_the_reader_holds_more_than_max_buffered_bytes():
    left, right = memory_transports(conn.ConnectionLimits(max_buffered_bytes=10))
    await left.send(b"12345678")  # 8 bytes held: under the mark, returns at once
    second = asyncio.create_task(left.send(b"abcdefgh"))  # 16 held: waits
    await asyncio.sleep(0.05)
    assert not second.done()
    third = asyncio.create_task(left.send(b"!"))  # queued behind the waiting writer, not buffered
    await asyncio.sleep(0.01)
    assert right._incoming.buffered == 16
    assert await right.receive() == b"12345678"
    await asyncio.wait_for(second, 5)
    await asyncio.wait_for(third, 5)
    assert [await right.receive(), await right.receive()] == [b"abcdefgh", b"!"]


async def test_a_reader_that_reads_nothing_for_the_output_stall_fails_the_writer_and_the_connection():
    left, right = memory_transports(conn.ConnectionLimits(max_buffered_bytes=4, max_output_stall=0.1))
    with pytest.raises(conn.ConnectionClosed, match=r"read none of the output for 0.1 s"):
        await left.send(b"more than four bytes")
    assert await right.receive() is None  # aborted: what was unread is dropped


async def test_a_slow_reader_is_waited_for_beyond_the_output_stall():
    left, right = memory_transports(conn.ConnectionLimits(max_buffered_bytes=1, max_output_stall=0.2))

    async def slowly() -> list[bytes | None]:
        received = []
        for _ in range(3):
            await asyncio.sleep(0.1)
            received.append(await right.receive())
        return received

    reader = asyncio.create_task(slowly())
    for message in (b"aa", b"bb", b"cc"):
        await left.send(message)  # each waits ~0.1 s, under the stall, for the reader
    assert await asyncio.wait_for(reader, 5) == [b"aa", b"bb", b"cc"]


async def test_a_writer_blocked_when_the_reader_closes_fails_with_a_connection_error():
    left, right = memory_transports(conn.ConnectionLimits(max_buffered_bytes=1))
    writer = asyncio.create_task(left.send(b"blocked"))
    await asyncio.sleep(0.01)
    await right.close()
    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(writer, 5)


async def test_a_message_over_the_readers_max_message_bytes_is_skipped_and_the_next_read():
    left, right = memory_transports(conn.ConnectionLimits(), conn.ConnectionLimits(max_message_bytes=5))
    await left.send(b"123456")
    await left.send(b"12345")
    with pytest.raises(conn.MessageTooLarge, match="longer than 5 bytes"):
        await right.receive()
    assert await right.receive() == b"12345"
    await right.send(b"123456")  # the other direction has the first end's limits
    assert await left.receive() == b"123456"
