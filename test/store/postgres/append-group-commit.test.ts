/**
 * Group commit of PostgreSQL appends (`postgres-append-queue.ts`): appends to different sessions
 * that wait at the same moment share one statement and one commit (seen in the rows' `xmin`,
 * the id of the transaction that wrote them), keep per-session order, fail alone (an ended or
 * missing session, a lost lease, a row the server refuses), and resolve only once committed (a
 * second connection sees the rows as soon as the promise resolved).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseFence, NewMessage, SessionDB } from "../../../src/index.js";
import { ConflictError, LeaseLostError, NotFoundError, StoreError } from "../../../src/index.js";
import { withDefaultUser } from "../../../src/store/postgres/postgres-connection.js";
import { PostgresSessionDB } from "../../../src/store/postgres/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";

const schemas: string[] = [];
const open: SessionDB[] = [];
let admin: pg.Client;

async function openStore(): Promise<{ db: SessionDB; schema: string }> {
  const schema = `tl_test_gc_${randomBytes(6).toString("hex")}`;
  schemas.push(schema);
  const db = await PostgresSessionDB.open({ connectionString: TEST_PG_URL, schema, poolSize: 4 });
  open.push(db);
  return { db, schema };
}

const user = (content: string): NewMessage => ({ role: "user", content });

/** How many transactions wrote the messages of `sessions` (distinct `xmin`), and how many rows. */
async function writers(schema: string, sessions: string[]): Promise<{ transactions: number; rows: number }> {
  const { rows } = await admin.query<{ transactions: number; rows: number }>(
    `SELECT count(DISTINCT xmin::text)::int AS transactions, count(*)::int AS rows FROM "${schema}".messages WHERE session_id = ANY($1)`,
    [sessions],
  );
  return rows[0]!;
}

async function createSessions(db: SessionDB, prefix: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  for (const id of ids) await db.createSession({ id, source: "cli" });
  return ids;
}

describe("postgres: group commit of appends across sessions", () => {
  beforeAll(async () => {
    await requirePostgres();
    admin = new pg.Client({ connectionString: withDefaultUser(TEST_PG_URL) });
    await admin.connect();
  });

  afterAll(async () => {
    for (const db of open) await db.close().catch(() => {});
    await admin?.end();
    for (const schema of schemas) await dropSchema(schema);
  });

  it("concurrent appends to many sessions all land, in per-session call order, sharing commits", async () => {
    const { db, schema } = await openStore();
    const sessions = await createSessions(db, "many", 40);
    const perSession = 6;
    // Every call issued at once, none awaited: 240 appends in flight.
    const calls = sessions.flatMap((id) => Array.from({ length: perSession }, (_, k) => ({ id, k, done: db.appendMessage(id, user(`${id} #${k}`)) })));
    const ids = await Promise.all(calls.map((c) => c.done));
    expect(new Set(ids).size).toBe(calls.length);
    for (const id of sessions) {
      const transcript = await db.getMessages(id);
      expect(transcript.map((m) => m.content)).toEqual(Array.from({ length: perSession }, (_, k) => `${id} #${k}`));
      // Ids increase in call order: each append's id is the one its message got.
      const mine = calls.filter((c) => c.id === id).map((c) => ids[calls.indexOf(c)]);
      expect(transcript.map((m) => m.id)).toEqual(mine);
      expect((await db.getSession(id))!.messageCount).toBe(perSession);
    }
    const written = await writers(schema, sessions);
    expect(written.rows).toBe(sessions.length * perSession);
    // Group commit: far fewer transactions than appends (one per append without it).
    expect(written.transactions).toBeLessThan(sessions.length * perSession);
  });

  it("turns of several messages and tool calls from many sessions in one batch keep their ids contiguous and their tallies", async () => {
    const { db, schema } = await openStore();
    const sessions = await createSessions(db, "turns", 12);
    const turn = (id: string, k: number): NewMessage[] => [
      user(`${id} q${k}`),
      { role: "assistant", content: null, toolCalls: [{ id: `c${k}`, type: "function", function: { name: "search", arguments: "{}" } }] },
      { role: "tool", content: "result", toolCallId: `c${k}`, toolName: "search" },
      { role: "assistant", content: `${id} a${k}` },
    ];
    const results = await Promise.all(sessions.flatMap((id) => [0, 1].map((k) => db.appendTurn(id, turn(id, k)))));
    for (const ids of results) expect(ids).toEqual([...ids].sort((a, b) => a - b));
    for (const id of sessions) {
      const transcript = await db.getMessages(id);
      expect(transcript.map((m) => m.content)).toEqual([`${id} q0`, null, "result", `${id} a0`, `${id} q1`, null, "result", `${id} a1`]);
      const session = (await db.getSession(id))!;
      expect(session).toMatchObject({ messageCount: 8, toolCallCount: 2, preview: `${id} q0` });
    }
    const { rows } = await admin.query<{ calls: number }>(`SELECT sum(calls)::int AS calls FROM "${schema}".session_tool_calls WHERE tool_name = 'search'`);
    expect(rows[0]!.calls).toBe(sessions.length * 2);
    expect((await writers(schema, sessions)).transactions).toBeLessThan(results.length);
  });

  it("an append to an ended or a missing session fails alone; the others in its batch commit", async () => {
    const { db, schema } = await openStore();
    const sessions = await createSessions(db, "mixed", 20);
    await db.endSession("mixed-7", "done");
    const targets = [...sessions, "missing-one"];
    const settled = await Promise.allSettled(targets.map((id) => db.appendMessage(id, user(`to ${id}`))));
    for (const [i, id] of targets.entries()) {
      const outcome = settled[i]!;
      if (id === "mixed-7") expect(outcome.status === "rejected" && outcome.reason).toBeInstanceOf(ConflictError);
      else if (id === "missing-one") expect(outcome.status === "rejected" && outcome.reason).toBeInstanceOf(NotFoundError);
      else expect(outcome.status).toBe("fulfilled");
    }
    expect(await db.getMessages("mixed-7")).toEqual([]);
    expect((await db.getSession("mixed-7"))!.messageCount).toBe(0);
    const live = sessions.filter((id) => id !== "mixed-7");
    const written = await writers(schema, live);
    expect(written.rows).toBe(live.length);
    // The refused appends shared their batch with appends that committed.
    expect(written.transactions).toBeLessThan(live.length);
  });

  it("a fenced append whose lease was taken over fails alone with LeaseLostError; fenced and unfenced neighbours commit", async () => {
    const { db } = await openStore();
    const sessions = await createSessions(db, "fenced", 8);
    const fences: LeaseFence[] = [];
    for (const id of sessions) {
      const lease = (await db.acquireLease(`key:${id}`, "replica-a", { ttlSeconds: 30, now: 1_000 }))!;
      fences.push({ key: `key:${id}`, token: lease.token });
    }
    // Replica B takes over the lease of fenced-3 after it expired.
    await db.acquireLease("key:fenced-3", "replica-b", { ttlSeconds: 30, now: 2_000 });
    const settled = await Promise.allSettled(
      sessions.map((id, i) => (i % 2 === 0 ? db.appendMessage(id, user(`fenced ${id}`), { fence: fences[i]! }) : db.appendMessage(id, user(`plain ${id}`)))),
    );
    // fenced-3's append was unfenced: the takeover does not concern it.
    expect(settled.every((s) => s.status === "fulfilled")).toBe(true);
    // Now every append is fenced, and fenced-4's lease is taken over too: 3 and 4 fail, the rest commit.
    await db.acquireLease("key:fenced-4", "replica-b", { ttlSeconds: 30, now: 2_000 });
    const again = await Promise.allSettled(sessions.map((id, i) => db.appendMessage(id, user(`again ${id}`), { fence: fences[i]! })));
    for (const [i, outcome] of again.entries()) {
      if (i === 3 || i === 4) {
        expect(outcome.status === "rejected" && outcome.reason).toBeInstanceOf(LeaseLostError);
        expect(outcome.status === "rejected" && outcome.reason).toMatchObject({
          key: `key:fenced-${i}`,
          token: fences[i]!.token,
          currentToken: fences[i]!.token + 1,
        });
      } else {
        expect(outcome.status).toBe("fulfilled");
      }
    }
    expect((await db.getMessages("fenced-4")).map((m) => m.content)).toEqual(["fenced fenced-4"]);
    expect((await db.getMessages("fenced-5")).map((m) => m.content)).toEqual(["plain fenced-5", "again fenced-5"]);
  });

  it("a row the server refuses fails only its own append: the batch is sent again one append at a time", async () => {
    const { db, schema } = await openStore();
    const sessions = await createSessions(db, "poison", 10);
    // A rule only the server checks, so the statement carrying this row fails as a whole.
    await admin.query(`ALTER TABLE "${schema}".messages ADD CONSTRAINT no_poison CHECK (content IS DISTINCT FROM 'poison')`);
    const settled = await Promise.allSettled(sessions.map((id, i) => db.appendMessage(id, user(i === 9 ? "poison" : `fine ${id}`))));
    for (const [i, outcome] of settled.entries()) {
      if (i === 9) expect(outcome.status === "rejected" && outcome.reason).toBeInstanceOf(StoreError);
      else expect(outcome.status).toBe("fulfilled");
    }
    expect(await db.getMessages("poison-9")).toEqual([]);
    expect((await db.getSession("poison-9"))!.messageCount).toBe(0);
    expect((await writers(schema, sessions)).rows).toBe(sessions.length - 1);
  });

  it("an append resolves only once committed: another connection sees its row when the promise resolves", async () => {
    const { db, schema } = await openStore();
    const sessions = await createSessions(db, "durable", 16);
    // Other connections, one per session, so each look starts the moment its append resolved.
    const observer = new pg.Pool({ connectionString: withDefaultUser(TEST_PG_URL), max: sessions.length });
    try {
      const seen: boolean[] = [];
      const look = async (messageId: number): Promise<void> => {
        const { rows } = await observer.query(`SELECT 1 FROM "${schema}".messages WHERE id = $1`, [messageId]);
        seen.push(rows.length === 1);
      };
      await Promise.all(sessions.flatMap((id) => [0, 1, 2].map((k) => db.appendMessage(id, user(`${id} ${k}`)).then(look))));
      expect(seen).toHaveLength(sessions.length * 3);
      expect(seen.every(Boolean)).toBe(true);
    } finally {
      await observer.end();
    }
  });
});
