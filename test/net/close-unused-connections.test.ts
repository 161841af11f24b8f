/**
 * Closing the REST API and the MCP HTTP server while a client holds a connection that never
 * sent a request (what Chromium's preconnect leaves open): `close()` ends that connection
 * instead of waiting for Node's 60-second headers timeout, and still lets a running request
 * finish, then ends its connection rather than keeping it alive for Fastify's 72 s.
 */
import { connect, type Socket } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { buildServer } from "../../src/http-api/index.js";
import { openSessionDB, type SessionDB } from "../../src/store/index.js";

let dir: string;
let db: SessionDB;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "threadline-close-"));
  db = await openSessionDB(join(dir, "state.db"));
});
afterAll(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});

function portOf(app: FastifyInstance): number {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return address.port;
}

/** A raw TCP connection that sends nothing, resolved once connected. */
async function silentConnection(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return { socket, closed: new Promise((resolve) => socket.once("close", () => resolve())) };
}

describe("closing with an unused connection open", { timeout: 20_000 }, () => {
  it("the REST API closes, ending the connection that never sent a request", async () => {
    const app = await buildServer({ db, keys: [{ key: "k".repeat(24) }], listenHost: "127.0.0.1" });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const { closed } = await silentConnection(portOf(app));
    // Without the fix close() waits for the 60 s headers timeout, past this test's 20 s limit.
    await app.close();
    await closed;
    expect(app.server.listening).toBe(false);
  });

  it("a request that is running when close starts still gets its answer", async () => {
    const app = await buildServer({ db, keys: [{ key: "k".repeat(24) }], listenHost: "127.0.0.1" });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const started = new Promise<void>((resolve) => (arrived = resolve));
    app.get("/slow-probe", async () => {
      arrived();
      await held;
      return { ok: true };
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const port = portOf(app);
    const { closed } = await silentConnection(port);
    const answer = fetch(`http://127.0.0.1:${port}/slow-probe`, { headers: { authorization: `Bearer ${"k".repeat(24)}` } });
    await started;
    const closing = app.close();
    await closed;
    release();
    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    await closing;
  });
});
