/**
 * The routes the web page uses, over real loopback HTTP on SQLite and PostgreSQL: listing
 * filters, search segments and grouping, lineage, delete preview, the filtered export and
 * the usage stats — each tenant-scoped like every other route.
 */
import { afterEach, expect, it } from "vitest";
import type { SessionDB } from "../../src/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { ALICE, BOB, call, closeServers, jsonLines, seed, startApi } from "./api-harness.js";
import { snippetSegments } from "../../src/http-api/routes/search.js";

afterEach(closeServers);

const ids = (items: Array<{ id: string }>): string[] => items.map((s) => s.id);

/** alice's chain: root → (compression) cont → branch under cont; bob's child under alice's root. */
async function family(db: SessionDB): Promise<void> {
  const t = 1_700_100_000;
  await db.createSession({ id: "root", source: "cli", userId: "alice", title: "Root", startedAt: t });
  await db.appendTurn("root", [
    { role: "user", content: "one", timestamp: t + 1 },
    { role: "assistant", content: "two", timestamp: t + 2 },
  ]);
  await db.endSession("root", "compression", { endedAt: t + 3 });
  await db.createSession({ id: "cont", source: "cli", userId: "alice", parentSessionId: "root", startedAt: t + 4 });
  await db.appendMessage("cont", { role: "user", content: "three", timestamp: t + 5 });
  await db.createSession({ id: "branch", source: "cli", userId: "alice", parentSessionId: "cont", title: "Branch", startedAt: t + 6 });
  await db.createSession({ id: "bobchild", source: "cli", userId: "bob", parentSessionId: "root", startedAt: t + 7 });
}

forEachBackend((backend) => {
  it("GET /sessions filters by model, titled and since/until; 422 for a bad bound", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    expect(ids((await call(api, "GET", "/sessions?model=m1")).body.items)).toEqual(["sess-alice-1"]);
    expect(ids((await call(api, "GET", "/sessions?titled=true&order=started")).body.items)).toEqual(["sess-bob-1", "sess-alice-1"]);
    expect(ids((await call(api, "GET", "/sessions?titled=false&order=started")).body.items)).toEqual(["sess-nobody-1", "sess-alice-2"]);
    const t0 = 1_700_000_000;
    expect(ids((await call(api, "GET", `/sessions?order=started&since=${t0 + 10}&until=${t0 + 30}`)).body.items)).toEqual(["sess-bob-1", "sess-alice-2"]);
    expect(ids((await call(api, "GET", `/sessions?since=${t0 + 20}`, { key: ALICE })).body.items)).toEqual([]);
    expect(ids((await call(api, "GET", "/sessions?titled=true", { key: ALICE })).body.items)).toEqual(["sess-alice-1"]);
    const bad = await call(api, "GET", `/sessions?since=${t0 + 10}&until=${t0}`);
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.field).toBe("until");
    const notBool = await call(api, "GET", "/sessions?titled=maybe");
    expect(notBool.status).toBe(422);
    expect(notBool.body.error.details.field).toBe("titled");
  });

  it("GET /search: each hit has its snippet as segments; sessions groups the hits; a tenant finds only its own", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const reply = await call(api, "GET", "/search?query=rocket&sort=oldest");
    expect(reply.status).toBe(200);
    for (const hit of reply.body.items) {
      expect(hit.segments.map((s: { text: string }) => s.text).join("")).toBe(hit.snippet.replaceAll(">>>", "").replaceAll("<<<", ""));
      expect(hit.segments.filter((s: { match: boolean }) => s.match).map((s: { text: string }) => s.text.toLowerCase())).toContain("rocket");
    }
    const groups = reply.body.sessions as Array<{ sessionId: string; title: string | null; messageIds: number[] }>;
    expect(groups.map((g) => g.sessionId)).toEqual(["sess-alice-1", "sess-alice-2", "sess-bob-1", "sess-nobody-1"]);
    expect(groups[0]!.title).toBe("Alice deploy");
    expect(groups.flatMap((g) => g.messageIds).sort()).toEqual(reply.body.items.map((h: { messageId: number }) => h.messageId).sort());
    const alice = await call(api, "GET", "/search?query=rocket", { key: ALICE });
    expect(new Set(alice.body.sessions.map((g: { sessionId: string }) => g.sessionId))).toEqual(new Set(["sess-alice-1", "sess-alice-2"]));
  });

  it("GET /sessions/{id}/lineage: root, continuation and child nodes; a tenant sees only its own; 404 for another's", async () => {
    const { db } = await backend.fresh();
    await family(db);
    const api = await startApi(db);
    const admin = await call(api, "GET", "/sessions/branch/lineage");
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ sessionId: "branch", rootId: "root", truncated: false });
    const shape = admin.body.nodes.map((n: { id: string; parentSessionId: string | null; relation: string }) => [n.id, n.parentSessionId, n.relation]);
    expect(shape).toEqual([
      ["root", null, "root"],
      ["cont", "root", "continuation"],
      ["bobchild", "root", "continuation"],
      ["branch", "cont", "child"],
    ]);
    expect(admin.body.nodes[0]).toMatchObject({ title: "Root", endReason: "compression", messageCount: 2, source: "cli" });
    const alice = await call(api, "GET", "/sessions/cont/lineage", { key: ALICE });
    expect(alice.body.nodes.map((n: { id: string }) => n.id)).toEqual(["root", "cont", "branch"]);
    expect((await call(api, "GET", "/sessions/root/lineage", { key: BOB })).status).toBe(404);
    const bob = await call(api, "GET", "/sessions/bobchild/lineage", { key: BOB });
    expect(bob.body).toMatchObject({ rootId: "bobchild", nodes: [{ id: "bobchild", relation: "root", parentSessionId: null }] });
    expect((await call(api, "GET", "/sessions/nope/lineage")).status).toBe(404);
  });

  it("GET /sessions/{id}/delete-preview names what DELETE removes and detaches, and changes nothing", async () => {
    const { db } = await backend.fresh();
    await family(db);
    const api = await startApi(db);
    const admin = await call(api, "GET", "/sessions/root/delete-preview");
    expect(admin.status).toBe(200);
    expect(admin.body).toEqual({
      session: { id: "root", title: "Root", source: "cli", messageCount: 2 },
      removes: { sessions: 1, messages: 2 },
      detaches: [
        { id: "cont", title: null, source: "cli", messageCount: 1 },
        { id: "bobchild", title: null, source: "cli", messageCount: 0 },
      ],
      detachedOthers: 0,
    });
    const alice = await call(api, "GET", "/sessions/root/delete-preview", { key: ALICE });
    expect(alice.body.detaches.map((s: { id: string }) => s.id)).toEqual(["cont"]);
    expect(alice.body.detachedOthers).toBe(1);
    expect((await call(api, "GET", "/sessions/root/delete-preview", { key: BOB })).status).toBe(404);
    expect(await db.getSession("root")).not.toBeNull();
    // The preview matches what a delete does.
    expect((await call(api, "DELETE", "/sessions/root")).status).toBe(204);
    expect((await db.getSession("cont"))?.parentSessionId).toBeNull();
    expect((await db.getSession("bobchild"))?.parentSessionId).toBeNull();
  });

  it("GET /export with listing filters streams only the matching sessions, as an attachment", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const titled = await call(api, "GET", "/export?titled=true");
    expect(titled.status).toBe(200);
    expect(titled.headers.get("content-disposition")).toBe('attachment; filename="threadline-export.jsonl"');
    const records = jsonLines(titled.text) as Array<{ session: { id: string }; messages: unknown[] }>;
    expect(records.map((r) => r.session.id)).toEqual(["sess-bob-1", "sess-alice-1"]);
    const whole = [];
    for await (const r of db.exportSessions({ sessionId: "sess-alice-1" })) whole.push(r);
    expect(records[1]).toEqual(JSON.parse(JSON.stringify(whole[0])));
    const t0 = 1_700_000_000;
    const ranged = jsonLines((await call(api, "GET", `/export?order=started&since=${t0 + 5}&source=cli`)).text) as Array<{ session: { id: string } }>;
    expect(ranged.map((r) => r.session.id)).toEqual(["sess-nobody-1", "sess-bob-1"]);
    const alice = jsonLines((await call(api, "GET", "/export?model=m1&model=zzz", { key: ALICE })).text) as Array<{ session: { id: string } }>;
    expect(alice.map((r) => r.session.id)).toEqual(["sess-alice-1"]);
    expect((await call(api, "GET", "/export?titled=true", { key: BOB })).text.split("\n").filter(Boolean)).toHaveLength(1);
    const bad = await call(api, "GET", "/export?since=10&until=5");
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.field).toBe("until");
  });

  it("GET /stats/usage: per day and source, per model; a tenant sees its own figures and no database size", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    await db.recordUsage("sess-alice-1", { inputTokens: 100, outputTokens: 10, estimatedCostUsd: 0.5 });
    const api = await startApi(db);
    const since = 1_700_000_000 - 10;
    const admin = await call(api, "GET", `/stats/usage?since=${since}`);
    expect(admin.status).toBe(200);
    expect(admin.body.totals).toMatchObject({ sessions: 4, messages: 8 });
    expect(admin.body.byDay.reduce((n: number, d: { sessions: number }) => n + d.sessions, 0)).toBe(4);
    expect(new Set(admin.body.byDay.map((d: { source: string }) => d.source))).toEqual(new Set(["cli", "telegram"]));
    expect(admin.body.byModel[0]).toMatchObject({ model: "m1", sessions: 1, inputTokens: 100, estimatedCostUsd: 0.5 });
    expect(admin.body.databaseBytes).toBeGreaterThan(0);
    expect(typeof admin.body.timeZone).toBe("string");
    const alice = await call(api, "GET", `/stats/usage?since=${since}`, { key: ALICE });
    expect(alice.body.totals).toMatchObject({ sessions: 2, messages: 5 });
    expect(alice.body.bySource.map((s: { source: string; sessions: number }) => [s.source, s.sessions]).sort()).toEqual([
      ["cli", 1],
      ["telegram", 1],
    ]);
    expect(alice.body.databaseBytes).toBeNull();
    // The default period is the last 30 days: the seeded sessions are older.
    expect((await call(api, "GET", "/stats/usage")).body.totals.sessions).toBe(0);
    const both = await call(api, "GET", `/stats/usage?days=3&since=${since}`);
    expect(both.status).toBe(422);
    expect(both.body.error.details.field).toBe("days");
  });

  it("the new routes are in /openapi.json", async () => {
    const { db } = await backend.fresh();
    const api = await startApi(db);
    const doc = (await call(api, "GET", "/openapi.json", { key: null })).body;
    for (const path of ["/sessions/{id}/lineage", "/sessions/{id}/delete-preview", "/stats/usage"]) expect(Object.keys(doc.paths)).toContain(path);
    const listParams = doc.paths["/sessions"].get.parameters.map((p: { name: string }) => p.name);
    expect(listParams).toEqual(expect.arrayContaining(["model", "titled", "since", "until"]));
    expect(doc.paths["/export"].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["model", "titled", "since", "until", "order"]),
    );
  });
});

it("snippetSegments splits at the markers, merges and drops empty pieces", () => {
  expect(snippetSegments("...a >>>rocket<<< and >>>fuel<<<")).toEqual([
    { text: "...a ", match: false },
    { text: "rocket", match: true },
    { text: " and ", match: false },
    { text: "fuel", match: true },
  ]);
  expect(snippetSegments(">>>a<<<>>>b<<<")).toEqual([{ text: "ab", match: true }]);
  expect(snippetSegments("no match")).toEqual([{ text: "no match", match: false }]);
  expect(snippetSegments("")).toEqual([]);
  expect(snippetSegments("dangling >>>open")).toEqual([{ text: "dangling >>>open", match: false }]);
});
