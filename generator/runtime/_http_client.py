"""ACP over Streamable HTTP, client side, through httpx: what the TypeScript SDK 2.4.0's
`createHttpStream` (`experimental/http-client`) does, error for error.

The first message must be `initialize`, POSTed without `Acp-Connection-Id`; its `200` names
the connection and carries the answer. Then the client holds a `GET` stream of server-sent
events for the connection and one per session (opened when a response's result names a
`sessionId`, and before the first message about a session is posted), and POSTs every message
with `Acp-Connection-Id` (and `Acp-Session-Id` when its params name a session, or when it
answers a request that came on a session's stream). Failures as `createHttpStream` documents
them: a 409 on a session's stream or POST fails that session's requests until the client
reattaches it (`session/load`, `session/resume`); a session stream that ends fails its requests
in flight and is reopened by the next message; any other HTTP error of a request's POST fails
only that request (-32603, `data` = `{status, body}`, the body cut at 8 KiB); 401, 403, 404,
410, network errors and failed POSTs of notifications or responses close the transport. The
end of the connection's stream ends the transport; `close()` sends `DELETE`. Cookies the server
sets (load-balancer affinity) are sent back for the connection's life, and to later connections
given the same `AffinityCookies` (as the TypeScript SDK's `cookieStore` option).

Needs httpx (the package's `http` extra); importing this module without it raises an
`ImportError` that says so."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final

from . import _runtime as _rt
from ._connection import DEFAULT_LIMITS, MessageTooLarge
from ._cookies import AffinityCookies
from ._runtime import DecodeError

try:
    import httpx
except ImportError as error:  # pragma: no cover - exercised in a clean interpreter by the tests
    raise ImportError(
        f"{__package__}'s HTTP transport needs the httpx library: "
        f"install the package's `http` extra (pip install 'DIR[http]') or `pip install httpx`"
    ) from error

_log = logging.getLogger(f"{_rt.LOGGER}.http")

CONNECTION_ID_HEADER: Final = "Acp-Connection-Id"
SESSION_ID_HEADER: Final = "Acp-Session-Id"
MAX_ERROR_BODY_BYTES: Final = 8 * 1024
CONNECTION_FAILURES: Final = frozenset({401, 403, 404, 410})
REATTACH_METHODS: Final = frozenset({"session/load", "session/resume"})
DEFAULT_MAX_MESSAGE_BYTES: Final = DEFAULT_LIMITS.max_message_bytes  # as over stdio
MAX_CONNECTIONS: Final = 10
"""POSTs in flight at most, each on a kept-alive HTTP connection (httpx keeps 20 by default:
beyond them, concurrent POSTs would open and close a TCP connection each). The event streams
hold a connection each beside them: httpx's pool is not bounded, as a bound shared with the
streams would let the streams of a few sessions take every connection and stall every POST."""


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The TLS settings of every transport that is given no `client`: httpx's defaults (its CA
    bundle, `SSL_CERT_FILE` and `SSL_CERT_DIR` as they were at the first call), made once. An
    `httpx.AsyncClient` left to make its own loads the CA bundle again, ~24 ms of CPU for each
    connection here, even to an `http://` URL; a context is safe to share."""
    return httpx.create_ssl_context()


class HttpError(Exception):
    """A response with an error status: its status and (cut) body."""

    def __init__(self, what: str, status: int, body: str) -> None:
        super().__init__(f"{what}: {status}{': ' + body if body else ''}")
        self.status = status
        self.body = body


def _key(value: Any) -> tuple[str, Any] | None:
    if type(value) is str or type(value) is int:
        return (type(value).__name__, value)
    return None


def _session_of_params(message: Any) -> str | None:
    params = message.get("params") if "method" in message else None
    session = params.get("sessionId") if type(params) is dict else None
    return session if type(session) is str else None


def _session_of_result(message: Any) -> str | None:
    result = message.get("result") if "method" not in message else None
    session = result.get("sessionId") if type(result) is dict else None
    return session if type(session) is str else None


def _error_body(text: str) -> Any:
    try:
        return _rt.parse_json(text)
    except DecodeError:
        return text


class HttpClientTransport:
    """A `Transport` to the agent at `url` over Streamable HTTP (see the module's docstring)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        client: httpx.AsyncClient | None = None,
        cookies: AffinityCookies | None = None,
    ) -> None:
        self.url = url
        self.connection_id: str | None = None
        self._limit = max_message_bytes
        hooks = _cookie_hooks(cookies) if cookies is not None else {}
        self._http = client or httpx.AsyncClient(
            headers=dict(headers or {}),
            timeout=httpx.Timeout(30.0, read=None),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
            event_hooks=hooks,
            verify=default_ssl_context(),
        )
        self._owns_client = client is None
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=256)
        self._initializing = asyncio.Lock()
        self._posting = asyncio.Semaphore(MAX_CONNECTIONS)
        """Bounds the POSTs in flight to `MAX_CONNECTIONS`: beyond them, a POST waits here, which
        costs less than waiting in httpcore's pool queue (64 POSTs in flight made ~930
        requests/s here, 10 ~1,430/s)."""
        self._closed = False
        self._shut = asyncio.Event()
        """Set once the transport's end is complete: its tasks ended, `DELETE` sent, httpx closed."""
        self._ended = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._sessions: dict[str, asyncio.Future[None]] = {}
        """Session → its stream's opening (done once it is open; failed with its HTTP error)."""
        self._session_errors: dict[str, HttpError] = {}
        self._pending_session_requests: dict[tuple[str, Any], tuple[str, Any]] = {}
        """Our requests about a session, in flight: id key → (session, id)."""
        self._response_sessions: dict[tuple[str, Any], str] = {}
        """The agent's requests that came on a session's stream → that session."""

    # --- Transport --------------------------------------------------------------------------

    async def receive(self) -> bytes | None:
        if self._ended:
            return None
        message = await self._inbox.get()
        self._ended = message is None
        return message

    async def send(self, message: bytes) -> None:
        """POST `message`. Unlike the TypeScript SDK, which posts one message at a time, each
        send posts at once: sends awaited one after another arrive in order, concurrent ones
        (of different tasks) travel side by side and may overtake each other. Until
        `initialize` is answered, sends wait for it."""
        if self.connection_id is None:
            async with self._initializing:
                if self.connection_id is None:
                    if self._closed:
                        raise ConnectionResetError("the HTTP transport is closed")
                    await self._initialize(_rt.parse_json(message), message)
                    return
        if self._closed:
            raise ConnectionResetError("the HTTP transport is closed")
        await self._post(_rt.parse_json(message), message)

    async def close(self) -> None:
        """Send `DELETE` for the connection and stop its streams; once the transport has begun to
        end (a stream's failure ends it too), wait until that is done: no task of it outlives
        `close()`."""
        if self._closed:
            await self._shut.wait()
            return
        await self._shutdown(delete=True)

    # --- posting ------------------------------------------------------------------------------

    async def _initialize(self, message: Any, data: bytes) -> None:
        if type(message) is not dict or message.get("method") != "initialize" or "id" not in message:
            raise ValueError("the first message over ACP HTTP must be initialize")
        try:
            response = await self._http.post(self.url, content=data, headers={"Content-Type": "application/json"})
            if response.status_code != 200:
                raise HttpError("ACP initialize failed", response.status_code, response.text[:MAX_ERROR_BODY_BYTES])
            connection_id = response.headers.get(CONNECTION_ID_HEADER)
            if not connection_id:
                raise HttpError("ACP initialize response missing Acp-Connection-Id", 200, "")
            body = response.content
            if len(body) > self._limit:
                raise MessageTooLarge("the initialize response is longer than the limit")
            answer = _rt.parse_json(body)
            if type(answer) is not dict or _key(answer.get("id")) != _key(message["id"]):
                raise HttpError("ACP initialize response id did not match initialize request", 200, "")
        except (httpx.HTTPError, HttpError, DecodeError, MessageTooLarge) as error:
            await self._shutdown(delete=False)
            raise ConnectionResetError(str(error)) from error
        self.connection_id = connection_id
        self._spawn(self._read_stream(None))
        await self._inbox.put(body)

    async def _post(self, message: Any, data: bytes) -> None:
        if type(message) is not dict:
            await self._post_raw(data, None)
            return
        is_request = "method" in message and "id" in message
        session = _session_of_params(message)
        key = _key(message.get("id"))
        if session is None and "method" not in message and key is not None:
            session = self._response_sessions.get(key)
        if session is not None:
            if message.get("method") in REATTACH_METHODS:
                self._session_errors.pop(session, None)
            try:
                await self._open_session(session)
            except HttpError as error:
                if error.status != 409:
                    await self._fail(error)
                    raise ConnectionResetError(str(error)) from error
                await self._drop(message, error)
                return
            if is_request and key is not None:
                self._pending_session_requests[key] = (session, message["id"])
        try:
            await self._post_raw(data, session)
        except HttpError as error:
            still_pending = self._pending_session_requests.pop(key, None) is not None if session and key else True
            if session is not None and error.status == 409:
                self._fail_session(session, error)
                await self._drop(message, error)
                return
            if error.status not in CONNECTION_FAILURES and is_request:
                if still_pending:
                    await self._answer_error(message["id"], error)
                return
            await self._fail(error)
            raise ConnectionResetError(str(error)) from error
        except httpx.HTTPError as error:
            await self._fail(error)
            raise ConnectionResetError(str(error)) from error
        if "method" not in message and key is not None:
            self._response_sessions.pop(key, None)

    async def _post_raw(self, data: bytes, session: str | None) -> None:
        assert self.connection_id is not None
        headers = {"Content-Type": "application/json", CONNECTION_ID_HEADER: self.connection_id}
        if session is not None:
            headers[SESSION_ID_HEADER] = session
        async with self._posting, self._http.stream("POST", self.url, content=data, headers=headers) as response:
            if response.is_success:
                await response.aread()  # read to its end (202: nothing), the connection is reused
                return
            body = await _read_cut(response, MAX_ERROR_BODY_BYTES)
        raise HttpError("ACP POST failed", response.status_code, body)

    async def _drop(self, message: dict[str, Any], error: HttpError) -> None:
        """A message for a failed session: a request is answered with the error, anything else dropped."""
        if "id" not in message:
            return
        if "method" in message:
            await self._answer_error(message["id"], error)
            return
        key = _key(message["id"])
        if key is not None:
            self._response_sessions.pop(key, None)

    async def _answer_error(self, request_id: Any, error: Exception) -> None:
        failure: dict[str, Any] = {"code": _rt.INTERNAL_ERROR, "message": str(error)}
        if isinstance(error, HttpError):
            failure["data"] = {"status": error.status, "body": _error_body(error.body)}
        await self._inbox.put(_rt.dump_json_bytes({"jsonrpc": "2.0", "id": request_id, "error": failure}))

    # --- streams ------------------------------------------------------------------------------

    def _open_session(self, session: str) -> asyncio.Future[None]:
        failure = self._session_errors.get(session)
        if failure is not None:
            opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            opened.set_exception(failure)
            return opened
        existing = self._sessions.get(session)
        if existing is not None:
            return existing
        opened = self._sessions[session] = asyncio.get_running_loop().create_future()
        self._spawn(self._read_stream(session), f"acp-sse:{session}")
        return opened

    async def _read_stream(self, session: str | None) -> None:
        """Read one SSE stream (the connection's, or a session's) into the inbox."""
        assert self.connection_id is not None
        headers = {"Accept": "text/event-stream", CONNECTION_ID_HEADER: self.connection_id}
        if session is not None:
            headers[SESSION_ID_HEADER] = session
        opened = self._sessions.get(session) if session is not None else None
        try:
            async with self._http.stream("GET", self.url, headers=headers) as response:
                if not response.is_success:
                    body = await _read_cut(response, MAX_ERROR_BODY_BYTES)
                    raise HttpError("ACP SSE connection failed", response.status_code, body)
                if opened is not None and not opened.done():
                    opened.set_result(None)
                async for data in _events(response, self._limit):
                    await self._received(data, session)
        except asyncio.CancelledError:
            raise
        except HttpError as error:
            if opened is not None and not opened.done():
                opened.set_exception(error)
                opened.exception()  # retrieved: whoever awaits it sees it too
            if session is not None and error.status == 409:
                self._fail_session(session, error)
            else:
                await self._fail(error)
            return
        except (httpx.HTTPError, MessageTooLarge, OSError) as error:
            if opened is not None and not opened.done():
                opened.set_exception(ConnectionResetError(str(error)))
                opened.exception()
            if not self._closed:
                await self._fail(error)
            return
        finally:
            if session is not None and self._sessions.get(session) is opened:
                del self._sessions[session]
        if self._closed:
            return
        if session is None:
            await self._fail(ConnectionResetError("ACP connection SSE stream closed"))
        else:  # its requests in flight can no longer be answered; the next message reopens it
            await self._fail_requests_of(session, ConnectionResetError("ACP session SSE stream closed"))

    async def _received(self, data: bytes, stream_session: str | None) -> None:
        try:
            message = _rt.parse_json(data)
        except DecodeError:
            await self._inbox.put(data)
            return
        if type(message) is dict:
            result_session = _session_of_result(message)
            if result_session is not None:
                with contextlib.suppress(Exception):
                    self._open_session(result_session)
            key = _key(message.get("id"))
            if key is not None:
                if "method" in message:
                    if stream_session is not None:
                        self._response_sessions[key] = stream_session
                else:
                    self._pending_session_requests.pop(key, None)
        await self._inbox.put(data)

    def _fail_session(self, session: str, error: HttpError) -> None:
        self._session_errors[session] = error
        stream = self._sessions.pop(session, None)
        if stream is not None and not stream.done():
            stream.set_exception(error)
            stream.exception()
        for task in list(self._tasks):
            if task.get_name() == f"acp-sse:{session}":
                task.cancel()
        self._spawn(self._fail_requests_of(session, error))

    async def _fail_requests_of(self, session: str, error: Exception) -> None:
        for key, (owner, request_id) in list(self._pending_session_requests.items()):
            if owner == session:
                del self._pending_session_requests[key]
                await self._answer_error(request_id, error)

    async def _fail(self, error: BaseException) -> None:
        """The connection is unusable: end the transport (and tell the server, if it still listens)."""
        if self._closed:
            return
        _log.warning("ACP HTTP connection failed: %s", error)
        await self._shutdown(delete=True)

    async def _shutdown(self, *, delete: bool) -> None:
        self._closed = True
        try:
            current = asyncio.current_task()
            tasks = [task for task in self._tasks if task is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if delete and self.connection_id is not None:
                with contextlib.suppress(httpx.HTTPError):
                    await self._http.delete(self.url, headers={CONNECTION_ID_HEADER: self.connection_id})
            if self._owns_client:
                await self._http.aclose()
        finally:
            while self._inbox.full():  # the end must get through: a reader this far behind loses the oldest
                self._inbox.get_nowait()
            self._inbox.put_nowait(None)
            self._shut.set()

    def _spawn(self, work: Any, name: str | None = None) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _cookie_hooks(cookies: AffinityCookies) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """httpx event hooks that send `cookies` on every request and store what responses set."""

    async def apply(request: httpx.Request) -> None:
        header = cookies.header(request.headers.get("Cookie"))
        if header is not None:
            request.headers["Cookie"] = header

    async def store(response: httpx.Response) -> None:
        cookies.store(response.headers.get_list("Set-Cookie"))

    return {"request": [apply], "response": [store]}


async def _read_cut(response: httpx.Response, limit: int) -> str:
    """At most `limit` bytes of the body, as text (a character cut in two is dropped)."""
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= limit:
            data = data[:limit]
            break
    return data.decode("utf-8", "ignore")


async def _events(response: httpx.Response, limit: int) -> AsyncIterator[bytes]:
    """The `data` of each server-sent event (lines joined by `\\n`); comments are keep-alives."""
    data: list[str] = []
    size = 0
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield "\n".join(data).encode("utf-8", "surrogatepass")
            data, size = [], 0
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            value = value[1:] if value.startswith(" ") else value
            size += len(value)
            if size > limit:
                raise MessageTooLarge("a server-sent event longer than the limit")
            data.append(value)
    if data:
        yield "\n".join(data).encode("utf-8", "surrogatepass")


@contextlib.asynccontextmanager
async def open_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    cookies: AffinityCookies | None = None,
) -> AsyncIterator[HttpClientTransport]:
    """A transport to the agent at `url` (`http://host:port/acp`), closed (DELETE) on exit."""
    transport = HttpClientTransport(url, headers=headers, max_message_bytes=max_message_bytes, cookies=cookies)
    try:
        yield transport
    finally:
        await transport.close()
