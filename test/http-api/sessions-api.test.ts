/**
 * The sessions routes over real loopback HTTP, on SQLite and PostgreSQL: list with the
 * keyset cursor and filters, metadata, paged messages, search, rename (PATCH and PUT),
 * delete, the streamed exports (identical to SessionDB.exportSessions) and stats.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { waitFor } from "../support/wait-for.js";
import { ADMIN, ALICE, call, closeServers, hasNoStack, jsonLines, seed, startApi } from "./api-harness.js";

afterEach(closeServers);

forEachBackend((backend) => {
  it("GET /sessions lists newest first, pages with the cursor, filters by source", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const all = await call(api, "GET", "/sessions");
    expect(all.status).toBe(200);
    expect(all.body.items.map((s: { id: string }) => s.id)).toEqual((await db.listSessions()).items.map((s) => s.id));
    expect(all.body.items).toEqual((await db.listSessions()).items);
    expect(all.body.nextCursor).toBeNull();

    const first = await call(api, "GET", "/sessions?limit=2");
    expect(first.body.items).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(api, "GET", `/sessions?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.status).toBe(200);
    expect([...first.body.items, ...second.body.items].map((s: { id: string }) => s.id)).toEqual(all.body.items.map((s: { id: string }) => s.id));
    expect(second.body.nextCursor).toBeNull();

    const telegram = await call(api, "GET", "/sessions?source=telegram");
    expect(telegram.body.items.map((s: { id: string }) => s.id)).toEqual(["sess-alice-2"]);
    const both = await call(api, "GET", "/sessions?source=telegram&source=cli&order=started");
    expect(both.body.items.map((s: { id: string }) => s.id)).toEqual(["sess-nobody-1", "sess-bob-1", "sess-alice-2", "sess-alice-1"]);
  });

  it("GET /sessions: invalid parameters are 422 naming the field", async () => {
    const { db } = await backend.fresh();
    const api = await startApi(db);
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=ten", "limit"],
      ["order=oldest", "order"],
      ["cursor=not-a-cursor", "cursor"],
      ["sources=cli", "sources"],
    ] as const) {
      const reply = await call(api, "GET", `/sessions?${query}`);
      expect(reply.status, query).toBe(422);
      expect(reply.body.error.code).toBe("TL_ERR_INVALID_INPUT");
      expect(reply.body.error.details.field, query).toBe(field);
      expect(reply.body.error.message).toContain(field);
    }
  });

  it("GET /sessions/{id} returns the metadata; 404 for an unknown id", async () => {
    const { db } = await backend.fresh();
    const { a1 } = await seed(db);
    const api = await startApi(db);
    const reply = await call(api, "GET", `/sessions/${a1}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(await db.getSession(a1));
    const missing = await call(api, "GET", "/sessions/nope");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: "TL_ERR_NOT_FOUND", message: "Session 'nope' not found" } });
  });

  it("GET /sessions/{id}/messages pages by after_id and by offset; include_rewound", async () => {
    const { db } = await backend.fresh();
    const { a1 } = await seed(db);
    const api = await startApi(db);
    const all = await db.getMessages(a1);
    const page1 = await call(api, "GET", `/sessions/${a1}/messages?limit=3`);
    expect(page1.status).toBe(200);
    expect(page1.body.items).toEqual(all.slice(0, 3));
    expect(page1.body.nextAfterId).toBe(all[2]!.id);
    const page2 = await call(api, "GET", `/sessions/${a1}/messages?limit=3&after_id=${page1.body.nextAfterId}`);
    expect(page2.body.items).toEqual(all.slice(3));
    expect(page2.body.nextAfterId).toBeNull();
    const byOffset = await call(api, "GET", `/sessions/${a1}/messages?limit=2&offset=1`);
    expect(byOffset.body.items.map((m: { content: string }) => m.content)).toEqual([all[1]!.content, all[2]!.content]);
    const whole = await call(api, "GET", `/sessions/${a1}/messages`);
    expect(whole.body).toEqual({ items: all, nextAfterId: null });

    await db.rewind(a1); // hides the last user turn
    expect((await call(api, "GET", `/sessions/${a1}/messages`)).body.items).toHaveLength(2);
    const rewound = await call(api, "GET", `/sessions/${a1}/messages?include_rewound=true`);
    expect(rewound.body.items).toHaveLength(4);
    expect(rewound.body.items[3].rewoundAt).toEqual(expect.any(Number));

    const both = await call(api, "GET", `/sessions/${a1}/messages?offset=1&after_id=1`);
    expect(both.status).toBe(422);
    expect(both.body.error.details.field).toBe("offset");
    expect((await call(api, "GET", `/sessions/${a1}/messages?limit=501`)).status).toBe(422);
    expect((await call(api, "GET", "/sessions/nope/messages")).status).toBe(404);
  });

  it("GET /search finds messages with snippets; filters by source and role; 422 without a query", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const reply = await call(api, "GET", "/search?query=rocket&limit=10");
    expect(reply.status).toBe(200);
    // Each hit is the store's hit plus its snippet as segments (checked in web-page-api.test.ts).
    expect(reply.body.items.map(({ segments: _segments, ...hit }: { segments: unknown }) => hit)).toEqual(await db.searchMessages("rocket", { limit: 10 }));
    expect(reply.body.items.length).toBeGreaterThanOrEqual(4);
    expect(reply.body.items[0].snippet).toContain(">>>rocket<<<");
    const telegram = await call(api, "GET", "/search?query=rocket&source=telegram");
    expect(telegram.body.items.map((h: { sessionId: string }) => h.sessionId)).toEqual(["sess-alice-2"]);
    const assistants = await call(api, "GET", "/search?query=rocket&role=assistant&sort=newest");
    expect(assistants.body.items.every((h: { role: string }) => h.role === "assistant")).toBe(true);
    expect(assistants.body.items).toHaveLength(2);
    const nothing = await call(api, "GET", `/search?query=${encodeURIComponent("'\"@#%")}`);
    expect(nothing.status).toBe(200);
    expect(nothing.body.items).toEqual([]);
    const missing = await call(api, "GET", "/search");
    expect(missing.status).toBe(422);
    expect(missing.body.error.details).toEqual({ field: "query", in: "query" });
    expect((await call(api, "GET", "/search?query=x&role=robot")).body.error.details.field).toBe("role.0");
  });

  it("PATCH /sessions/{id} and PUT /sessions/{id}/title rename; 409 when another session holds the title; 422 over 100 code points", async () => {
    const { db } = await backend.fresh();
    const { a1, a2 } = await seed(db);
    const api = await startApi(db);
    const patched = await call(api, "PATCH", `/sessions/${a2}`, { body: { title: "Fuel prices" } });
    expect(patched.status).toBe(200);
    expect(patched.body.title).toBe("Fuel prices");
    expect(patched.body).toEqual(await db.getSession(a2));
    const put = await call(api, "PUT", `/sessions/${a2}/title`, { body: { title: "  Fuel   prices 2 " } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ id: a2, title: await db.getTitle(a2) });
    const conflict = await call(api, "PUT", `/sessions/${a2}/title`, { body: { title: "Alice deploy" } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("TL_ERR_CONFLICT");
    expect(conflict.body.error.details).toEqual({ sessionId: a1 });
    const long = await call(api, "PUT", `/sessions/${a2}/title`, { body: { title: "x".repeat(101) } });
    expect(long.status).toBe(422);
    expect(long.body.error.details.field).toBe("title");
    const cleared = await call(api, "PATCH", `/sessions/${a2}`, { body: { title: null } });
    expect(cleared.body.title).toBeNull();
    const unknownField = await call(api, "PATCH", `/sessions/${a2}`, { body: { title: "t", model: "x" } });
    expect(unknownField.status).toBe(422);
    expect(unknownField.body.error.details.field).toBe("model");
    const noTitle = await call(api, "PATCH", `/sessions/${a2}`, { body: {} });
    expect(noTitle.status).toBe(422);
    expect(noTitle.body.error.details.field).toBe("title");
    expect((await call(api, "PUT", "/sessions/nope/title", { body: { title: "x" } })).status).toBe(404);
  });

  it("DELETE /sessions/{id} is 204, then 404", async () => {
    const { db } = await backend.fresh();
    const { a2 } = await seed(db);
    const api = await startApi(db);
    const deleted = await call(api, "DELETE", `/sessions/${a2}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect(await db.getSession(a2)).toBeNull();
    const again = await call(api, "DELETE", `/sessions/${a2}`);
    expect(again.status).toBe(404);
    expect(again.body.error.message).toBe(`Session '${a2}' not found`);
  });

  it("GET /export streams JSON Lines identical to SessionDB.exportSessions; filters; one session by id", async () => {
    const { db } = await backend.fresh();
    const { a1 } = await seed(db);
    const api = await startApi(db);
    const expected: unknown[] = [];
    for await (const record of db.exportSessions()) expected.push(record);
    const reply = await call(api, "GET", "/export");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(reply.text.endsWith("\n")).toBe(true);
    expect(reply.text).toBe(expected.map((r) => `${JSON.stringify(r)}\n`).join(""));
    expect(jsonLines(reply.text)).toEqual(expected);

    const cli = jsonLines((await call(api, "GET", "/export?source=cli")).text) as Array<{ session: { source: string } }>;
    expect(cli.map((r) => r.session.source)).toEqual(["cli", "cli", "cli"]);
    await db.rewind(a1);
    const one = await call(api, "GET", `/sessions/${a1}/export`);
    expect(one.status).toBe(200);
    const oneExpected: unknown[] = [];
    for await (const record of db.exportSessions({ sessionId: a1 })) oneExpected.push(record);
    expect(jsonLines(one.text)).toEqual(oneExpected);
    const withRewound = jsonLines((await call(api, "GET", `/sessions/${a1}/export?include_rewound=true`)).text) as Array<{ messages: unknown[] }>;
    expect(withRewound[0]!.messages).toHaveLength(4);
    const missing = await call(api, "GET", "/sessions/nope/export");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("TL_ERR_NOT_FOUND");
    const empty = await call(api, "GET", "/export?source=slack");
    expect(empty.status).toBe(200);
    expect(empty.text).toBe("");
  });

  it("GET /export streams many sessions in order and re-imports into an empty database", async () => {
    const { db } = await backend.fresh();
    for (let i = 0; i < 120; i++) {
      const id = `bulk-${String(i).padStart(3, "0")}`;
      await db.createSession({ id, source: "cli", startedAt: 1_700_000_000 + i });
      await db.appendMessage(id, { role: "user", content: `message ${i} ${"x".repeat(2000)}`, timestamp: 1_700_000_000 + i });
    }
    const api = await startApi(db);
    const reply = await call(api, "GET", "/export");
    const lines = jsonLines(reply.text) as Array<{ session: { id: string } }>;
    expect(lines.map((r) => r.session.id)).toEqual(Array.from({ length: 120 }, (_, i) => `bulk-${String(i).padStart(3, "0")}`));
    const target = (await backend.fresh()).db;
    const report = await target.importSessions(reply.text.split("\n").filter(Boolean));
    expect(report).toEqual({ imported: 120, skipped: 0, errors: [] });
  });

  it("GET /export is streamed with back-pressure: a slow reader holds the store's export back, and a client that goes away closes it", async () => {
    const { db } = await backend.fresh();
    // 160 sessions of 256 KiB: about 40 MiB, far more than the socket buffers hold.
    const big = "y".repeat(256 * 1024);
    const ids = Array.from({ length: 160 }, (_, i) => `big-${String(i).padStart(3, "0")}`);
    for (const [i, id] of ids.entries()) {
      await db.createSession({ id, source: "cli", startedAt: 1_700_000_000 + i });
      await db.appendMessage(id, { role: "user", content: big, timestamp: 1_700_000_000 + i });
    }
    let exportBytes = 0;
    for await (const record of db.exportSessions()) exportBytes += JSON.stringify(record).length + 1;
    const api = await startApi(db);
    // The server's side of each export: its response, and the stream it pipes into it (sendJsonLines' body).
    const served: Array<{ response: ServerResponse; body: Readable | null }> = [];
    api.app.server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      if (request.url !== "/export") return;
      const side: { response: ServerResponse; body: Readable | null } = { response, body: null };
      response.on("pipe", (source: Readable) => {
        side.body = source;
      });
      served.push(side);
    });
    /** An export whose client reads the first chunk and then no more, until the server's writes back up. */
    const stalledExport = async () => {
      const response = await fetch(`${api.url}/export`, { headers: { "x-api-key": ADMIN } });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first.startsWith('{"format":"threadline.session"')).toBe(true);
      const server = served.at(-1)!;
      // The barrier: the server's writes back up (the reader reads no more).
      await waitFor(() => server.response.writableNeedDrain === true, { what: "the export response to wait for drain" });
      return { reader, first, server };
    };

    // A client that stops reading, then goes away.
    const gone = await stalledExport();
    // What the server has handed to the socket (sent or queued) is a small part of the export.
    expect(gone.server.response.socket!.bytesWritten).toBeLessThan(exportBytes / 4);
    await gone.reader.cancel();
    // The server closes its response and destroys the export stream. That stream closes only once
    // sendJsonLines' generator has returned, which awaits the store export's return().
    await waitFor(() => gone.server.response.closed && gone.server.body?.closed === true, {
      what: "the server's export response and stream to close",
    });
    expect(gone.server.body!.destroyed).toBe(true);
    // Nothing of the export is left holding the store: a whole export still runs to the end.
    const whole = await call(api, "GET", "/export");
    expect(whole.text.length).toBe(exportBytes);
    expect((jsonLines(whole.text) as Array<{ session: { id: string } }>).map((r) => r.session.id)).toEqual(ids);

    // How far the store's export ran while its client did not read. The export reads each session
    // afresh before it yields it and skips deleted ones, so once every session is deleted, what the
    // client still receives is exactly what the store had produced.
    const slow = await stalledExport();
    for (const id of ids) expect(await db.deleteSession(id)).toBe(true);
    let rest = "";
    const decoder = new TextDecoder();
    for (let chunk = await slow.reader.read(); chunk.done !== true; chunk = await slow.reader.read()) rest += decoder.decode(chunk.value, { stream: true });
    const produced = (jsonLines(slow.first + rest) as Array<{ session: { id: string } }>).map((r) => r.session.id);
    expect(produced).toEqual(ids.slice(0, produced.length));
    expect(produced.length).toBeLessThan(ids.length / 4);
  });

  it("GET /stats: admin keys get the totals; a scoped key gets 403", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    const api = await startApi(db);
    const reply = await call(api, "GET", "/stats");
    expect(reply.status).toBe(200);
    const stats = await db.getStats();
    expect(reply.body).toMatchObject({
      totalSessions: 4,
      totalMessages: stats.totalMessages,
      sessionsBySource: stats.sessionsBySource,
      byModel: stats.byModel,
    });
    expect(reply.body.databaseBytes).toEqual(expect.any(Number));
    const scoped = await call(api, "GET", "/stats", { key: ALICE });
    expect(scoped.status).toBe(403);
    expect(scoped.body.error.code).toBe("TL_ERR_FORBIDDEN");
    expect(hasNoStack(scoped.text)).toBe(true);
  });
});
