import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServerAdapter, WebhookAdapter, signBody, signWebhook } from "../../src/adapters/index.js";
import { EchoAgent } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { waitFor } from "../support/wait-for.js";

const SECRET = "a-test-secret-of-32-characters!!";
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(adapters: Array<ApiServerAdapter | WebhookAdapter>): Promise<{ app: FastifyInstance; db: SessionDB; runner: GatewayRunner }> {
  const db = await openSessionDB(join(mkdtempSync(join(tmpdir(), "tl-http-")), "state.db"));
  const app = Fastify();
  for (const adapter of adapters) adapter.routes(app);
  const runner = new GatewayRunner({ store: new SessionRouter({ db }), agentFactory: () => new EchoAgent(), adapters });
  await runner.start();
  cleanups.push(async () => {
    await runner.drain(1000);
    await runner.stop();
    await app.close();
    await db.close();
  });
  return { app, db, runner };
}

describe("api-server adapter", () => {
  it("answers OpenAI-style, keeps the session by header or user field, and keeps history server-side", async () => {
    const { app, db } = await gateway([new ApiServerAdapter()]);
    const first = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "x-threadline-session-key": "s1" },
      payload: { model: "m", messages: [{ role: "user", content: "hello" }] },
      remoteAddress: "127.0.0.1",
    });
    expect(first.statusCode).toBe(200);
    const body = first.json();
    // `model` is the model that answered (the echo agent names none: the gateway's own name), not the one asked for.
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "threadline",
      choices: [{ index: 0, message: { role: "assistant", content: "Echo: hello" }, finish_reason: "stop" }],
    });
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    const sessionId = first.headers["x-threadline-session-id"] as string;
    // The client may resend the whole history: only the last user message is new input.
    const second = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      payload: {
        user: "s1",
        messages: [
          { role: "user", content: "hello" },
          { role: "assistant", content: "Echo: hello" },
          { role: "user", content: [{ type: "text", text: "again" }] },
        ],
      },
      remoteAddress: "127.0.0.1",
    });
    expect(second.json().choices[0].message.content).toBe("Echo: again");
    expect(second.headers["x-threadline-session-id"]).toBe(sessionId);
    expect((await db.getMessages(sessionId)).map((m) => m.content)).toEqual(["hello", "Echo: hello", "again", "Echo: again"]);
  });

  it("streams one chunk and [DONE] when asked; lists a model", async () => {
    const { app } = await gateway([new ApiServerAdapter()]);
    const streamed = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "x-threadline-session-key": "s" },
      payload: { stream: true, messages: [{ role: "user", content: "hi" }] },
      remoteAddress: "127.0.0.1",
    });
    expect(streamed.headers["content-type"]).toMatch(/text\/event-stream/);
    const events = streamed.body.split("\n\n").filter(Boolean);
    expect(JSON.parse(events[0]!.slice(6)).choices[0].delta.content).toBe("Echo: hi");
    expect(events.at(-1)).toBe("data: [DONE]");
    const models = await app.inject({ method: "GET", url: "/v1/models", remoteAddress: "127.0.0.1" });
    expect(models.json().data[0].id).toBe("threadline");
  });

  it("rejects bad requests clearly", async () => {
    const { app } = await gateway([new ApiServerAdapter()]);
    const noKey = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      payload: { messages: [{ role: "user", content: "x" }] },
      remoteAddress: "127.0.0.1",
    });
    expect(noKey.statusCode).toBe(400);
    expect(noKey.json().error.message).toMatch(/X-Threadline-Session-Key/);
    const noUser = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "x-threadline-session-key": "s" },
      payload: { messages: [{ role: "system", content: "x" }] },
      remoteAddress: "127.0.0.1",
    });
    expect(noUser.statusCode).toBe(400);
    expect(noUser.json().error.message).toMatch(/role":"user/);
  });

  it("without tokens only loopback clients are allowed; with tokens a bearer token is required", async () => {
    const open = await gateway([new ApiServerAdapter()]);
    const remote = await open.app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "x-threadline-session-key": "s" },
      payload: { messages: [{ role: "user", content: "x" }] },
      remoteAddress: "10.1.2.3",
    });
    // 401 (issue 27: a keyless refusal is "authenticate first", the same status as a missing token).
    expect(remote.statusCode).toBe(401);
    expect(remote.json().error.message).toContain("adapters.apiServer.tokens");
    const locked = await gateway([new ApiServerAdapter({ tokens: ["token-123456"] })]);
    const request = (auth?: string) =>
      locked.app.inject({
        method: "POST",
        url: "/v1/chat/completions",
        headers: { "x-threadline-session-key": "s", ...(auth ? { authorization: auth } : {}) },
        payload: { messages: [{ role: "user", content: "x" }] },
        remoteAddress: "10.1.2.3",
      });
    expect((await request()).statusCode).toBe(401);
    expect((await request("Bearer wrong-token")).statusCode).toBe(401);
    expect((await request("Bearer token-123456")).statusCode).toBe(200);
  });

  it("slash commands answer in the response", async () => {
    const { app } = await gateway([new ApiServerAdapter()]);
    await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "x-threadline-session-key": "s" },
      payload: { messages: [{ role: "user", content: "hi" }] },
      remoteAddress: "127.0.0.1",
    });
    const status = await app.inject({
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "x-threadline-session-key": "s" },
      payload: { messages: [{ role: "user", content: "/status" }] },
      remoteAddress: "127.0.0.1",
    });
    expect(status.json().choices[0].message.content).toMatch(/Messages: 2/);
  });
});

describe("webhook adapter", () => {
  async function callbackServer(
    failFirst = 0,
  ): Promise<{ url: string; received: Array<{ body: string; signature: string | undefined; timestamp: string | undefined }> }> {
    const received: Array<{ body: string; signature: string | undefined; timestamp: string | undefined }> = [];
    let failures = failFirst;
    const server: Server = createServer((request: IncomingMessage, response) => {
      let body = "";
      request.on("data", (c: Buffer) => (body += c.toString()));
      request.on("end", () => {
        if (failures > 0) {
          failures -= 1;
          response.writeHead(503).end();
          return;
        }
        received.push({
          body,
          signature: request.headers["x-threadline-signature"] as string | undefined,
          timestamp: request.headers["x-threadline-timestamp"] as string | undefined,
        });
        response.writeHead(200).end("{}");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/replies`, received };
  }

  const post = (app: FastifyInstance, body: object, secret = SECRET) => {
    const raw = JSON.stringify(body);
    return app.inject({ method: "POST", url: "/webhook", headers: { "content-type": "application/json", ...signWebhook(secret, raw) }, payload: raw });
  };

  it("accepts signed messages, acknowledges after storing, and posts signed replies to the callback (retrying failures)", async () => {
    const callback = await callbackServer(2);
    const webhook = new WebhookAdapter({ secret: SECRET, callbackUrl: callback.url, retryBaseMs: 10 });
    const { app } = await gateway([webhook]);
    const ack = await post(app, { chatId: "c1", userId: "u1", text: "hello", messageId: "m1" });
    expect(ack.statusCode).toBe(202);
    expect(ack.json()).toMatchObject({ status: "accepted" });
    await waitFor(() => callback.received.length > 0, { what: "the signed reply at the callback", timeoutMs: 5_000 });
    expect(callback.received).toHaveLength(1);
    const reply = JSON.parse(callback.received[0]!.body);
    expect(reply).toMatchObject({ chatId: "c1", userId: "u1", text: "Echo: hello", kind: "reply", inReplyTo: ["m1"] });
    // Signed over "<timestamp>.<body>", with a current timestamp.
    const { timestamp, signature, body: rawReply } = callback.received[0]!;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(signature).toBe(signBody(SECRET, `${timestamp}.${rawReply}`));
    // A redelivery of the same platform message is a duplicate.
    expect((await post(app, { chatId: "c1", userId: "u1", text: "hello", messageId: "m1" })).json().status).toBe("duplicate");
  });

  it("rejects a wrong or missing signature (nothing stored) and malformed bodies", async () => {
    const webhook = new WebhookAdapter({ secret: SECRET });
    const { app, db } = await gateway([webhook]);
    expect((await post(app, { chatId: "c1", userId: "u1", text: "x" }, "another-secret-of-enough-length")).statusCode).toBe(401);
    const unsigned = await app.inject({ method: "POST", url: "/webhook", headers: { "content-type": "application/json" }, payload: "{}" });
    expect(unsigned.statusCode).toBe(401);
    expect(unsigned.json().error.message).toMatch(/x-threadline-signature/);
    expect((await db.getStats()).totalSessions).toBe(0);
    const bad = await post(app, { chatId: "c1", text: "no user" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/userId/);
    expect(() => new WebhookAdapter({ secret: "short" })).toThrow(/at least 16/);
  });
});
