"""Hostile lines a peer may send an agent, with the answers the connection gives them.

Each line is sent to a connection that has been initialized, followed by a valid request
(which must still be answered). `answers` lists what the connection answers that line with,
as `(id, code)` pairs (`code` None for a result; `[]` for no answer). `ts` is the answer of the
TypeScript SDK's agent (interop/ts_agent.mjs) where it differs on purpose, `TS_EXITS` when the
TypeScript agent's process dies on the line: tests/test_interop.py checks every other line
against the TypeScript SDK live, and tests/package/test_connection.py checks ours."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DEEP = 1_000_000
"""Nesting no JSON parser reads: Python's stops at 994 levels on 3.11, 1,497 on 3.12, 9,998 on
3.13 and 65,185 on 3.14 (its recursion limits), orjson at 1,024."""
TS_EXITS = "exits"


def nested(depth: int, inner: bytes = b"1") -> bytes:
    return b"[" * depth + inner + b"]" * depth


def _request(rest: bytes) -> bytes:
    return b'{"jsonrpc":"2.0",' + rest + b"}"


@dataclass(frozen=True)
class Line:
    name: str
    line: bytes
    answers: Sequence[tuple[Any, int | None]]
    ts: Any = None  # the TypeScript SDK's answers, where they differ from ours
    why: str = ""  # why ours differ
    without_orjson: Sequence[tuple[Any, int | None]] | None = (
        None  # our answers when the standard library cannot parse the line
    )

    def expected(self, orjson: bool) -> Sequence[tuple[Any, int | None]]:
        """Our answers, with orjson or without: how deep the standard library's parser reads
        depends on the Python version, so lines nested about a thousand levels parse on some."""
        if orjson or self.without_orjson is None or _stdlib_parses(self.line):
            return self.answers
        return self.without_orjson


def _stdlib_parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except RecursionError:
        return False
    return True


PARSE = [(None, -32700)]
INVALID = [(None, -32600)]
NOT_FOUND = [(1, -32601)]
NUMBERS = "Python's JSON cannot hold the number: the TypeScript SDK reads it as Infinity"
TOO_DEEP = "nested past what Python's JSON parser reaches (its recursion limit): unparsable here, parsed by JavaScript"

LINES = [
    Line("deep-array", nested(DEEP), PARSE, INVALID, TOO_DEEP),
    Line(
        "deep-params",
        _request(b'"id":1,"method":"session/new","params":{"cwd":"/w","x":' + nested(DEEP) + b"}"),
        PARSE,
        [(1, None)],
        TOO_DEEP,
    ),
    Line(
        "deep-id",
        _request(b'"id":' + nested(DEEP) + b',"method":"session/new","params":{"cwd":"/w"}'),
        PARSE,
        TS_EXITS,
        TOO_DEEP,
    ),
    Line("deep-ext-params", _request(b'"id":1,"method":"_x/y","params":' + nested(DEEP)), PARSE, NOT_FOUND, TOO_DEEP),
    Line("deep-response", _request(b'"id":77,"result":' + nested(DEEP)), PARSE, [], TOO_DEEP),
    Line("deep-notification", _request(b'"method":"session/cancel","params":' + nested(DEEP)), PARSE, [], TOO_DEEP),
    Line("array-990", nested(990), INVALID, without_orjson=PARSE),
    Line(
        "params-990",
        _request(b'"id":1,"method":"session/new","params":{"cwd":"/w","x":' + nested(985) + b"}"),
        [(1, None)],
        without_orjson=PARSE,
    ),
    Line(
        "bad-param-990",
        _request(b'"id":1,"method":"session/new","params":{"cwd":' + nested(985) + b"}"),
        [(1, -32602)],
        without_orjson=PARSE,
    ),
    Line(
        "id-990",
        _request(b'"id":' + nested(985) + b',"method":"session/new","params":{"cwd":"/w"}'),
        INVALID,
        without_orjson=PARSE,
    ),
    Line("method-990", _request(b'"id":1,"method":' + nested(985)), INVALID, without_orjson=PARSE),
    Line("jsonrpc-990", b'{"jsonrpc":' + nested(985) + b',"id":1,"method":"x"}', INVALID, without_orjson=PARSE),
    Line(
        "notification-990",
        _request(b'"method":"session/cancel","params":{"sessionId":' + nested(985) + b"}"),
        [],
        without_orjson=PARSE,
    ),
    Line(
        "cancel-990",
        _request(b'"method":"$/cancel_request","params":{"requestId":' + nested(985) + b"}"),
        [],
        without_orjson=PARSE,
    ),
    Line("result-990", _request(b'"id":77,"result":' + nested(985)), [], without_orjson=PARSE),
    Line(
        "error-data-990",
        _request(b'"id":77,"error":{"code":1,"message":"m","data":' + nested(985) + b"}"),
        [],
        without_orjson=PARSE,
    ),
    Line(
        "prompt-990",
        _request(b'"id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":' + nested(985) + b"}"),
        [(1, -32602)],
        without_orjson=PARSE,
    ),
    Line("surrogate-method", _request(b'"id":1,"method":"\\ud800"'), NOT_FOUND),
    Line("surrogate-ext-method", _request(b'"id":1,"method":"_\\ud800"'), NOT_FOUND),
    Line("surrogate-id", _request(b'"id":"\\ud800","method":"session/new","params":{"cwd":"/w"}'), [("\ud800", None)]),
    Line("surrogate-id-unknown-method", _request(b'"id":"\\udfff","method":"nope"'), [("\udfff", -32601)]),
    Line(
        "surrogate-param",
        _request(b'"id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":"\\ud800"}'),
        [(1, -32602)],
    ),
    Line("surrogate-key", _request(b'"id":1,"method":"session/new","params":{"\\ud800":1}'), [(1, -32602)]),
    Line("surrogate-jsonrpc", b'{"jsonrpc":"\\ud800","id":1,"method":"session/new","params":{"cwd":"/w"}}', INVALID),
    Line("control-characters-id", _request(b'"id":"\\u0000\\u001f\\n","method":"nope"'), [("\x00\x1f\n", -32601)]),
    Line("raw-control-character", _request(b'"id":1,"method":"no\x01pe"'), PARSE),
    Line("invalid-utf8", _request(b'"id":1,"method":"\xff\xfe"'), NOT_FOUND),
    Line("byte-order-mark", b"\xef\xbb\xbf" + _request(b'"id":1,"method":"nope"'), NOT_FOUND),
    Line("huge-integer-id", _request(b'"id":' + b"9" * 5000 + b',"method":"nope"'), PARSE, INVALID, NUMBERS),
    Line(
        "huge-integer-param",
        _request(b'"id":1,"method":"session/new","params":{"cwd":"/w","n":' + b"9" * 5000 + b"}"),
        PARSE,
        [(1, None)],
        NUMBERS,
    ),
    Line("huge-float-id", _request(b'"id":1e400,"method":"nope"'), PARSE, INVALID, NUMBERS),
    Line(
        "huge-float-param",
        _request(b'"id":1,"method":"session/new","params":{"cwd":"/w","n":1e400}'),
        PARSE,
        [(1, None)],
        NUMBERS,
    ),
    Line(
        "big-integer-id",
        _request(b'"id":123456789012345678901234567890,"method":"nope"'),
        INVALID,
        [(1.2345678901234568e29, -32601)],
        "the schema's ids are int64: JavaScript rounds a longer one to a double and answers that",
    ),
    Line("fraction-id", _request(b'"id":1.5,"method":"nope"'), INVALID),
    Line("integral-float-id", _request(b'"id":2.0,"method":"nope"'), [(2, -32601)]),
    Line("boolean-id", _request(b'"id":true,"method":"nope"'), INVALID),
    Line("object-id", _request(b'"id":{"a":1},"method":"nope"'), INVALID),
    Line("array-id", _request(b'"id":[1],"method":"session/new","params":{"cwd":"/w"}'), INVALID),
    Line("null-id", _request(b'"id":null,"method":"nope"'), INVALID),
    Line("no-jsonrpc", b'{"id":1,"method":"session/new","params":{"cwd":"/w"}}', INVALID),
    Line("no-jsonrpc-notification", b'{"method":"session/cancel","params":{"sessionId":"s"}}', INVALID),
    Line("wrong-jsonrpc", b'{"jsonrpc":"1.0","id":1,"method":"session/new","params":{"cwd":"/w"}}', INVALID),
    Line("number-jsonrpc", b'{"jsonrpc":2,"id":1,"method":"session/new","params":{"cwd":"/w"}}', INVALID),
    Line("number-method", _request(b'"id":1,"method":5'), INVALID),
    Line("null-method", _request(b'"id":1,"method":null'), INVALID),
    Line("array-params", _request(b'"id":1,"method":"session/new","params":[1]'), [(1, -32602)]),
    Line("string-params", _request(b'"id":1,"method":"session/new","params":"x"'), [(1, -32602)]),
    Line("missing-params", _request(b'"id":1,"method":"session/new"'), [(1, -32602)]),
    Line("unknown-method", _request(b'"id":1,"method":"session/teleport","params":{}'), NOT_FOUND),
    Line("unknown-extension", _request(b'"id":1,"method":"_x/y","params":{}'), NOT_FOUND),
    Line("unimplemented-null-params", _request(b'"id":1,"method":"session/list","params":null'), NOT_FOUND),
    Line("empty-object", b"{}", INVALID),
    Line("jsonrpc-only", b'{"jsonrpc":"2.0"}', INVALID),
    Line("number", b"1", INVALID),
    Line("string", b'"x"', INVALID),
    Line("null", b"null", INVALID),
    Line("true", b"true", INVALID),
    Line("empty-array", b"[]", INVALID),
    Line("batch", b'[{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}]', INVALID),
    Line("not-json", b"{not json", PARSE),
    Line("nan", _request(b'"id":1,"method":"_x","params":NaN'), PARSE),
    Line("trailing-garbage", _request(b'"id":1,"method":"session/new","params":{"cwd":"/w"}') + b" x", PARSE),
    Line("result-and-error", _request(b'"id":77,"result":1,"error":{"code":1,"message":"m"}'), []),
    Line("response-to-unknown-id", _request(b'"id":77,"result":{}'), []),
    Line("id-without-method", _request(b'"id":1'), []),
    Line("duplicate-keys", _request(b'"id":1,"id":2,"method":"nope"'), [(2, -32601)]),
    Line(
        "long-id",
        _request(b'"id":"' + b"x" * 2000 + b'","method":"nope"'),
        INVALID,
        [("x" * 2000, -32601)],
        "ConnectionLimits.max_id_length (1024): the TypeScript SDK bounds ids on its HTTP and WebSocket server only",
    ),
    Line("id-of-1024-characters", _request(b'"id":"' + b"x" * 1024 + b'","method":"nope"'), [("x" * 1024, -32601)]),
    Line("bad-cancel", _request(b'"method":"$/cancel_request","params":{"requestId":[1]}'), []),
    Line("cancel-as-request", _request(b'"id":1,"method":"$/cancel_request","params":{"requestId":5}'), NOT_FOUND),
]
