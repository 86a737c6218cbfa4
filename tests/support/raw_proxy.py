"""A proxy written against the wire alone (no package): what the conductor's tests run between a
client and an agent, so that they do not depend on the package's own proxy machinery.

It answers `proxy/initialize` by sending `initialize` through `proxy/successor` and answering with
its successor's answer, the agent's `info.name` prefixed with "raw-proxy>"; it forwards every
other request and notification of its predecessor to its successor (wrapped) and every one of its
successor (delivered wrapped) to its predecessor (plain); answers go back with their ids restored.
With `--garbage`, it answers `session/new` with a line that is not JSON (`undefined`); with `--die`, it exits
at its first `session/prompt`."""

from __future__ import annotations

import json
import sys
from typing import Any


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    garbage, die = "--garbage" in sys.argv, "--die" in sys.argv
    pending: dict[int, tuple[Any, str]] = {}  # my request id → (the id it answers upstream, method)
    next_id = 0
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method is None:  # an answer to one of my requests
            if message.get("id") not in pending:
                continue  # (an error the conductor answered my garbage with)
            origin, wrapped = pending.pop(message["id"])
            if wrapped == "initialize" and "result" in message:
                info = message["result"].get("info") or {}
                info["name"] = "raw-proxy>" + str(info.get("name"))
                message["result"]["info"] = info
            send({**message, "id": origin})
            continue
        if method == "$/cancel_request":
            continue  # (a real proxy would cancel what it forwarded)
        if method == "proxy/initialize":
            method = "initialize"
        if garbage and method == "session/new":
            request_id = message["id"]
            sys.stdout.write(f'{{"jsonrpc": "2.0", "id": {request_id}, "result": {{"sessionId": undefined}}}}\n')
            sys.stdout.flush()
            continue
        if die and method == "session/prompt":
            sys.exit(3)
        if method == "proxy/successor":  # from my successor: to my predecessor, plain
            method = message["params"]["method"]
            out = {"jsonrpc": "2.0", "method": method}
            if "params" in message["params"]:
                out["params"] = message["params"]["params"]
        else:  # from my predecessor: to my successor, wrapped
            envelope = {"method": method}
            if "params" in message:
                envelope["params"] = message["params"]
            out = {"jsonrpc": "2.0", "method": "proxy/successor", "params": envelope}
        if "id" in message:
            out["id"] = next_id
            pending[next_id] = (message["id"], method)
            next_id += 1
        send(out)


if __name__ == "__main__":
    main()
