"""POSTs over kept-alive HTTP/1.1 connections on asyncio streams, for the Streamable HTTP client's
messages: what httpx does for them, without its cost per request (its connection pool scans
every connection on every request: ~1 ms of CPU per POST with 64 in flight, measured here).
Standard library only. The responses are read whole (`Content-Length`, chunked, or up to the
end of the connection); a connection is reused unless the response says `Connection: close`."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterable
from urllib.parse import urlsplit

MAX_HEAD_BYTES = 64 * 1024
"""A response's status line and headers at most."""


class Http11Error(OSError):
    """The server broke the HTTP/1.1 exchange (closed early, sent what is not HTTP/1.1)."""


class Response:
    """A response: its status, headers (names lowercased, repeated ones in order) and body."""

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header_values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]


_Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class Poster:
    """POSTs to one URL (`http://` or `https://`) over a pool of at most `max_connections`
    kept-alive connections; a POST past that waits for one to be free."""

    def __init__(self, url: str, *, max_connections: int = 100, max_body_bytes: int) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http:// or https:// URL, found {url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        default_port = self.port == (443 if parts.scheme == "https" else 80)
        self.authority = parts.netloc.rpartition("@")[2] if not default_port else self.host
        self.tls = ssl.create_default_context() if parts.scheme == "https" else None
        self.max_body_bytes = max_body_bytes
        self._idle: list[_Stream] = []
        self._slots = asyncio.Semaphore(max_connections)
        self._open: set[asyncio.StreamWriter] = set()

    async def post(self, body: bytes, headers: Iterable[tuple[str, str]]) -> Response:
        """POST `body` with `headers` (beside Host and Content-Length) and read the response."""
        head = [f"POST {self.target} HTTP/1.1", f"Host: {self.authority}", f"Content-Length: {len(body)}"]
        for name, value in headers:
            if any(c in name or c in value for c in "\r\n\0"):
                raise ValueError(f"a header may not hold a line break: {name!r}: {value!r}")
            head.append(f"{name}: {value}")
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        async with self._slots:
            while self._idle:  # a kept-alive connection the server has not closed meanwhile
                reader, writer = self._idle.pop()
                if not reader.at_eof() and not writer.is_closing():
                    break
                self._discard(writer)
            else:
                reader, writer = await self._connect()
            try:
                writer.write(request)
                response, reusable = await self._read(reader)
            except (asyncio.IncompleteReadError, ValueError) as error:
                self._discard(writer)
                raise Http11Error(f"a response cut short or malformed: {error}") from error
            except BaseException:
                self._discard(writer)
                raise
            if reusable:
                self._idle.append((reader, writer))
            else:
                self._discard(writer)
            return response

    async def close(self) -> None:
        for writer in list(self._open):
            self._discard(writer)
        self._idle.clear()

    async def _connect(self) -> _Stream:
        reader, writer = await asyncio.open_connection(
            self.host, self.port, ssl=self.tls, limit=MAX_HEAD_BYTES, server_hostname=self.host if self.tls else None
        )
        self._open.add(writer)
        return reader, writer

    def _discard(self, writer: asyncio.StreamWriter) -> None:
        self._open.discard(writer)
        with contextlib.suppress(Exception):
            writer.close()

    async def _read(self, reader: asyncio.StreamReader) -> tuple[Response, bool]:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            raise Http11Error("the server closed the connection without a response") from error
        except asyncio.LimitOverrunError as error:
            raise Http11Error(f"a response head longer than {MAX_HEAD_BYTES} bytes") from error
        status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        if not version.startswith("HTTP/1.") or not rest[:3].isdigit():
            raise Http11Error(f"not an HTTP/1.1 status line: {status_line[:100]!r}")
        headers = []
        for line in lines:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
        fields = dict(headers)
        reusable = version == "HTTP/1.1" and fields.get("connection", "").lower() != "close"
        if "chunked" in fields.get("transfer-encoding", "").lower():
            body = await self._chunked(reader)
        elif "content-length" in fields:
            length = int(fields["content-length"]) if fields["content-length"].isdigit() else -1
            if not 0 <= length <= self.max_body_bytes:
                raise Http11Error(f"a response body of {fields['content-length']!r} bytes")
            body = await reader.readexactly(length)
        else:
            body, reusable = await reader.read(self.max_body_bytes), False
        return Response(int(rest[:3]), headers, body), reusable

    async def _chunked(self, reader: asyncio.StreamReader) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            line = await reader.readuntil(b"\r\n")
            length = int(line.split(b";", 1)[0].strip() or b"x", 16)
            if length == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                    pass
                return b"".join(chunks)
            size += length
            if size > self.max_body_bytes:
                raise Http11Error(f"a chunked response body over {self.max_body_bytes} bytes")
            chunks.append(await reader.readexactly(length))
            await reader.readexactly(2)
