// A v1 client written with the official TypeScript SDK's stable (v1) API: starts the agent given on
// the command line, runs a turn whose permission request it allows, then a turn it cancels with
// `session/cancel` while the permission request is pending, and prints what it saw as one JSON
// line (the report interop/py_client_v1.py prints).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
let updates = [];
const asked = [];
let hold = null; // during the second turn: resolves once its permission request is pending

const report = await client()
  .onNotification("session/update", ({ params }) => {
    updates.push(params.update);
  })
  .onRequest("session/request_permission", ({ params, signal }) => {
    asked.push(params.options.map((option) => option.optionId));
    if (!hold) return { outcome: { outcome: "selected", optionId: "allow" } };
    hold();
    return new Promise((resolve) => {
      signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }));
      setTimeout(() => resolve({ outcome: { outcome: "cancelled" } }), 10000).unref();
    });
  })
  .connectWith(stream, async (agent) => {
    const init = await agent.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: {},
      clientInfo: { name: "ts-v1-client", version: "1.0" },
    });
    const { sessionId } = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
    const text = (words) => [{ type: "text", text: words }];
    const first = await agent.request("session/prompt", { sessionId, prompt: text("hello from typescript") });
    const firstUpdates = updates;
    updates = [];
    const pending = new Promise((resolve) => (hold = resolve));
    const second = agent.request("session/prompt", { sessionId, prompt: text("again") });
    await pending;
    await agent.notify("session/cancel", { sessionId });
    const stopped = await second;
    return { init, firstStop: first.stopReason, firstUpdates, secondStop: stopped.stopReason, asked };
  });
child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
console.log(JSON.stringify({ ...report, exitCode: child.exitCode }));
