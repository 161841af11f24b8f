/**
 * Threat (issue 30): a message names a URL as its attachment — an attacker's address, or a
 * platform file URL that carries the bot's token. Passed on as an `image_url` part, the model
 * provider would fetch it (a request out on the attacker's behalf), and the URL, token and
 * all, would be stored in the transcript and exported.
 *
 * Handled: only the platform adapter's `fetchMedia` reads an attachment, from the platform's own
 * file API; a `data:` URL is decoded locally. An attachment the gateway cannot read through its
 * adapter is noted as text (kind, name, type), never with its URL, and nothing fetches it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import { OpenAiCompatibleAgent } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

forEachBackend((backend) => {
  it("a URL an attachment names is neither fetched, nor stored, nor handed to the model", async () => {
    const hits: string[] = [];
    const elsewhere: Server = createServer((req, res) => {
      hits.push(req.url ?? "");
      res.writeHead(200, { "content-type": "image/png" }).end("not really a png");
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
    const url = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/file/bot123456:SECRET-TOKEN/photo.png`;
    const provider = await startFakeOpenAiServer();
    cleanups.push(() => provider.close());
    const { db } = await backend.fresh();
    const chat = new LocalAdapter();
    const runner = new GatewayRunner({
      store: new SessionRouter({ db }),
      agentFactory: () => new OpenAiCompatibleAgent({ baseUrl: provider.url, apiKey: "sk-test", model: "fake-model" }),
      adapters: [chat],
    });
    await runner.start();
    cleanups.push(() => runner.stop());

    await chat.receive("what is this?", {}, { media: [{ kind: "image", url, mimeType: "image/png", fileName: "photo.png" }] });
    const reply = await chat.nextMessage((d) => d.message.kind === "reply");
    const stored = await db.getMessages(reply.message.sessionId!);
    expect(stored[0]!.content).toEqual([
      { type: "text", text: "what is this?" },
      { type: "text", text: "[image: photo.png, image/png]" },
    ]);
    expect(JSON.stringify(stored)).not.toContain("SECRET-TOKEN");
    expect(JSON.stringify(provider.chatRequests().map((r) => r.body))).not.toContain("127.0.0.1");
    expect(hits).toEqual([]);
  });
});
