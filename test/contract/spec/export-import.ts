/**
 * Contract: exporting sessions as versioned JSONL records and importing them back
 * (validation line by line, idempotency, lineage links).
 *
 * @module
 */

import { expect } from "vitest";
import type { Session, SessionDB, SessionRecord } from "../../../src/store/contract.js";
import { assistant, collect, contractArea, ids, user, ZERO_USAGE } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** A hand-written record in the documented format. */
function makeRecord(id: string, overrides: Partial<SessionRecord["session"]> = {}, messages?: SessionRecord["messages"]): SessionRecord {
  return {
    format: "threadline.session",
    version: 1,
    session: {
      id,
      source: "cli",
      userId: null,
      model: null,
      modelConfig: null,
      systemPrompt: null,
      parentSessionId: null,
      startedAt: 1000,
      endedAt: null,
      endReason: null,
      title: null,
      sessionKey: null,
      chatId: null,
      chatType: null,
      threadId: null,
      usage: ZERO_USAGE,
      ...overrides,
    },
    messages: messages ?? [
      {
        role: "user",
        content: `hello from ${id}`,
        toolCalls: null,
        toolCallId: null,
        toolName: null,
        tokenCount: null,
        finishReason: null,
        reasoning: null,
        reasoningDetails: null,
        platformMessageId: null,
        timestamp: 1001,
        rewoundAt: null,
      },
    ],
  };
}

function sessionPart(s: Session): SessionRecord["session"] {
  const { messageCount: _m, toolCallCount: _t, lastActiveAt: _l, preview: _p, ...rest } = s;
  return rest;
}

/** A store with a parent (compression-ended), its child (with a rewound turn) and an empty session. */
async function seedRich(db: SessionDB): Promise<void> {
  await db.createSession({
    id: "parent",
    source: "cli",
    userId: "u1",
    model: "gpt-4o",
    modelConfig: { temperature: 0.3, tools: ["a", "b"], nested: { deep: [1, 2, { x: null }] } },
    systemPrompt: "System\nprompt",
    startedAt: 1000.5,
    title: "Parent title",
    sessionKey: "agent:main:cli",
    chatId: "chat-1",
    chatType: "dm",
    threadId: "th-1",
  });
  await db.appendTurn("parent", [
    { role: "system", content: "setup", timestamp: 1001 },
    {
      role: "user",
      content: [
        { type: "text", text: "what's this?" },
        { type: "image_url", image_url: { url: "data:x" } },
      ],
      timestamp: 1002,
      platformMessageId: "pm-1",
    },
    {
      role: "assistant",
      content: null,
      toolCalls: [{ id: "call_1", type: "function", function: { name: "vision", arguments: '{"detail":"high"}' } }],
      tokenCount: 17,
      finishReason: "tool_calls",
      reasoning: "need to look",
      reasoningDetails: [{ type: "reasoning.text", text: "need to look", signature: "sig" }],
      timestamp: 1003,
    },
    { role: "tool", content: "a cat", toolCallId: "call_1", toolName: "vision", timestamp: 1004 },
    { role: "assistant", content: "It is a cat. 🐱", finishReason: "stop", timestamp: 1005.75 },
  ]);
  await db.recordUsage("parent", {
    inputTokens: 120,
    outputTokens: 30,
    cacheReadTokens: 4,
    cacheWriteTokens: 5,
    reasoningTokens: 6,
    apiCalls: 2,
    estimatedCostUsd: 0.0125,
    actualCostUsd: 0.01,
    billingProvider: "openai",
    billingMode: "metered",
    costStatus: "final",
  });
  await db.endSession("parent", "compression", { endedAt: 1100 });
  await db.createSession({ id: "child", source: "telegram", model: "gpt-4o", parentSessionId: "parent", startedAt: 1100, title: "Child title" });
  await db.appendTurn("child", [user("continue please", 1101), assistant("continuing", 1102)]);
  await db.appendTurn("child", [user("undo me", 1103), assistant("undone", 1104)]);
  await db.rewind("child");
  await db.createSession({ id: "empty", source: "discord", startedAt: 900 });
}

/** The lines as a stream that hands each one over in a later turn of the event loop. */
async function* asyncLines(lines: string[]): AsyncGenerator<string> {
  for (const line of lines) {
    await new Promise((r) => setImmediate(r));
    yield line;
  }
}

/** Every control character, the characters JSON escapes, and text past the BMP. */
const TRICKY_TEXT = `${Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)).join("")} \u007f quote" backslash\\ slash/ \u2028\u2029 é 中文 \u{1F600} \uFFFD \uFEFF`;

/**
 * Numbers whose text differs between databases and JavaScript (`100.0`, `1.0e+21`, 17 digits
 * where 16 suffice, integers past 2^53), as timestamps and token counts.
 */
export const TRICKY_TIMES = [
  0,
  5e-324,
  1e-7,
  0.00001,
  0.0001,
  0.1,
  0.30000000000000004,
  1,
  1790003600,
  1790003600.5,
  1779638922.6963592,
  1779638922.696359,
  390986283741.9116,
  2 ** 53 - 1,
  2 ** 53 + 2,
  1e21,
  1.2345678901234568e20,
  1e300,
  1.7976931348623157e308,
];
/** Token counts every backend stores (PostgreSQL's column is a 32-bit integer; sqlite/export-lines.test.ts has larger ones). */
const TRICKY_TOKEN_COUNTS = [0, 7, 2 ** 31 - 1];

/** A session whose messages hold {@link TRICKY_TEXT} and {@link TRICKY_TIMES} in every field that can. */
export async function seedTricky(db: SessionDB): Promise<void> {
  await db.createSession({
    id: "tricky",
    source: "cli",
    userId: "u2",
    modelConfig: { text: TRICKY_TEXT, n: [1e21, -0, 0.1, 2 ** 60], "2": "int-like key", b: 1, "1": 0 },
    systemPrompt: TRICKY_TEXT,
    startedAt: 1790003600,
    title: "Tricky \u{1F600}",
  });
  await db.appendTurn(
    "tricky",
    TRICKY_TIMES.map((timestamp, i) => ({
      role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content:
        i % 3 === 2
          ? [
              { type: "text", text: TRICKY_TEXT },
              { type: "x", n: TRICKY_TIMES, "1": TRICKY_TEXT },
            ]
          : `${i} ${TRICKY_TEXT}`,
      tokenCount: TRICKY_TOKEN_COUNTS[i % TRICKY_TOKEN_COUNTS.length]!,
      ...(i % 2 === 1
        ? {
            toolCalls: [{ id: `call\t${i}`, type: "function", function: { name: TRICKY_TEXT, arguments: JSON.stringify({ q: TRICKY_TEXT, n: 1e21 }) } }],
            reasoning: TRICKY_TEXT,
            reasoningDetails: i % 4 === 1 ? { text: TRICKY_TEXT, n: [-0, 1e-7, 2 ** 60], ok: true, none: null } : TRICKY_TEXT,
            finishReason: "tool_calls",
          }
        : { platformMessageId: `pm\n${i}`, toolCallId: `c\u0000${i}`, toolName: TRICKY_TEXT }),
      timestamp,
    })),
  );
  await db.appendTurn("tricky", [user(`undo ${TRICKY_TEXT}`, 1790003700), assistant("undone", 1790003700.25)]);
  await db.rewind("tricky");
}

/** The lines `exportSessions` gives, serialised as `writeJsonl` writes them. */
export async function stringifiedLines(db: SessionDB, options: Parameters<SessionDB["exportSessions"]>[0]): Promise<Buffer> {
  return Buffer.from((await collect(db.exportSessions(options))).map((r) => `${JSON.stringify(r)}\n`).join(""));
}

const byId = (a: SessionRecord, b: SessionRecord) => (a.session.id < b.session.id ? -1 : a.session.id > b.session.id ? 1 : 0);

export function exportImportTests(init: SessionDBTestInitializer): void {
  contractArea(init, "export-import", (test, { db, freshStore }) => {
    test("a record is format threadline.session, version 1, with the session and its messages", async () => {
      await seedRich(db());
      const records = await collect(db().exportSessions({ sessionId: "parent" }));
      expect(records).toHaveLength(1);
      const [record] = records;
      expect(record?.format).toBe("threadline.session");
      expect(record?.version).toBe(1);
      const session = await db().getSession("parent");
      expect(record?.session).toEqual(sessionPart(session!));
      const messages = await db().getMessages("parent");
      expect(record?.messages).toEqual(messages.map(({ id: _i, sessionId: _s, ...rest }) => rest));
      // Each record is one JSON line.
      const line = JSON.stringify(record);
      expect(line).not.toContain("\n");
      expect(JSON.parse(line)).toEqual(record);
    });

    test("an exported message serialises byte for byte as the transcript's message without its ids", async () => {
      await seedRich(db());
      // Text the backends store differently (NUL escaped on PostgreSQL), control characters and non-BMP text.
      await db().createSession({ id: "odd", source: "cli", startedAt: 1200 });
      await db().appendTurn("odd", [
        { role: "user", content: 'nul\u0000 tab\t quote" backslash\\ \u2028 \u{1F600}', platformMessageId: "p\u0000m", timestamp: 1200.125 },
        {
          role: "assistant",
          content: null,
          toolCalls: [{ id: "c\u0000", type: "function", function: { name: "n", arguments: '{"a":1.5e-7}' } }],
          reasoning: "r\u0000",
          reasoningDetails: { nested: [1, "x\u0000", null, true], n: 1e21 },
          tokenCount: 0,
          finishReason: "tool_calls",
          timestamp: 1201,
        },
        { role: "tool", content: "", toolCallId: "c\u0000", toolName: "n\u0000", timestamp: 1202 },
      ]);
      for (const includeRewound of [false, true]) {
        for (const record of await collect(db().exportSessions({ includeRewound }))) {
          const messages = await db().getMessages(record.session.id, { includeRewound });
          const expected = messages.map(({ id: _i, sessionId: _s, ...rest }) => rest);
          expect(JSON.stringify(record.messages)).toBe(JSON.stringify(expected));
        }
      }
    });

    test("exportSessionLines yields each record's line, byte for byte JSON.stringify of exportSessions, for tricky text and numbers", async () => {
      await seedRich(db());
      await seedTricky(db());
      const utf8 = new TextDecoder("utf-8", { fatal: true });
      for (const options of [
        {},
        { includeRewound: true },
        { sessionId: "tricky" },
        { sessionId: "tricky", includeRewound: true },
        { sessionId: "empty" },
        { sources: ["cli", "telegram"] },
        { userId: "u2" },
      ]) {
        const lines = await collect(db().exportSessionLines(options));
        const expected = await stringifiedLines(db(), options);
        const got = Buffer.concat(lines);
        expect(got.toString("utf8"), JSON.stringify(options)).toBe(expected.toString("utf8"));
        expect(got.equals(expected), JSON.stringify(options)).toBe(true);
        for (const line of lines) {
          const text = utf8.decode(line);
          expect(text.indexOf("\n")).toBe(text.length - 1);
        }
      }
      // The parsed line is the transcript's message, field for field (numbers and strings as stored).
      const [line] = await collect(db().exportSessionLines({ sessionId: "tricky" }));
      const record = JSON.parse(utf8.decode(line)) as SessionRecord;
      const messages = await db().getMessages("tricky");
      expect(record.messages).toEqual(messages.map(({ id: _i, sessionId: _s, ...rest }) => rest));
      expect(record.messages.map((m) => m.timestamp)).toEqual(TRICKY_TIMES);
      expect(record.session).toEqual(sessionPart((await db().getSession("tricky"))!));
    });

    test("lines of exportSessionLines import into a fresh store, which exports the same lines", async () => {
      await seedRich(db());
      await seedTricky(db());
      const lines = await collect(db().exportSessionLines({ includeRewound: true }));
      const target = await freshStore();
      const report = await target.importSessions(lines.map((line) => Buffer.from(line).toString("utf8").slice(0, -1)));
      expect(report).toEqual({ imported: 4, skipped: 0, errors: [] });
      const sorted = (all: Uint8Array[]) => all.map((l) => Buffer.from(l).toString("utf8")).sort();
      expect(sorted(await collect(target.exportSessionLines({ includeRewound: true })))).toEqual(sorted(lines));
      expect(await target.getMessages("tricky")).toHaveLength(TRICKY_TIMES.length);
    });

    test("export all, one session, or by source", async () => {
      await seedRich(db());
      expect(new Set((await collect(db().exportSessions())).map((r) => r.session.id))).toEqual(new Set(["parent", "child", "empty"]));
      expect((await collect(db().exportSessions({ sessionId: "child" }))).map((r) => r.session.id)).toEqual(["child"]);
      expect((await collect(db().exportSessions({ sources: ["telegram"] }))).map((r) => r.session.id)).toEqual(["child"]);
      expect(new Set((await collect(db().exportSessions({ sources: ["telegram", "discord"] }))).map((r) => r.session.id))).toEqual(new Set(["child", "empty"]));
      expect(await collect(db().exportSessions({ sources: ["nowhere"] }))).toEqual([]);
      const [empty] = await collect(db().exportSessions({ sessionId: "empty" }));
      expect(empty?.messages).toEqual([]);
    });

    test("an empty store exports nothing", async () => {
      expect(await collect(db().exportSessions())).toEqual([]);
    });

    test("export → import into a fresh store reproduces sessions, titles, parents and messages", async () => {
      await seedRich(db());
      const exported = await collect(db().exportSessions({ includeRewound: true }));
      const target = await freshStore();
      const report = await target.importSessions(exported.map((r) => JSON.stringify(r)));
      expect(report).toEqual({ imported: 3, skipped: 0, errors: [] });

      for (const id of ["parent", "child", "empty"]) {
        expect(await target.getSession(id), id).toEqual(await db().getSession(id));
        const strip = (ms: Awaited<ReturnType<SessionDB["getMessages"]>>) => ms.map(({ id: _i, ...rest }) => rest);
        expect(strip(await target.getMessages(id, { includeRewound: true }))).toEqual(strip(await db().getMessages(id, { includeRewound: true })));
        expect(strip(await target.getMessages(id))).toEqual(strip(await db().getMessages(id)));
      }
      expect(await target.resolveByTitle("Parent title")).toBe("parent");
      expect(await target.resolveByTitle("Child title")).toBe("child");
      expect(ids(await target.getAncestors("child"))).toEqual(["parent"]);
      expect(await target.getCompressionTip("parent")).toBe("child");
      const again = await collect(target.exportSessions({ includeRewound: true }));
      expect([...again].sort(byId)).toEqual([...exported].sort(byId));
      // The imported messages are searchable; the rewound ones are not.
      const catHits = await target.searchMessages("cat");
      expect(catHits).toHaveLength(2);
      expect(new Set(catHits.map((h) => h.sessionId))).toEqual(new Set(["parent"]));
      expect(await target.searchMessages("undo")).toEqual([]);
    });

    test("importing twice skips every session the second time", async () => {
      await seedRich(db());
      const lines = (await collect(db().exportSessions())).map((r) => JSON.stringify(r));
      const target = await freshStore();
      expect(await target.importSessions(lines)).toEqual({ imported: 3, skipped: 0, errors: [] });
      const before = await Promise.all(["parent", "child", "empty"].map((id) => target.getMessages(id)));
      expect(await target.importSessions(lines)).toEqual({ imported: 0, skipped: 3, errors: [] });
      const after = await Promise.all(["parent", "child", "empty"].map((id) => target.getMessages(id)));
      expect(after).toEqual(before);
      expect((await target.getStats()).totalSessions).toBe(3);
      // Importing into the store it came from skips everything too.
      expect(await db().importSessions(lines)).toEqual({ imported: 0, skipped: 3, errors: [] });
      expect((await db().getSession("child"))?.messageCount).toBe(2);
    });

    test("a repeated session changes nothing, even when the record differs", async () => {
      await db().importSessions([JSON.stringify(makeRecord("r1", { title: "First" }))]);
      const report = await db().importSessions([JSON.stringify(makeRecord("r1", { title: "Second", source: "telegram" }))]);
      expect(report).toEqual({ imported: 0, skipped: 1, errors: [] });
      const s = await db().getSession("r1");
      expect(s?.title).toBe("First");
      expect(s?.source).toBe("cli");
      expect(s?.messageCount).toBe(1);
    });

    test("bad lines are reported with their 1-based line number and skipped; blank lines are ignored", async () => {
      const badMessage = makeRecord("bad-message");
      (badMessage.messages[0] as { role: string }).role = "bogus";
      const lines = [
        JSON.stringify(makeRecord("ok-1")),
        "{not json",
        JSON.stringify({ format: "threadline.session", version: 1, session: { id: 5 } }),
        "",
        JSON.stringify(makeRecord("ok-2")),
        "   ",
        JSON.stringify({ ...makeRecord("wrong-version"), version: 2 }),
        JSON.stringify({ ...makeRecord("wrong-format"), format: "something.else" }),
        JSON.stringify(badMessage),
        "[]",
        "null",
        JSON.stringify(makeRecord("no-source", { source: undefined as unknown as string })),
        JSON.stringify(makeRecord("ok-3")),
      ];
      const report = await db().importSessions(lines);
      expect(report.imported).toBe(3);
      expect(report.skipped).toBe(0);
      expect(report.errors.map((e) => e.line)).toEqual([2, 3, 7, 8, 9, 10, 11, 12]);
      for (const e of report.errors) expect(e.message.length).toBeGreaterThan(0);
      for (const id of ["ok-1", "ok-2", "ok-3"]) expect((await db().getSession(id))?.messageCount).toBe(1);
      for (const id of ["wrong-version", "wrong-format", "bad-message", "no-source"]) {
        expect(await db().getSession(id), id).toBeNull();
      }
      expect((await db().getStats()).totalSessions).toBe(3);
      expect((await db().getStats()).totalMessages).toBe(3);
    });

    test("an imported record is validated like any other input", async () => {
      await db().createSession({ id: "holder", source: "cli", title: "Taken" });
      const surrogate = makeRecord("surrogate");
      (surrogate.messages[0] as { content: string }).content = "bad \uD800 text";
      const badTime = makeRecord("bad-time");
      const lines = [
        JSON.stringify(makeRecord("long-title", { title: "t".repeat(101) })),
        JSON.stringify(surrogate),
        JSON.stringify(makeRecord("title-clash", { title: "Taken" })),
        JSON.stringify({ ...badTime, session: { ...badTime.session, startedAt: "yesterday" } }),
        JSON.stringify(makeRecord("fine")),
      ];
      const report = await db().importSessions(lines);
      expect(report.errors.map((e) => e.line)).toEqual(expect.arrayContaining([1, 2, 4]));
      expect(report.errors.map((e) => e.line)).not.toContain(5);
      for (const id of ["long-title", "surrogate", "bad-time"]) expect(await db().getSession(id), id).toBeNull();
      expect((await db().getSession("fine"))?.messageCount).toBe(1);
      // A title clash never leaves two sessions with one title.
      const titled = (await db().listSessions({ includeChildren: true, limit: 100 })).items.filter((r) => r.title === "Taken");
      expect(titled.map((r) => r.id)).toEqual(["holder"]);
      expect(await db().resolveByTitle("Taken")).toBe("holder");
    });

    test("importSessions accepts an async iterable of lines", async () => {
      const report = await db().importSessions(asyncLines([JSON.stringify(makeRecord("a1")), "", JSON.stringify(makeRecord("a2")), "oops"]));
      expect(report.imported).toBe(2);
      expect(report.errors.map((e) => e.line)).toEqual([4]);
      expect((await db().getMessages("a2")).map((m) => m.content)).toEqual(["hello from a2"]);
    });

    test("a child before its parent in the file is linked once the parent arrives", async () => {
      const lines = [
        JSON.stringify(makeRecord("kid", { parentSessionId: "mom", startedAt: 2000 })),
        JSON.stringify(makeRecord("grandkid", { parentSessionId: "kid", startedAt: 3000 })),
        JSON.stringify(makeRecord("mom", { startedAt: 1000 })),
      ];
      expect(await db().importSessions(lines)).toEqual({ imported: 3, skipped: 0, errors: [] });
      expect((await db().getSession("kid"))?.parentSessionId).toBe("mom");
      expect(ids(await db().getAncestors("grandkid"))).toEqual(["kid", "mom"]);
      expect(ids(await db().getDescendants("mom"))).toEqual(["kid", "grandkid"]);
    });

    test("a record whose parent already exists in the store is linked", async () => {
      await db().createSession({ id: "existing", source: "cli" });
      await db().importSessions([JSON.stringify(makeRecord("new-child", { parentSessionId: "existing" }))]);
      expect(ids(await db().getAncestors("new-child"))).toEqual(["existing"]);
    });

    test("a record that would close a lineage cycle is rejected with its line number", async () => {
      const report = await db().importSessions([
        JSON.stringify(makeRecord("x", { parentSessionId: "y" })),
        JSON.stringify(makeRecord("y", { parentSessionId: "z" })),
        JSON.stringify(makeRecord("z", { parentSessionId: "x" })),
      ]);
      // z closes the cycle x → y → z → x. (What becomes of x and y, whose parents never
      // arrive, is left to the backend; they must not form a cycle.)
      expect(report.errors.map((e) => e.line)).toContain(3);
      expect(await db().getSession("z")).toBeNull();
      // Lineage walks still end.
      expect((await db().getAncestors("x")).length).toBeLessThanOrEqual(1);
      expect((await db().getDescendants("x")).length).toBeLessThanOrEqual(1);

      const self = await db().importSessions(["", JSON.stringify(makeRecord("self", { parentSessionId: "self" }))]);
      expect(self.errors.map((e) => e.line)).toEqual([2]);
      expect(await db().getSession("self")).toBeNull();
    });

    test("an export can be consumed while the store keeps working", async () => {
      for (let i = 0; i < 12; i++) {
        await db().createSession({ id: `e${String(i).padStart(2, "0")}`, source: "cli", startedAt: 1000 + i });
        await db().appendMessage(`e${String(i).padStart(2, "0")}`, user(`message ${i}`, 1000 + i));
      }
      const seen: string[] = [];
      for await (const record of db().exportSessions()) {
        seen.push(record.session.id);
        await db().createSession({ source: "other" });
        await db().appendMessage("e00", user("written during export"));
        expect(await db().getSession(record.session.id)).not.toBeNull();
        if (seen.length >= 12 + 30) break;
      }
      const original = seen.filter((id) => id.startsWith("e"));
      expect(new Set(original).size).toBe(original.length);
      expect(new Set(original)).toEqual(new Set(Array.from({ length: 12 }, (_, i) => `e${String(i).padStart(2, "0")}`)));

      // Stopping early leaves the store usable.
      for await (const _record of db().exportSessions()) break;
      await db().appendMessage("e01", user("after an abandoned export"));
      expect((await db().getMessages("e01")).at(-1)?.content).toBe("after an abandoned export");
    });
  });
}
