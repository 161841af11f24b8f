/**
 * Threat (issue 30): a URL named in a message makes the gateway fetch it (server-side request
 * forgery: an API client points an `image_url` at an internal service, a cloud metadata
 * address, or a server that logs who asks). Threadline never fetches URLs named in a message:
 * `/v1/chat/completions` takes images only as `data:` URLs, and refuses any other URL with a
 * 400 before the message reaches the gateway.
 *
 * A real gateway (GatewayRunner, SQLite store, the api-server adapter on a real loopback
 * server) and a loopback HTTP server standing for the URL's target, which must receive nothing.
 */
import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { ApiServerAdapter } from "../../src/adapters/index.js";
import { EchoAgent } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import { openSessionDB } from "../../src/index.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("security: an image_url naming a URL is never fetched", () => {
  it("refuses http, https and file URLs with a 400, stores nothing, and the named server gets no request", async () => {
    const asked: IncomingMessage[] = [];
    const target = createServer((request, response) => {
      asked.push(request);
      response.writeHead(200, { "content-type": "image/png" }).end("not really a png");
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => target.close(resolve)));
    const port = (target.address() as AddressInfo).port;

    const db = await openSessionDB(join(mkdtempSync(join(tmpdir(), "tl-imgurl-")), "state.db"));
    const adapter = new ApiServerAdapter();
    const app = Fastify();
    adapter.routes(app);
    const runner = new GatewayRunner({ store: new SessionRouter({ db }), agentFactory: () => new EchoAgent(), adapters: [adapter] });
    await runner.start();
    await app.listen({ host: "127.0.0.1", port: 0 });
    cleanups.push(async () => {
      await runner.drain(1000);
      await runner.stop();
      await app.close();
      await db.close();
    });
    const gateway = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    for (const url of [`http://127.0.0.1:${port}/cat.png`, `https://127.0.0.1:${port}/cat.png`, `//127.0.0.1:${port}/cat.png`, "file:///etc/passwd"]) {
      const response = await fetch(`${gateway}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-threadline-session-key": "ssrf" },
        body: JSON.stringify({
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "describe this" },
                { type: "image_url", image_url: { url } },
              ],
            },
          ],
        }),
      });
      expect(response.status, url).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
        "image_url must be a data: URL (base64); Threadline never fetches URLs named in a message.",
      );
    }
    // Nothing reached the gateway: no session, no message; and the named server was never asked.
    expect((await db.listSessions({ limit: 10 })).items).toEqual([]);
    expect(asked).toEqual([]);
  });
});
