"""The echo agent (`echo_agent.py`) over Streamable HTTP and WebSocket behind authorization: a
bearer token for programs, a cookie for browser pages, each token naming a principal that the
connection belongs to and that the agent reads (`conn.principal`).

    PYTHONPATH=generated python examples/authorized_agent.py --tokens tokens.txt --listen 0.0.0.0:8765

`--tokens FILE` holds one `NAME TOKEN` a line (`#` starts a comment), say `alice 3b1f...` (make
a token with `python -c "import secrets; print(secrets.token_urlsafe(32))"`); tokens are read
from a file, never from the command line, which other users of the machine can list. A request
is authorized by `Authorization: Bearer TOKEN`, or, for a page in a browser (whose WebSocket
cannot send that header), by the cookie `acp_token=TOKEN` that the deployer's login page sets
(`HttpOnly; Secure; SameSite=Strict; Path=/acp`). A cookie is sent by the browser whatever page
asks, so the pages that may use it are named with `--allow-origin https://editor.example`
(repeated): a request from any other page is refused 403 before authorization. Its principal
is the token's NAME: the connection `initialize` opened belongs to it, and a request naming
that connection with another token is refused 403. The agent answers `initialize` with the name
`echo-agent (NAME)`.

With tokens, `--listen` takes any host (serve it over TLS: behind a reverse proxy that
terminates it, or uvicorn's `--ssl-*` settings); an empty tokens file is refused."""

from __future__ import annotations

import argparse
import asyncio
import hmac
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import acp_v2 as acp
from echo_agent import EchoAgent, EchoAgentV1, address, listen

COOKIE = "acp_token"
"""The cookie a browser page authorizes with."""


def load_tokens(path: Path) -> dict[str, str]:
    """The tokens of a file of `NAME TOKEN` lines, each to its name."""
    tokens: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.partition("#")[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise ValueError(f"{path}:{number}: expected NAME TOKEN")
        name, token = fields
        tokens[token] = name
    return tokens


def token_authorizer(tokens: Mapping[str, str]) -> Callable[[Any], str | None]:
    """`authorize` for `acp.http_app`: the request's principal is the name of its bearer token,
    or else of its `acp_token` cookie; None (401) for no token or an unknown one. Every token is
    compared in constant time (the time taken tells nothing of how much of a token matched)."""

    def authorize(request: Any) -> str | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            token = request.cookies.get(COOKIE, "")
        found = None
        for known, name in tokens.items():
            if hmac.compare_digest(token.strip().encode(), known.encode()):
                found = name
        return found

    return authorize


class GreetingAgent(EchoAgent):
    """The echo agent, naming whom it serves in its `initialize` answer."""

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        info = acp.Implementation(name=f"echo-agent ({self.client.principal})", version="1.0")
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)


def main() -> None:
    parser = argparse.ArgumentParser(description="The echo agent over HTTP and WebSocket, behind tokens.")
    parser.add_argument("--listen", type=address, required=True, metavar="HOST:PORT")
    parser.add_argument("--tokens", type=Path, required=True, metavar="FILE", help="NAME TOKEN lines")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN", help="a page's origin")
    parser.add_argument("--drain", type=float, default=10.0, metavar="SECONDS")
    arguments = parser.parse_args()
    try:
        tokens = load_tokens(arguments.tokens)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    if not tokens:
        parser.error(f"--tokens {arguments.tokens}: no token, nobody could connect")
    logging.basicConfig(level=logging.INFO)
    app = acp.http_app(
        GreetingAgent, EchoAgentV1, allowed_origins=arguments.allow_origin, authorize=token_authorizer(tokens)
    )
    host, port = arguments.listen
    asyncio.run(listen(host, port, arguments.drain, app))


if __name__ == "__main__":
    main()
