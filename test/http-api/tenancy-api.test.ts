/**
 * Tenant isolation over real loopback HTTP, on SQLite and PostgreSQL: a key scoped to a
 * user sees and changes only that user's sessions and runs. Another tenant's session is
 * 404 exactly like a missing one (same body: no existence leak) on every route; listing,
 * search and export leave it out; an admin key sees everything.
 */
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { ADMIN, ALICE, BOB, call, closeServers, jsonLines, seed, startApi, type ApiServer } from "./api-harness.js";

afterEach(closeServers);

/** The reply for another tenant's id must be byte-identical to the reply for an id that does not exist. */
async function expectHidden(api: ApiServer, method: string, path: string, missingPath: string, body?: unknown): Promise<void> {
  const options = { key: ALICE, ...(body === undefined ? {} : { body }) };
  const theirs = await call(api, method, path, options);
  const missing = await call(api, method, missingPath, options);
  expect(theirs.status, `${method} ${path}`).toBe(404);
  expect(missing.status, `${method} ${missingPath}`).toBe(404);
  const id = path.split("/")[path.startsWith("/execution") ? 3 : 2]!;
  const missingId = missingPath.split("/")[missingPath.startsWith("/execution") ? 3 : 2]!;
  expect(theirs.body.error.code).toBe("TL_ERR_NOT_FOUND");
  expect(theirs.body).toEqual(JSON.parse(JSON.stringify(missing.body).replaceAll(missingId, id)));
}

forEachBackend((backend) => {
  it("a scoped key cannot read, page, rename, delete or export another tenant's session: 404, never 403", async () => {
    const { db } = await backend.fresh();
    const { b1, n1 } = await seed(db);
    const api = await startApi(db);
    for (const other of [b1, n1]) {
      await expectHidden(api, "GET", `/sessions/${other}`, "/sessions/no-such-id");
      await expectHidden(api, "GET", `/sessions/${other}/messages`, "/sessions/no-such-id/messages");
      await expectHidden(api, "GET", `/sessions/${other}/export`, "/sessions/no-such-id/export");
      await expectHidden(api, "PATCH", `/sessions/${other}`, "/sessions/no-such-id", { title: "mine now" });
      await expectHidden(api, "PUT", `/sessions/${other}/title`, "/sessions/no-such-id/title", { title: "mine now" });
      await expectHidden(api, "DELETE", `/sessions/${other}`, "/sessions/no-such-id");
    }
    // Nothing changed.
    expect(await db.getSession(b1)).toMatchObject({ title: "Bob deploy" });
    expect(await db.getSession(n1)).not.toBeNull();
    // Bob's own key works on it.
    expect((await call(api, "GET", `/sessions/${b1}`, { key: BOB })).status).toBe(200);
  });

  it("listing, search and export show a scoped key only its own sessions; the admin key sees all", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const ids = (reply: { body: { items: Array<{ id?: string; sessionId?: string }> } }) => reply.body.items.map((s) => s.id ?? s.sessionId).sort();

    expect(ids(await call(api, "GET", "/sessions", { key: ALICE }))).toEqual(["sess-alice-1", "sess-alice-2"]);
    expect(ids(await call(api, "GET", "/sessions", { key: BOB }))).toEqual(["sess-bob-1"]);
    expect(ids(await call(api, "GET", "/sessions", { key: ADMIN }))).toEqual(["sess-alice-1", "sess-alice-2", "sess-bob-1", "sess-nobody-1"]);
    expect(ids(await call(api, "GET", "/sessions?source=cli&include_children=true", { key: ALICE }))).toEqual(["sess-alice-1"]);

    const aliceHits = await call(api, "GET", "/search?query=rocket", { key: ALICE });
    expect([...new Set(ids(aliceHits))]).toEqual(["sess-alice-1", "sess-alice-2"]);
    const secret = await call(api, "GET", "/search?query=secretly", { key: ALICE });
    expect(secret.body.items).toEqual([]);
    expect((await call(api, "GET", "/search?query=secretly", { key: ADMIN })).body.items).toHaveLength(1);

    const exported = jsonLines((await call(api, "GET", "/export", { key: ALICE })).text) as Array<{ session: { id: string; userId: string } }>;
    expect(exported.map((r) => r.session.id).sort()).toEqual(["sess-alice-1", "sess-alice-2"]);
    const expected: unknown[] = [];
    for await (const record of db.exportSessions({ userId: "alice" })) expected.push(record);
    expect(exported).toEqual(expected);
    expect(jsonLines((await call(api, "GET", "/export", { key: ADMIN })).text)).toHaveLength(4);
  });

  it("a scoped key renames, pages and deletes its own sessions; a title held by another tenant is a 409 that names nobody", async () => {
    const { db } = await backend.fresh();
    const { a1, a2 } = await seed(db);
    const api = await startApi(db);
    expect((await call(api, "GET", `/sessions/${a1}/messages?limit=1`, { key: ALICE })).body.items).toHaveLength(1);
    const taken = await call(api, "PUT", `/sessions/${a2}/title`, { key: ALICE, body: { title: "Bob deploy" } });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ error: { code: "TL_ERR_CONFLICT", message: "That title is already in use; choose another title." } });
    expect(taken.text).not.toContain("sess-bob-1");
    // Her own title conflict names her own session.
    const own = await call(api, "PUT", `/sessions/${a2}/title`, { key: ALICE, body: { title: "Alice deploy" } });
    expect(own.status).toBe(409);
    expect(own.body.error.details).toEqual({ sessionId: a1 });
    expect((await call(api, "PATCH", `/sessions/${a2}`, { key: ALICE, body: { title: "Fuel" } })).body.title).toBe("Fuel");
    expect((await call(api, "DELETE", `/sessions/${a2}`, { key: ALICE })).status).toBe(204);
    expect(await db.getSession(a2)).toBeNull();
  });

  it("a scoped key cannot read, list, append to, delete or clean up another tenant's runs; the admin key sees all", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const list = await call(api, "GET", "/execution/history", { key: BOB });
    expect(list.body.items.map((r: { id: string }) => r.id)).toEqual(["agent-calc-bob"]);
    expect(list.body.total).toBe(1);
    expect((await call(api, "GET", "/execution/history?agent_name=calculator", { key: ALICE })).body.items.map((r: { id: string }) => r.id)).toEqual([
      "agent-calc-alice",
    ]);
    expect((await call(api, "GET", "/execution/history?workflow_name=daily-report", { key: BOB })).body).toEqual({ items: [], total: 0, limit: 50, offset: 0 });
    expect((await call(api, "GET", "/execution/history", { key: ADMIN })).body.total).toBe(3);

    for (const id of ["agent-calc-alice", "calc-alice", "workflow-report", "workflow-report-0", "report"]) {
      const hidden = await call(api, "GET", `/execution/history/${id}`, { key: BOB });
      expect(hidden.status, id).toBe(404);
      expect(hidden.body).toEqual({ error: { code: "TL_ERR_NOT_FOUND", message: `Session '${id}' not found` } });
      const appended = await call(api, "POST", `/execution/history/${id}/messages`, { key: BOB, body: { role: "user", content: "x" } });
      expect(appended.status, id).toBe(404);
      expect(appended.body).toEqual(hidden.body);
    }
    // A prefix shared by both tenants' runs resolves to the caller's own run, never "ambiguous".
    expect((await call(api, "GET", "/execution/history/agent-calc", { key: BOB })).body.id).toBe("agent-calc-bob");
    expect((await call(api, "GET", "/execution/history/agent-calc", { key: ADMIN })).status).toBe(400);

    for (const id of ["agent-calc-alice", "workflow-report", "workflow-report-1"]) {
      const deleted = await call(api, "DELETE", `/execution/history/${id}`, { key: BOB });
      expect(deleted.status, id).toBe(404);
      expect(deleted.body.error.message).toBe(`Session '${id}' not found`);
    }
    const cleanup = await call(api, "POST", "/execution/history/cleanup", { key: BOB, body: { olderThanDays: 0 } });
    expect(cleanup.body).toEqual({ removedUnits: 1, removedSessions: 1, removedIds: ["agent-calc-bob"] });
    expect(await db.getExecution("agent-calc-alice")).not.toBeNull();
    expect(await db.getExecution("workflow-report-1")).not.toBeNull();
    expect((await call(api, "GET", "/execution/history/agent-calc-alice", { key: ALICE })).status).toBe(200);
    expect((await call(api, "DELETE", "/execution/history/workflow-report", { key: ALICE })).status).toBe(204);
    expect(await db.getExecution("workflow-report-1")).toBeNull();
  });
});
