/**
 * Authentication and the error shape over real loopback HTTP, on SQLite and PostgreSQL:
 * 401 without a key and 403 with a wrong one on every route, X-API-Key and bearer tokens,
 * the unauthenticated loopback mode and the refusals to start, and the one error shape for
 * 400/404/413/415/422/500/503 (a 500 says "internal error" with a request id, logs the
 * rest and never shows a stack).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError, StoreError } from "../../src/index.js";
import { ApiKeyring, buildServer, checkApiAccess, HttpError } from "../../src/http-api/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { waitFor } from "../support/wait-for.js";
import { withTableGone, withTableLocked } from "./broken-store.js";
import { ADMIN, ALICE, call, closeServers, hasNoStack, seed, startApi } from "./api-harness.js";

afterEach(closeServers);

/** Every operation of the OpenAPI document as [method, concrete path, public]. */
async function operations(url: string): Promise<Array<[string, string, boolean]>> {
  const doc = (await call(url, "GET", "/openapi.json", { key: null })).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const out: Array<[string, string, boolean]> = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops))
      out.push([method.toUpperCase(), path.replace(/\{\w+\}/gu, "some-id"), Array.isArray(op.security) && op.security.length === 0]);
  }
  return out;
}

forEachBackend((backend) => {
  it("every route but /openapi.json: 401 without a key (with WWW-Authenticate), 403 with a wrong one", async () => {
    const { db } = await backend.fresh();
    const api = await startApi(db);
    const ops = await operations(api.url);
    expect(ops.length).toBeGreaterThanOrEqual(14);
    for (const [method, path, isPublic] of ops) {
      if (method === "HEAD") {
        // No body to parse: the status and the challenge header say it.
        const anonymous = await fetch(`${api.url}${path}`, { method });
        expect(anonymous.status, `${method} ${path}`).toBe(401);
        expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="threadline"');
        expect((await fetch(`${api.url}${path}`, { method, headers: { "x-api-key": "wrong-key-0123456789abcdef" } })).status, `${method} ${path}`).toBe(403);
        continue;
      }
      const body = method === "GET" || method === "DELETE" ? {} : { body: {} };
      const anonymous = await call(api, method, path, { key: null, ...body });
      const wrong = await call(api, method, path, { key: "wrong-key-0123456789abcdef", ...body });
      if (isPublic) {
        expect(anonymous.status, `${method} ${path}`).toBe(200);
        continue;
      }
      expect(anonymous.status, `${method} ${path}`).toBe(401);
      expect(anonymous.body.error.code).toBe("TL_ERR_UNAUTHORIZED");
      expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="threadline"');
      expect(wrong.status, `${method} ${path}`).toBe(403);
      expect(wrong.body).toEqual({ error: { code: "TL_ERR_FORBIDDEN", message: "The API key is not valid." } });
    }
  });

  it("keys are accepted as X-API-Key or as a bearer token; other schemes count as no key", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    expect((await call(api, "GET", "/sessions", { key: ALICE })).body.items).toHaveLength(2);
    expect((await call(api, "GET", "/sessions", { bearer: ALICE })).body.items).toHaveLength(2);
    expect((await call(api, "GET", "/sessions", { key: null, headers: { authorization: `bearer ${ADMIN}` } })).body.items).toHaveLength(4);
    expect((await call(api, "GET", "/sessions", { bearer: "wrong-key-0123456789abcdef" })).status).toBe(403);
    expect((await call(api, "GET", "/sessions", { bearer: ALICE.slice(0, -1) })).status).toBe(403);
    expect(
      (await call(api, "GET", "/sessions", { key: null, headers: { authorization: `Basic ${Buffer.from(`u:${ADMIN}`).toString("base64")}` } })).status,
    ).toBe(401);
    expect((await call(api, "GET", "/sessions", { key: "" })).status).toBe(401);
    // X-API-Key wins over a bearer token.
    expect((await call(api, "GET", "/sessions", { key: ALICE, headers: { authorization: `Bearer ${ADMIN}` } })).body.items).toHaveLength(2);
  });

  it("without keys the API refuses to start, unless allowUnauthenticatedLoopback on a loopback host: then loopback clients need no key", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    await expect(buildServer({ db })).rejects.toThrow(/needs at least one key in api\.keys/);
    await expect(buildServer({ db, keys: [] })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(buildServer({ db, allowUnauthenticatedLoopback: true, listenHost: "0.0.0.0" })).rejects.toThrow(
      /api\.allowUnauthenticatedLoopback: the API would listen on 0\.0\.0\.0, which is not a loopback address/,
    );
    await expect(buildServer({ db, keys: [{ key: "short" }] })).rejects.toThrow(/api\.keys\.0\.key: must be an API key of at least 16 characters/);
    await expect(buildServer({ db, keys: [{ key: ADMIN }, { key: ADMIN, userId: "x" }] })).rejects.toThrow(/api\.keys\.1\.key: the same key is listed twice/);
    const open = await startApi(db, { keys: [], allowUnauthenticatedLoopback: true, listenHost: "localhost" });
    const reply = await call(open, "GET", "/sessions", { key: null });
    expect(reply.status).toBe(200);
    expect(reply.body.items).toHaveLength(4);
    // Such a server serves no one but loopback clients.
    const keyring = new ApiKeyring({ keys: [], allowUnauthenticatedLoopback: true });
    const remote = { socket: { remoteAddress: "10.1.2.3" }, headers: {} } as never;
    expect(() => keyring.authenticate(remote)).toThrow(HttpError);
    expect(() => checkApiAccess({ keys: [], allowUnauthenticatedLoopback: true }, "::1")).not.toThrow();
    expect(() => checkApiAccess({ keys: [], allowUnauthenticatedLoopback: true }, "192.168.1.10")).toThrow(InvalidInputError);
  });

  it("a 500 says 'internal error' with the request id, logs the error, and shows no stack or detail", async () => {
    const { db, target } = await backend.fresh();
    await seed(db);
    const logged: Array<Record<string, unknown>> = [];
    const errorLogger = { error: (object: Record<string, unknown>) => void logged.push(object) };
    const api = await startApi(db, { errorLogger });
    // A real store failure: the sessions table is gone from under the store (the backend's own error).
    const reply = await withTableGone(target, "sessions", () => call(api, "GET", "/sessions"));
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({ error: { code: "TL_ERR_INTERNAL", message: "internal error", details: { requestId: expect.any(String) } } });
    expect(reply.headers.get("x-request-id")).toBe(reply.body.error.details.requestId);
    expect(hasNoStack(reply.text)).toBe(true);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ requestId: reply.body.error.details.requestId, method: "GET", url: "/sessions" });
    const err = logged[0]!["err"] as Error;
    expect(err).toBeInstanceOf(StoreError);
    // The log has the detail (the missing table), the reply none of it: not the message, the database or the table.
    expect(err.message).toMatch(/sessions/u);
    expect(reply.text).not.toContain(err.message);
    expect(reply.text).not.toContain(target.schema ?? target.url);
    expect(reply.text).not.toMatch(/sessions_gone|no such table|does not exist/u);
    // The store works again once the table is back.
    expect((await call(api, "GET", "/sessions")).status).toBe(200);
  });

  it("an export that fails mid-stream is cut (the client sees an incomplete response) and logged; one failing at once is a 500", async () => {
    const { db, target } = await backend.fresh();
    // More than the socket buffers hold: the export is still running when the client stops reading.
    const big = "y".repeat(192 * 1024);
    for (let i = 0; i < 100; i++) {
      const id = `big-${String(i).padStart(3, "0")}`;
      await db.createSession({ id, source: "cli", startedAt: 1_700_000_000 + i });
      await db.appendMessage(id, { role: "user", content: big, timestamp: 1_700_000_000 + i });
    }
    const logged: Array<Record<string, unknown>> = [];
    const errorLogger = { error: (object: Record<string, unknown>) => void logged.push(object) };
    const api = await startApi(db, { errorLogger });
    let exportResponse: ServerResponse | null = null;
    api.app.server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      if (request.url === "/export") exportResponse = response;
    });
    const response = await fetch(`${api.url}/export`, { headers: { "x-api-key": ADMIN } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    // The barrier: the server's writes back up, so the store's export waits for the reader.
    await waitFor(() => exportResponse?.writableNeedDrain === true, { what: "the export response to wait for drain" });
    // A real failure mid-stream: the messages table goes away while the export waits; reading on meets it.
    await withTableGone(target, "messages", async () => {
      const readAll = async (): Promise<void> => {
        for (;;) if ((await reader.read()).done) return;
      };
      await expect(readAll()).rejects.toThrow();
      await waitFor(() => logged.length === 1, { what: "the export failure to be logged" });
      const err = logged[0]!["err"] as Error;
      expect(err).toBeInstanceOf(StoreError);
      expect(err.message).toMatch(/messages/u);

      const immediate = await call(api, "GET", "/export");
      expect(immediate.status).toBe(500);
      expect(immediate.body.error.message).toBe("internal error");
      expect(immediate.text).not.toContain(err.message);
    });
  });

  it("a busy store is 503 with Retry-After; bad JSON 400; too large 413; wrong media type 415; unknown route 404 — all in the one shape", async () => {
    const { db, target } = await backend.fresh();
    const { a1: id } = await seed(db);
    // A real busy store: another program holds the lock the rename needs longer than the handle waits.
    await withTableLocked(target, "sessions", async (locked) => {
      const lockedApi = await startApi(locked);
      const unavailable = await call(lockedApi, "PATCH", `/sessions/${id}`, { body: { title: "Renamed while locked" } });
      expect(unavailable.status).toBe(503);
      expect(unavailable.headers.get("retry-after")).toBe("1");
      expect(unavailable.body).toEqual({ error: { code: "TL_ERR_STORE_BUSY", message: "The database is busy; retry shortly." } });
      expect(Object.keys(unavailable.body)).toEqual(["error"]);
      expect(hasNoStack(unavailable.text)).toBe(true);
      await lockedApi.close();
    });
    expect((await db.getSession(id))?.title).toBe("Alice deploy");
    const api = await startApi(db, { bodyLimit: 1024 });

    const badJson = await call(api, "PATCH", "/sessions/x", { body: '{"title": ' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe("TL_ERR_BAD_REQUEST");
    const large = await call(api, "PATCH", "/sessions/x", { body: { title: "x".repeat(5000) } });
    expect(large.status).toBe(413);
    expect(large.body.error.code).toBe("TL_ERR_PAYLOAD_TOO_LARGE");
    const xml = await call(api, "PATCH", "/sessions/x", { body: "<title/>", headers: { "content-type": "application/xml" } });
    expect(xml.status).toBe(415);
    expect(xml.body.error.code).toBe("TL_ERR_UNSUPPORTED_MEDIA_TYPE");
    const notObject = await call(api, "PATCH", "/sessions/x", { body: [1, 2] });
    expect(notObject.status).toBe(422);
    expect(notObject.body.error.details).toEqual({ field: "body", in: "body" });
    const unknown = await call(api, "GET", "/no/such/route");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("TL_ERR_NOT_FOUND");
    for (const reply of [badJson, large, xml, notObject, unknown]) {
      expect(Object.keys(reply.body)).toEqual(["error"]);
      expect(hasNoStack(reply.text)).toBe(true);
    }
  });

  it("a prefix moves every route (and the OpenAPI paths) under it", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db, { prefix: "/api/v1" });
    expect((await call(api, "GET", "/api/v1/sessions")).body.items).toHaveLength(4);
    expect((await call(api, "GET", "/sessions")).status).toBe(404);
    const doc = (await call(api, "GET", "/api/v1/openapi.json", { key: null })).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).every((p) => p.startsWith("/api/v1/"))).toBe(true);
    expect(doc.paths).toHaveProperty(["/api/v1/execution/history/{id}"]);
  });
});

describe("access checks", () => {
  it("keys are checked before anything starts", () => {
    expect(() => checkApiAccess({ keys: [{ key: ADMIN, userId: "" }] })).toThrow(/api\.keys\.0\.userId/);
    expect(() => checkApiAccess({ keys: [{ key: ADMIN }] }, "0.0.0.0")).not.toThrow(); // keys make any host fine
  });
});
