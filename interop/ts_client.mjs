// A client written with the official TypeScript SDK (experimental v2): starts the agent
// given on the command line, runs one prompt turn and prints what it saw as one JSON line.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2/unstable";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const updates = [];
const report = await client()
  .onNotification("session/update", async ({ params }) => {
    updates.push(params.update);
  })
  .connectWith(stream, async (agent) => {
    const init = await agent.request("initialize", {
      protocolVersion: 2,
      info: { name: "ts-client", version: "1.0" },
    });
    const session = await agent.request("session/new", { cwd: process.cwd() });
    const prompt = await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hello from typescript" }],
    });
    let unknown;
    try {
      await agent.request("session/list", {});
    } catch (error) {
      unknown = error.code;
    }
    return { init, session, prompt, unknown };
  });
child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
console.log(JSON.stringify({ ...report, updates, exitCode: child.exitCode }));
