// A client written with the official TypeScript SDK (experimental v2) that serves an MCP server
// named `calc` (a tool `add(a, b)`) to its agent over ACP with the SDK's `McpOverAcpProvider`:
// starts the agent given on the command line, declares calc in `session/new`, prompts `add 2 3`
// and prints, as one JSON line, the agent's messages, the turn's stop reason and what calc saw.
// `ts_mcp_client.mjs --url http://HOST:PORT/acp` connects to a running agent over Streamable HTTP
// instead (the SDK's `createHttpStream`), `--url ws://HOST:PORT/acp` over WebSocket
// (`createWebSocketStream`, with the `ws` package: Node 20 has no global WebSocket).
// `--prompt TEXT` (first) prompts TEXT instead of `add 2 3`. calc has a second tool, `wait`, that
// answers only when its request is cancelled (it is then in `calls` as `cancelled`).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { McpOverAcpProvider } from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const prompted = process.argv[2] === "--prompt";
const text = prompted ? process.argv[3] : "add 2 3";
const [command, ...args] = process.argv.slice(prompted ? 4 : 2);
const url = command === "--url" ? args[0] : undefined;
const child = url ? undefined : spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = url?.startsWith("http")
  ? createHttpStream(url)
  : url
  ? createWebSocketStream(url, { WebSocket: (await import("ws")).WebSocket })
  : ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const provider = new McpOverAcpProvider();
const messages = {}; // message id -> text
const calls = []; // the inner requests calc saw: method and protocol version
let idle;
const ended = new Promise((resolve) => (idle = resolve));

// calc, an MCP server written against the inner protocol: tools/list and tools/call of `add` and `wait`
function calc({ method, params, protocolVersion, signal }) {
  calls.push({ method, protocolVersion });
  if (method === "tools/list") {
    const schema = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };
    const tools = [{ name: "add", inputSchema: schema }, { name: "wait", inputSchema: { type: "object" } }];
    return { result: { resultType: "complete", ttlMs: 0, cacheScope: "private", tools } };
  }
  if (method === "tools/call" && params?.name === "wait") {
    return new Promise((_, reject) => {
      signal.addEventListener("abort", () => {
        calls.push({ method: "cancelled", protocolVersion });
        reject(signal.reason);
      });
    });
  }
  if (method === "tools/call" && params?.name === "add") {
    const { a, b } = params.arguments;
    return { result: { resultType: "complete", content: [{ type: "text", text: String(a + b) }], isError: false } };
  }
  return { error: { code: -32601, message: `no method ${method}` } };
}

const report = await client()
  .onRequest("mcp/message", provider.handleRequest)
  .onNotification("session/update", ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      messages[update.messageId] = (messages[update.messageId] ?? "") + update.content.text;
    }
    if (update.sessionUpdate === "state_update" && update.state === "idle") idle(update.stopReason);
  })
  .connectWith(stream, async (agent) => {
    const init = await agent.request("initialize", { protocolVersion: 2, info: { name: "ts-mcp-client", version: "1.0" } });
    const registration = provider.registerServer(agent, { name: "calc", handler: calc });
    const session = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [registration.declaration] });
    await agent.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] });
    const stopReason = await ended;
    return { agent: init.info?.name, mcpAcp: init.capabilities?.session?.mcp?.acp !== undefined, messages: Object.values(messages), stopReason, calls };
  });
console.log(JSON.stringify(report));
if (child) {
  child.stdin.end();
} else {
  process.exit(0); // connectWith closed the stream (over HTTP: DELETE); keep-alive sockets would hold the process
}
