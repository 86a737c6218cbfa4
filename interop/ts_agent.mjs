// An echo agent written with the official TypeScript SDK (experimental v2), over stdio: the
// counterpart of examples/echo_agent.py, turn for turn. A prompt is answered once inserted; the
// turn reports `running`, opens an "echo" tool call, asks permission, streams the words as
// chunks of one message and reports `idle`. A prompt sent during a turn is held. `session/cancel`
// aborts the turn (withdrawing the permission request with `$/cancel_request`) and answers held
// prompts -32800; `$/cancel_request` withdraws a held prompt. `_interop/seen` returns what the
// agent saw of cancellations.
// `ts_agent.mjs --listen` serves it over Streamable HTTP and WebSocket instead, with the SDK's
// `AcpServer` and its Node adapter on a free port of 127.0.0.1 (one connection at a time): it prints
// `http://127.0.0.1:PORT/acp` (`ws://` the same) and serves until stdin ends.
import { Readable, Writable } from "node:stream";
import { RequestError, agent, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2/unstable";

const listen = process.argv[2] === "--listen";
const options = [
  { optionId: "allow", name: "Echo", kind: "allow_once" },
  { optionId: "reject", name: "Don't", kind: "reject_once" },
];
const sessions = new Map(); // id -> { turn: Promise | null, controller: AbortController, cancels: number }
const seen = []; // cancellations, as the handlers saw them
let ids = 0;
let client;

const aborted = (signal) => new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
const update = (sessionId, update) => client.notify("session/update", { sessionId, update });
const toolCall = (toolCallId, fields) => ({ sessionUpdate: "tool_call_update", toolCallId, ...fields });

async function turn(sessionId, text, signal) {
  const toolCallId = `echo-${++ids}`;
  await update(sessionId, { sessionUpdate: "state_update", state: "running" });
  await update(sessionId, toolCall(toolCallId, { name: "echo", title: "Echo", rawInput: { text } }));
  let [status, stopReason] = ["cancelled", "cancelled"]; // unless the client answers with an option
  try {
    const answer = await client.request(
      "session/request_permission",
      { sessionId, title: "Echo?", options, subject: { type: "tool_call", toolCall: { toolCallId } } },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    if (answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow") {
      await update(sessionId, toolCall(toolCallId, { status: "in_progress" }));
      const messageId = `reply-${++ids}`;
      for (const word of text.match(/\s*\S+/g) ?? []) {
        signal.throwIfAborted();
        await update(sessionId, { sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text: word } });
      }
      [status, stopReason] = ["completed", "end_turn"];
    } else if (answer.outcome.outcome === "selected") {
      [status, stopReason] = ["failed", "end_turn"]; // rejected
    }
  } catch (error) {
    if (!signal.aborted) throw error;
    seen.push(`turn cancelled: ${text}`);
  }
  await update(sessionId, toolCall(toolCallId, { status }));
  await update(sessionId, { sessionUpdate: "state_update", state: "idle", stopReason });
}

const app = agent()
  .onConnect((connection) => {
    client = connection.client;
  })
  .onRequest("initialize", async ({ params }) => ({
    protocolVersion: params.protocolVersion,
    info: { name: "ts-echo-agent", version: "1.0" },
  }))
  .onRequest("session/new", async () => {
    const sessionId = `session-${++ids}`;
    sessions.set(sessionId, { turn: null, controller: null, cancels: 0 });
    return { sessionId };
  })
  .onRequest("session/prompt", async ({ params, signal }) => {
    const session = sessions.get(params.sessionId);
    if (!session) throw RequestError.sessionNotFound(params.sessionId);
    const text = params.prompt.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(" ");
    const cancels = session.cancels;
    while (session.turn) {
      await Promise.race([session.turn, aborted(signal)]); // held until the turn ends
      if (signal.aborted) seen.push(`prompt withdrawn: ${text}`);
      if (signal.aborted || session.cancels !== cancels) throw RequestError.requestCancelled();
    }
    const messageId = `user-${++ids}`;
    const inserted = update(params.sessionId, { sessionUpdate: "user_message", messageId, content: params.prompt });
    session.controller = new AbortController();
    session.turn = turn(params.sessionId, text, session.controller.signal).finally(() => {
      session.turn = null;
    });
    await inserted;
    return { messageId };
  })
  .onNotification("session/cancel", async ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (!session) return;
    session.cancels += 1;
    session.controller?.abort();
  })
  .onRequest("_interop/seen", (params) => params, async () => ({ seen }));

if (!listen) {
  app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
} else {
  const { createServer } = await import("node:http");
  const { WebSocketServer } = await import("ws");
  const { AcpServer } = await import("@agentclientprotocol/sdk/experimental/server");
  const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await import("@agentclientprotocol/sdk/experimental/node");
  const acpServer = new AcpServer({ agent: app });
  const httpServer = createServer(createNodeHttpHandler(acpServer));
  httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(acpServer, new WebSocketServer({ noServer: true })));
  await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  console.log(`http://127.0.0.1:${httpServer.address().port}/acp`);
  process.stdin.resume();
  process.stdin.on("end", async () => {
    await acpServer.close();
    httpServer.close();
    process.exit(0);
  });
}
