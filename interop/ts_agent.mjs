// An echo agent written with the official TypeScript SDK (experimental v2), over stdio.
import { Readable, Writable } from "node:stream";
import { agent, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2/unstable";

const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
agent()
  .onRequest("initialize", async ({ params }) => ({
    protocolVersion: params.protocolVersion,
    info: { name: "ts-echo-agent", version: "1.0" },
  }))
  .onRequest("session/new", async () => ({ sessionId: "ts-session" }))
  .onRequest("session/prompt", async ({ params, client }) => {
    const options = [{ optionId: "yes", name: "Yes", kind: "allow_once" }];
    const answer = await client.request("session/request_permission", {
      sessionId: params.sessionId,
      title: "Echo?",
      options,
    });
    for (const block of params.prompt) {
      await client.notify("session/update", {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", messageId: "m1", content: block },
      });
    }
    await client.notify("session/update", {
      sessionId: params.sessionId,
      update: {
        sessionUpdate: "agent_message_chunk",
        messageId: "m1",
        content: { type: "text", text: `permission ${answer.outcome.outcome} ${answer.outcome.optionId}` },
      },
    });
    return { messageId: "m1" };
  })
  .connect(stream);
