// An agent written with the official TypeScript SDK (experimental v2), over stdio, that calls the
// MCP servers its client serves over ACP with the SDK's `McpOverAcpCaller`: the counterpart of
// examples/mcp_agent.py. It advertises `session.mcp.acp`; on a prompt `add A B` it calls the tool
// `add` of the ACP-transport MCP server named `calc` given in `session/new` (`tools/call`, the
// caller adds the 2026-07-28 envelope), says `A + B = RESULT` and reports `idle`.
// On the prompt `hostile` it calls calc the hostile ways and says, as one JSON object, what each
// call got (`code`: the outer error's; `aborted`: the -32800 that answers its withdrawal, the
// SDK's caller waiting for it after its abort signal; `result`): `unknownServer` (a server id
// nobody declared), `neverAnswers` (calc's tool `wait`, aborted after 0.5 s: `$/cancel_request`)
// and `afterwards` (`add 2 3`); on `hostile huge`, `hugeParams` too before `afterwards` (`add`
// with params over the 32 MiB a peer reads, aborted after 10 s).
// `ts_mcp_agent.mjs --listen` serves it over Streamable HTTP and WebSocket instead, with the SDK's
// `AcpServer` on a free port of 127.0.0.1: it prints `http://127.0.0.1:PORT/acp` and serves until
// stdin ends.
import { Readable, Writable } from "node:stream";
import { RequestError, agent, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { McpOverAcpCaller } from "@agentclientprotocol/sdk/experimental/v2/unstable";

const caller = new McpOverAcpCaller({ clientInfo: { name: "ts-mcp-agent", version: "1.0" } });
const sessions = new Map(); // id -> its ACP-transport MCP servers by name
let ids = 0;
let client;

const update = (sessionId, update) => client.notify("session/update", { sessionId, update });

// What one call got: its outer error's code, `aborted` when its signal ended it, or its result's text.
async function outcome(serverId, method, params, timeoutMs) {
  try {
    const options = timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {};
    const got = await caller.request(client, serverId, method, params, options);
    if ("error" in got) return { innerCode: got.error.code };
    return { result: got.result.content.map((block) => block.text).join(" ") };
  } catch (error) {
    return error instanceof RequestError && error.code !== -32800 ? { code: error.code } : { aborted: true };
  }
}

async function hostile(calc, huge) {
  const padding = "x".repeat(32 * 1024 * 1024);
  const big = { name: "add", arguments: { a: 1, b: 2, padding } };
  return JSON.stringify({
    unknownServer: await outcome("no-such-server", "tools/list", {}),
    neverAnswers: await outcome(calc.serverId, "tools/call", { name: "wait", arguments: {} }, 500),
    ...(huge ? { hugeParams: await outcome(calc.serverId, "tools/call", big, 10000) } : {}),
    afterwards: await outcome(calc.serverId, "tools/call", { name: "add", arguments: { a: 2, b: 3 } }),
  });
}

async function answer(servers, text) {
  if (text.startsWith("hostile") && servers.calc) return await hostile(servers.calc, text === "hostile huge");
  const [verb, a, b] = text.split(/\s+/);
  if (verb !== "add" || !servers.calc) return "ask me: add A B";
  const outcome = await caller.request(client, servers.calc.serverId, "tools/call", {
    name: "add",
    arguments: { a: JSON.parse(a), b: JSON.parse(b) },
  });
  if ("error" in outcome) return `calc failed: ${outcome.error.message}`;
  return `${a} + ${b} = ${outcome.result.content.map((block) => block.text).join(" ")}`;
}

async function turn(sessionId, text) {
  await update(sessionId, { sessionUpdate: "state_update", state: "running" });
  try {
    const messageId = `reply-${++ids}`;
    const content = { type: "text", text: await answer(sessions.get(sessionId), text) };
    await update(sessionId, { sessionUpdate: "agent_message_chunk", messageId, content });
  } finally {
    await update(sessionId, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  }
}

const app = agent()
  .onConnect((connection) => {
    client = connection.client;
  })
  .onRequest("initialize", async ({ params }) => ({
    protocolVersion: params.protocolVersion,
    info: { name: "ts-mcp-agent", version: "1.0" },
    capabilities: { session: { mcp: { acp: {} } } },
  }))
  .onNotification("mcp/message", caller.handleNotification)
  .onRequest("session/new", async ({ params }) => {
    const sessionId = `session-${++ids}`;
    const servers = Object.fromEntries((params.mcpServers ?? []).filter((s) => s.type === "acp").map((s) => [s.name, s]));
    sessions.set(sessionId, servers);
    return { sessionId };
  })
  .onRequest("session/prompt", async ({ params }) => {
    if (!sessions.has(params.sessionId)) throw RequestError.sessionNotFound(params.sessionId);
    const text = params.prompt.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(" ");
    const messageId = `user-${++ids}`;
    await update(params.sessionId, { sessionUpdate: "user_message", messageId, content: params.prompt });
    turn(params.sessionId, text);
    return { messageId };
  });

if (process.argv[2] !== "--listen") {
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
