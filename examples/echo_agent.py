"""An ACP agent over stdin/stdout that echoes each prompt, word by word, once the client allows it:
v2 clients get `EchoAgent`, v1 clients (every editor today) `EchoAgentV1`, on the same stdio, as
the `protocolVersion` of the client's `initialize` selects (`acp.run_agent(EchoAgent(), EchoAgentV1())`).

A turn: the agent inserts the prompt (echoes it as a `user_message` and answers `session/prompt`
with its id), reports `running`, opens an "echo" tool call, asks the client's permission, streams
the words as chunks of one message, completes the tool call and reports `idle` with `end_turn`.
"Don't" fails the tool call and ends the turn; a `cancelled` answer ends it `cancelled`.
A prompt sent while a turn runs is held until the turn ends. `session/cancel` cancels the turn:
a pending permission request is withdrawn (`$/cancel_request`), the tool call ends `cancelled`,
the idle update says `cancelled`, and held prompts are answered -32800. What it sends in a
session is kept in a `SessionHistory`: `session/resume` with `replayFrom: {"type": "start"}`
sends it all again before answering (without `replayFrom`, nothing).

A v1 turn is the same echo in v1 terms: `session/prompt` opens an "Echo" tool call of kind
`execute` (it stands for running `echo`: clients' permission policies judge it as a command),
asks permission with an "allow" option, streams the words as `agent_message_chunk`s and is
answered `stopReason: end_turn` (`cancelled` after `session/cancel`). The v1 agent advertises
`loadSession`: `session/load` replays the session (the prompts as `user_message_chunk`s, and
what the agent sent), then answers.

`--pace SECONDS` waits that long before each word (a turn long enough to cancel). `--sessions DIR`
keeps each v1 session's history in DIR as well, a JSON-lines file per session, so that a later
process of the agent loads it: clients such as acpx start the agent anew for a later prompt and
reload the session with `session/load` (without it, a session lives as long as the process).

Run it with `generated/` on PYTHONPATH (or `acp_v2` and `acp_v1` copied next to it):

    PYTHONPATH=generated python examples/echo_agent.py
    PYTHONPATH=generated python examples/echo_agent.py --listen 127.0.0.1:8765

`--listen HOST:PORT` serves the same agents over Streamable HTTP and WebSocket instead, at
`http://HOST:PORT/acp` and `ws://HOST:PORT/acp` (`acp.http_app` under uvicorn: `pip install
uvicorn`, or the tests' pinned one), until interrupted (Ctrl-C); port 0 takes a free port.
It prints the two URLs, one a line, once it listens. On SIGINT or SIGTERM it drains: new
connections are refused 503 (and `/health` answers 503), the running ones are given `--drain`
seconds (10), then ended. A host other than a loopback address is refused unless
`--allow-unauthenticated` says so: this example has no authorization (`authorized_agent.py` is
this agent behind a bearer token or a cookie; the transports guide's "Authorization").
`--instance NAME` names the process among several behind a load balancer (its connection ids
start with `NAME.`, its answer to `initialize` sets the cookie `acp_instance=NAME`:
`examples/haproxy.cfg`); `--workers N` other than 1 is refused, with why."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import itertools
import json
import logging
import re
import signal
import uuid
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import acp_v1
import acp_v2 as acp


class EchoAgent(acp.Agent):
    def __init__(self, pace: float = 0.0) -> None:
        self.pace = pace  # seconds before each word
        self.ids = itertools.count(1)
        self.turns: dict[acp.SessionId, asyncio.Task[None] | None] = {}  # the latest turn of each session
        self.cancels: Counter[acp.SessionId] = Counter()  # session/cancel notifications per session
        self.history = acp.SessionHistory()  # what was sent in each session, for session/resume

    def on_connect(self, conn: acp.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        info = acp.Implementation(name="echo-agent", version="1.0")
        return acp.InitializeResponse(protocol_version=params.protocol_version, info=info)

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"session-{next(self.ids)}"
        self.turns[session_id] = None
        self.history.start(session_id)
        return acp.NewSessionResponse(session_id=session_id)

    async def session_resume(self, params: acp.ResumeSessionRequest) -> acp.ResumeSessionResponse:
        await self.client.session(params.session_id, self.history).resume(params.replay_from)
        self.turns.setdefault(params.session_id, None)
        return acp.ResumeSessionResponse()

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session_id = params.session_id
        if session_id not in self.turns:
            raise acp.RequestError.session_not_found(session_id)
        cancels = self.cancels[session_id]
        while (turn := self.turns[session_id]) and not turn.done():  # a turn runs: hold the prompt
            await asyncio.wait([turn])
            if self.cancels[session_id] != cancels:  # session/cancel came meanwhile
                raise acp.RequestError.request_cancelled()
        text = " ".join(block.text for block in params.prompt if isinstance(block, acp.ContentBlockText))
        session = self.client.session(session_id, self.history)
        self.turns[session_id] = self.client.start_task(self.turn(session, text))  # the connection owns it
        return acp.PromptResponse(message_id=await session.user_message(params.prompt))

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        self.cancels[params.session_id] += 1
        if turn := self.turns.get(params.session_id):
            turn.cancel()

    async def turn(self, session: acp.AgentSession, text: str) -> None:
        await session.running()
        call = await session.tool_call("Echo", name="echo", raw_input={"text": text})
        outcome = "cancelled"  # unless the client answers with an option
        try:  # session/cancel cancels this task: a pending permission request is withdrawn ($/cancel_request)
            answer = await session.ask_permission(call, title="Echo?", allow="Echo", reject="Don't")
            if answer.allowed:
                await call.update(status=acp.ToolCallStatus.IN_PROGRESS)
                for word in re.findall(r"\s*\S+", text):  # one chunk per word, all of one message
                    await asyncio.sleep(self.pace)
                    await session.say(word)
            outcome = "completed" if answer.allowed else "cancelled" if answer.cancelled else "failed"
        finally:
            await call.update(status=outcome)
            await session.idle("cancelled" if outcome == "cancelled" else "end_turn")


class SavedHistory(acp_v1.SessionHistory):
    """A `SessionHistory` also written to `folder`, each session's updates as JSON lines in a file
    named by its id, and read from there for a session another process of the agent started."""

    ID = re.compile(r"session-[0-9a-f]{32}")  # the ids `new_id` makes: only these name files

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def new_id(self) -> str:
        return f"session-{uuid.uuid4().hex}"  # unique across the processes that share the folder

    def file(self, session_id: object) -> Path | None:
        if not isinstance(session_id, str) or not self.ID.fullmatch(session_id):
            return None  # a client's id that this agent never made (or a path): no file
        return self.folder / f"{session_id}.jsonl"

    def __contains__(self, session_id: object) -> bool:
        if super().__contains__(session_id):
            return True
        file = self.file(session_id)
        if file is None or not file.is_file():
            return False
        lines = file.read_text(encoding="utf-8").splitlines()
        self.sessions[str(session_id)] = [acp_v1.decode("SessionUpdate", json.loads(line)) for line in lines]
        return True

    def start(self, session_id: str) -> None:
        super().start(session_id)
        if file := self.file(session_id):
            file.touch()

    def record(self, session_id: str, update: Any) -> None:
        super().record(session_id, update)
        if file := self.file(session_id):
            with file.open("a", encoding="utf-8") as lines:
                lines.write(json.dumps(acp_v1.encode(update)) + "\n")


class EchoAgentV1(acp_v1.Agent):
    """The echo turn for v1 clients: `session/prompt` is answered when the turn ends."""

    def __init__(self, pace: float = 0.0, sessions: Path | None = None) -> None:
        self.pace = pace  # seconds before each word
        self.ids = itertools.count(1)
        self.turns: dict[str, asyncio.Task[Any]] = {}  # the prompt handler running in each session
        # what was sent in each session, for session/load (kept in `sessions` too, with one)
        self.history = acp_v1.SessionHistory() if sessions is None else SavedHistory(sessions)

    def on_connect(self, conn: acp_v1.AgentSideConnection) -> None:
        self.client = conn

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        info = acp_v1.Implementation(name="echo-agent", version="1.0")
        capabilities = acp_v1.AgentCapabilities(load_session=True)
        return acp_v1.InitializeResponse(protocol_version=1, agent_info=info, agent_capabilities=capabilities)

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        history = self.history
        session_id = history.new_id() if isinstance(history, SavedHistory) else f"session-{next(self.ids)}"
        self.history.start(session_id)
        return acp_v1.NewSessionResponse(session_id=session_id)

    async def session_load(self, params: acp_v1.LoadSessionRequest) -> acp_v1.LoadSessionResponse:
        if params.session_id not in self.history:
            raise acp_v1.RequestError.resource_not_found({"sessionId": params.session_id})
        await self.client.session(params.session_id, self.history).replay()  # before the answer
        return acp_v1.LoadSessionResponse()

    async def session_cancel(self, params: acp_v1.CancelNotification) -> None:
        if turn := self.turns.get(params.session_id):
            turn.cancel()

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        session = self.client.session(params.session_id, self.history)
        for block in params.prompt:  # the client sent the prompt: kept to replay, not sent back
            self.history.record(params.session_id, acp_v1.SessionUpdateUserMessageChunk(content=block))
        turn = asyncio.current_task()
        assert turn is not None
        self.turns[params.session_id] = turn
        text = " ".join(block.text for block in params.prompt if isinstance(block, acp_v1.ContentBlockText))
        try:
            async with session:  # a cancelled turn fails the tool call it left open (v1 has no `cancelled`)
                call = await session.tool_call("Echo", kind=acp_v1.ToolKind.EXECUTE, raw_input={"text": text})
                answer = await session.ask_permission(call, allow="Echo", reject="Don't")
                for word in re.findall(r"\s*\S+", text) if answer.allowed else []:
                    await asyncio.sleep(self.pace)
                    await session.say(word)
                done = acp_v1.ToolCallStatus.COMPLETED if answer.allowed else acp_v1.ToolCallStatus.FAILED
                await call.update(status=done)
            return acp_v1.PromptResponse(stop_reason="end_turn")
        except asyncio.CancelledError:  # session/cancel: the turn ends `cancelled`
            return acp_v1.PromptResponse(stop_reason="cancelled")
        finally:
            self.turns.pop(params.session_id, None)


def address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for an IPv6 host) as a host and a port."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (127.0.0.1:8765), found {text!r}")
    return host.strip("[]"), int(port)


UVICORN_SETTINGS: dict[str, Any] = {
    "ws": "websockets",  # a client flooding pings without reading pongs is not read further: flat memory
    "timeout_graceful_shutdown": 5,  # after the drain, what uvicorn still waits for
    "limit_concurrency": 1000,  # connections and tasks at once; beyond, 503
    "timeout_keep_alive": 5,  # an idle kept-alive HTTP connection is closed
}
"""The uvicorn settings `--listen` applies (beside `lifespan="on"` and the logging level)."""


WORKERS_REFUSAL = (
    "--workers {workers}: uvicorn's workers share one listening socket, and the kernel hands each "
    "request to any of them, but a connection lives in the process that answered its initialize: "
    "its later HTTP requests would reach the others and get 404. Run {workers} processes instead, "
    "each with --listen on its own port and --instance NAME, behind a load balancer that routes "
    "by the acp_instance cookie or by the connection id's prefix (examples/haproxy.cfg)"
)
"""Why `--workers N` is refused (N other than 1)."""


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def listen(host: str, port: int, drain: float = 10.0, app: Any = None) -> None:
    """Serve `app` (the agents, by default) over HTTP and WebSocket at `host:port` until SIGINT or SIGTERM."""
    import uvicorn  # the ASGI server; acp.http_app itself needs nothing beyond the standard library

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # the signals are handled below
            yield

    app = app or acp.http_app(EchoAgent, EchoAgentV1)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", **UVICORN_SETTINGS)
    server = Server(config)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if server.started:
        bound = server.servers[0].sockets[0].getsockname()
        where = f"[{bound[0]}]:{bound[1]}" if ":" in bound[0] else f"{bound[0]}:{bound[1]}"
        print(f"http://{where}/acp\nws://{where}/acp", flush=True)
        await asyncio.wait([serving, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        logging.info("draining: no new connections; the running ones end within %s s", drain)
        await app.drain(drain)  # then their event streams end, which uvicorn's graceful shutdown waits for
        server.should_exit = True
    await serving


def main() -> None:
    parser = argparse.ArgumentParser(description="An ACP echo agent (v1 and v2) over stdio, or HTTP and WebSocket.")
    parser.add_argument(
        "--listen", type=address, metavar="HOST:PORT", help="serve http://HOST:PORT/acp and ws://HOST:PORT/acp"
    )
    parser.add_argument(
        "--drain", type=float, default=10.0, metavar="SECONDS", help="on SIGTERM, running connections' time"
    )
    parser.add_argument("--pace", type=float, default=0.0, metavar="SECONDS", help="wait before each word echoed")
    parser.add_argument(
        "--sessions", type=Path, metavar="DIR", help="keep v1 sessions in DIR, for session/load by a later process"
    )
    parser.add_argument(
        "--instance",
        metavar="NAME",
        help="this process's name behind a load balancer: its connection ids start with NAME. and its "
        "answer to initialize sets the cookie acp_instance=NAME (examples/haproxy.cfg routes on either)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="only 1: for more, run N processes with --instance behind a load balancer",
    )
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="listen on a host other than loopback without authorization",
    )
    arguments = parser.parse_args()
    listening = arguments.listen
    if arguments.workers != 1:
        parser.error(WORKERS_REFUSAL.format(workers=arguments.workers))
    if listening is not None and not loopback(listening[0]) and not arguments.allow_unauthenticated:
        parser.error(
            f"--listen {listening[0]}: not a loopback address, and this agent has no authorization "
            "(anyone who reaches it runs its agent); pass --allow-unauthenticated to listen anyway"
        )
    logging.basicConfig(level=logging.INFO)  # stderr: over stdio, stdout carries only protocol lines
    agent, agent_v1 = partial(EchoAgent, arguments.pace), partial(EchoAgentV1, arguments.pace, arguments.sessions)
    if listening is None:
        asyncio.run(acp.run_agent(agent(), agent_v1()))
    else:
        host, port = listening
        app = acp.http_app(agent, agent_v1, instance=arguments.instance)
        asyncio.run(listen(host, port, arguments.drain, app))


if __name__ == "__main__":
    main()
