"""Watching a connection's traffic: every message in and out, as a `WireEvent`, handed to the
`WireObserver`s attached with `conn.add_observer(...)`. `LoggingObserver` writes one log line
per message; `_tracing.opentelemetry_observer()` makes the OpenTelemetry one (the `otel` extra).

A connection with no observer does nothing of this: it checks one attribute per message."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import _runtime as _rt

_log = logging.getLogger(f"{_rt.LOGGER}.connection")

Direction = Literal["in", "out"]
Kind = Literal["request", "notification", "response", "error", "invalid"]

MAX_TIMED_REQUESTS: Final = 4096
"""Requests a connection remembers the time of, per direction, until their response: beyond it
the oldest are forgotten (their responses get no `elapsed`), so a peer that never answers
cannot grow it."""


@dataclass(frozen=True, slots=True)
class WireEvent:
    """One message that crossed a connection.

    `method` is the request's method for its response too (when the request was seen);
    `elapsed` is a response's time, in seconds, since its request crossed the other way (the
    peer's time to answer for `in`, the handler's for `out`); `size` counts the JSON text's
    bytes, framing excluded. A message that is not a JSON-RPC object is `invalid`."""

    side: str
    """The side of the connection that saw the message: "agent" or "client"."""
    direction: Direction
    kind: Kind
    method: str | None
    id: int | str | None
    size: int
    time: float
    """`time.perf_counter()` when the message was read, or when it was handed to the transport."""
    elapsed: float | None
    error_code: int | None
    message: Any
    """The parsed JSON value (None when it does not parse)."""
    data: bytes
    """The bytes as they crossed, framing excluded."""


class WireObserver:
    """What a connection tells about its traffic; subclass it and override what you need.

    It is called in the connection's task, in the order messages cross: keep it quick (hand
    slow work to a queue). An exception it raises is logged once and detaches it."""

    def on_message(self, event: WireEvent) -> None:
        """A message was read from the transport (`in`) or is being written to it (`out`)."""

    def on_close(self) -> None:
        """The connection has ended: no more messages follow."""


def _classify(message: Any) -> tuple[Kind, str | None, int | str | None, int | None]:
    """kind, method, id and error code of a parsed message."""
    if type(message) is not dict:
        return "invalid", None, None, None
    request_id = message.get("id")
    if type(request_id) not in (int, str):
        request_id = None
    method = message.get("method")
    if type(method) is str:
        return ("request" if "id" in message else "notification"), method, request_id, None
    if "error" in message:
        error = message["error"]
        code = error.get("code") if type(error) is dict else None
        return "error", None, request_id, code if type(code) is int else None
    if "result" in message:
        return "response", None, request_id, None
    return "invalid", None, request_id, None


class Tap:
    """A connection's observers and the request times that make responses' `elapsed`."""

    def __init__(self, side: str) -> None:
        self.side = side
        self.observers: list[WireObserver] = []
        # (direction of the request, type of id, id) → (method, time)
        self._requests: dict[tuple[Direction, type, Any], tuple[str, float]] = {}

    def crossed(self, direction: Direction, data: bytes) -> None:
        """Tell every observer of one message (read `in`, or about to be written `out`)."""
        now = time.perf_counter()
        if data.endswith(b"\n"):
            data = data[:-1]
        try:
            message = _rt.parse_json(data)
        except Exception:  # not JSON, or not UTF-8: the engine answers it; here it is `invalid`
            message = None
        kind, method, request_id, error_code = _classify(message)
        elapsed = None
        if kind == "request" and request_id is not None:
            assert method is not None
            if len(self._requests) >= 2 * MAX_TIMED_REQUESTS:
                del self._requests[next(iter(self._requests))]
            self._requests[(direction, type(request_id), request_id)] = (method, now)
        elif kind in ("response", "error") and request_id is not None:
            other: Direction = "out" if direction == "in" else "in"
            sent = self._requests.pop((other, type(request_id), request_id), None)
            if sent is not None:
                method, elapsed = sent[0], now - sent[1]
        event = WireEvent(
            self.side, direction, kind, method, request_id, len(data), now, elapsed, error_code, message, data
        )
        for observer in list(self.observers):
            try:
                observer.on_message(event)
            except Exception:
                self._detach(observer)

    def closed(self) -> None:
        """Tell every observer that the connection has ended."""
        self._requests.clear()
        for observer in list(self.observers):
            try:
                observer.on_close()
            except Exception:
                self._detach(observer)

    def _detach(self, observer: WireObserver) -> None:
        _log.exception("the wire observer %r failed and was detached", observer)
        if observer in self.observers:
            self.observers.remove(observer)


class LoggingObserver(WireObserver):
    """Logs every message, one line each, through `logging` (logger `<package>.wire` by default,
    at DEBUG unless `level` says otherwise): side, direction, kind, method, id, size, the
    response's elapsed milliseconds, and the JSON text cut to `max_payload` characters."""

    def __init__(
        self, logger: logging.Logger | None = None, *, level: int = logging.DEBUG, max_payload: int = 200
    ) -> None:
        self.logger = logger if logger is not None else logging.getLogger(f"{_rt.LOGGER}.wire")
        self.level = level
        self.max_payload = max_payload

    def on_message(self, event: WireEvent) -> None:
        if not self.logger.isEnabledFor(self.level):
            return
        text = event.data.decode("utf-8", "replace")
        if len(text) > self.max_payload:
            text = f"{text[: self.max_payload]}… ({len(text) - self.max_payload} more)"
        arrow = "<-" if event.direction == "in" else "->"
        parts = [event.side, arrow, event.kind]
        if event.method is not None:
            parts.append(event.method)
        if event.id is not None:
            parts.append(f"id={event.id!r}")
        if event.error_code is not None:
            parts.append(f"code={event.error_code}")
        parts.append(f"{event.size} B")
        if event.elapsed is not None:
            parts.append(f"{event.elapsed * 1000:.3f} ms")
        self.logger.log(self.level, "%s %s", " ".join(parts), text)
