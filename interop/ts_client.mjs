// A client written with the official TypeScript SDK (experimental v2): starts the agent given on
// the command line and prints what it saw as one JSON line. It runs a turn whose permission
// request it allows; starts a second turn and, while its permission request is pending, sends two
// prompts that the agent holds, withdraws one (`$/cancel_request`), and cancels the turn with
// `session/cancel` (the agent withdraws its permission request and answers the other held prompt
// -32800); then provokes error answers.
// `ts_client.mjs --url ws://HOST:PORT/acp` connects to a running agent over WebSocket instead
// (the SDK's `createWebSocketStream`, with the `ws` package: Node 20 has no global WebSocket),
// `--url http://HOST:PORT/acp` over Streamable HTTP (`createHttpStream`).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const [command, ...args] = process.argv.slice(2);
const url = command === "--url" ? args[0] : undefined;
const child = url ? undefined : spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = url?.startsWith("http")
  ? createHttpStream(url)
  : url
  ? createWebSocketStream(url, { WebSocket: (await import("ws")).WebSocket })
  : ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const questions = []; // resolvers of the next permission requests
const nextQuestion = () => new Promise((resolve) => questions.push(resolve));
const asked = [];
const withdrawn = []; // permission requests the agent cancelled, as the handler saw them

async function untilIdle(session) {
  const updates = [];
  for (;;) {
    const message = await session.nextUpdate();
    updates.push(message.update);
    if (message.kind === "stop") return { updates, stopReason: message.stopReason };
  }
}

const errorCode = (promise) => promise.then(() => "no error", (error) => error.code);

const report = await client()
  .onRequest("session/request_permission", ({ params, signal }) => {
    asked.push(params);
    return new Promise((resolve) => {
      questions.shift()?.({ params, answer: resolve });
      signal.addEventListener("abort", () => {
        withdrawn.push(params.title);
        resolve({ outcome: { outcome: "cancelled" } });
      });
    });
  })
  .connectWith(stream, async (agent) => {
    const init = await agent.request("initialize", { protocolVersion: 2, info: { name: "ts-client", version: "1.0" } });
    const session = await agent.buildSession(process.cwd()).start();

    // turn 1: allowed
    let question = nextQuestion();
    const first = await session.prompt("hello from typescript");
    let { params, answer } = await question;
    const allow = params.options.find((option) => option.kind === "allow_once");
    answer({ outcome: { outcome: "selected", optionId: allow.optionId } });
    const firstTurn = { messageId: first.messageId, ...(await untilIdle(session)) };

    // turn 2: held prompts, then cancelled while the permission request is pending
    question = nextQuestion();
    const second = await session.prompt("cancel me");
    await question;
    const heldPrompt = errorCode(session.prompt("held"));
    const withdraw = new AbortController();
    const withdrawnPrompt = errorCode(session.prompt("withdrawn", { cancellationSignal: withdraw.signal }));
    withdraw.abort();
    // Its answer shows both prompts reached the agent before session/cancel, which spares later prompts.
    const held = { withdrawn: await withdrawnPrompt };
    await agent.notify("session/cancel", { sessionId: session.sessionId });
    held.cancelled = await heldPrompt;
    const secondTurn = { messageId: second.messageId, ...(await untilIdle(session)) };

    // error answers
    const errors = {
      invalidParams: await errorCode(agent.request("session/prompt", { sessionId: session.sessionId })),
      unknownSession: await errorCode(agent.request("session/prompt", { sessionId: "nope", prompt: [{ type: "text", text: "hi" }] })),
      unknownMethod: await errorCode(agent.request("session/list", {})),
      unknownExtension: await errorCode(agent.request("_ts/unknown", {})),
    };
    session.dispose();
    return { init, firstTurn, secondTurn, held, errors, asked: asked.map((params) => params.title), withdrawn };
  });
if (child) {
  child.stdin.end();
  await new Promise((resolve) => child.on("exit", resolve));
  console.log(JSON.stringify({ ...report, exitCode: child.exitCode }));
} else {
  // connectWith closed the stream (over HTTP: DELETE); keep-alive sockets would hold the process
  console.log(JSON.stringify({ ...report, exitCode: 0 }));
  process.exit(0);
}
