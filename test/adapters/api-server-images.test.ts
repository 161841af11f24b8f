// The api-server adapter's image parts: a data: URL image reaches the gateway as InboundMedia
// (the data URL itself, for the media ingest to decode); any other URL, another data: type and an
// unknown part type are refused with an OpenAI-style 400; the body limit is the adapter's own.
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServerAdapter, type ApiServerAdapterOptions } from "../../src/adapters/index.js";
import type { InboundMessage } from "../../src/gateway/index.js";

/** A 1×1 PNG. */
const PNG_1X1 = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** The adapter on a Fastify app, connected to a handler that records each message and answers it at once. */
async function adapterApp(options: ApiServerAdapterOptions = {}): Promise<{ app: FastifyInstance; received: InboundMessage[] }> {
  const adapter = new ApiServerAdapter(options);
  const app = Fastify();
  adapter.routes(app);
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    queueMicrotask(
      () => void adapter.send(message.source, { text: `got ${message.media?.length ?? 0} image(s)`, kind: "reply", inReplyTo: [message.messageId ?? ""] }),
    );
    return { status: "accepted", sessionKey: "img" };
  });
  await app.ready();
  apps.push(app);
  return { app, received };
}

const chat = (app: FastifyInstance, content: unknown) =>
  app.inject({
    method: "POST",
    url: "/v1/chat/completions",
    headers: { "x-threadline-session-key": "img" },
    payload: { messages: [{ role: "user", content }] },
    remoteAddress: "127.0.0.1",
  });

describe("api-server adapter: image parts", () => {
  it("passes a data: URL image to the gateway as InboundMedia of kind image, with the text parts as the message text", async () => {
    const { app, received } = await adapterApp();
    const url = `data:image/png;base64,${PNG_1X1.toString("base64")}`;
    const res = await chat(app, [
      { type: "text", text: "what is in this picture?" },
      { type: "image_url", image_url: { url, detail: "auto" } },
      { type: "text", text: "be brief" },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json().choices[0].message.content).toBe("got 1 image(s)");
    expect(received).toHaveLength(1);
    expect(received[0]!.text).toBe("what is in this picture?\nbe brief");
    expect(received[0]!.media).toEqual([{ kind: "image", url, mimeType: "image/png" }]);
    // A plain string content carries no media.
    await chat(app, "no picture");
    expect(received[1]!.media).toBeUndefined();
  });

  it("refuses an http(s) URL, another data: type and an unknown part type with a 400 that says what is accepted", async () => {
    const { app, received } = await adapterApp();
    const http = await chat(app, [{ type: "image_url", image_url: { url: "https://example.invalid/cat.png" } }]);
    expect(http.statusCode).toBe(400);
    expect(http.json()).toEqual({
      error: {
        message: "Content part 0: image_url must be a data: URL (base64); Threadline never fetches URLs named in a message.",
        type: "invalid_request_error",
        code: 400,
      },
    });
    const svg = await chat(app, [{ type: "image_url", image_url: { url: `data:image/svg+xml;base64,${Buffer.from("<svg/>").toString("base64")}` } }]);
    expect(svg.statusCode).toBe(400);
    expect(svg.json().error.message).toMatch(/data:<type>;base64,<bytes> with a type among image\/png, image\/jpeg, image\/gif, image\/webp/u);
    const notBase64 = await chat(app, [{ type: "image_url", image_url: { url: "data:image/png;base64,not*base64!" } }]);
    expect(notBase64.json().error.message).toMatch(/is not base64/u);
    const audio = await chat(app, [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }]);
    expect(audio.statusCode).toBe(400);
    expect(audio.json().error.message).toMatch(/type "input_audio": this gateway takes "text" and "image_url" parts/u);
    expect(received).toEqual([]);
  });

  it("takes a body up to its own limit (over the server's default), and answers 413 in the OpenAI shape above it", async () => {
    const { app, received } = await adapterApp({ maxBodyBytes: 4096 });
    const fits = await chat(app, [{ type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.alloc(2000).toString("base64")}` } }]);
    expect(fits.statusCode).toBe(200);
    const big = await chat(app, [{ type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.alloc(4000).toString("base64")}` } }]);
    expect(big.statusCode).toBe(413);
    expect(big.json().error.message).toMatch(/over this gateway's limit of 4096 bytes/u);
    expect(received).toHaveLength(1);
    // The default is above Fastify's 1 MiB: a 2 MiB image goes through.
    const { app: roomy } = await adapterApp();
    const large = await chat(roomy, [{ type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.alloc(2 * 1024 * 1024).toString("base64")}` } }]);
    expect(large.statusCode).toBe(200);
  });
});
