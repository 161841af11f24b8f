/**
 * Threat: an api-server caller is whoever it claims to be (issue 27, point 5). The `user`
 * field and `X-Threadline-Session-Key` named the person, and tokens were tied to no one:
 * any token holder could continue another person's conversation, or search as them. A
 * token `{ token, userId }` acts as that person only: its sessions are that person's and
 * live in their own key space; a `user` field naming someone else is refused (403). A
 * plain-string token is an operator token, and the startup log says it may act as anyone.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { cleanupProcesses, databaseOf, makeHome, postChat, spawnGateway, withDatabaseAt } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 60_000;
const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef00";
const OPERATOR = "operator-token-0123456789";

const schemas: string[] = [];
afterEach(async () => {
  await cleanupProcesses();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** The database target of a backend: the home's SQLite file, or a fresh PostgreSQL schema. */
async function databaseFor(backend: "sqlite" | "postgres", home: string): Promise<string> {
  if (backend === "sqlite") return databaseOf(home);
  await requirePostgres();
  const schema = `tl_sec_${randomBytes(5).toString("hex")}`;
  schemas.push(schema);
  return `${TEST_PG_URL}?schema=${schema}`;
}

describe.each(["sqlite", "postgres"] as const)("api-server tokens bound to a person (%s)", (backend) => {
  it(
    "a bound token acts as its person only: another person's session key and user field do not reach their conversation",
    async () => {
      const home = await makeHome({
        titles: { enabled: false },
        adapters: { apiServer: { tokens: [{ token: ALICE, userId: "alice", name: "Alice" }, { token: BOB, userId: "bob" }, OPERATOR] } },
      });
      const database = await databaseFor(backend, home);
      const gateway = await spawnGateway({ home, env: { THREADLINE_DB: database } });
      expect(gateway.output()).toContain(`"backend":"${backend}"`);
      expect(gateway.output()).toMatch(/operator token\(s\).*may act as anyone/);
      expect(gateway.output()).not.toContain(OPERATOR);

      const alice = await postChat(gateway.url, "my password hint is kiwi", { sessionKey: "notes", token: ALICE });
      expect(alice.status).toBe(200);
      const aliceSession = alice.headers.get("x-threadline-session-id");
      expect(aliceSession).toBeTruthy();

      // Bob naming the same session key lands in his own conversation, not Alice's.
      const bobSameKey = await postChat(gateway.url, "what is the hint?", { sessionKey: "notes", token: BOB });
      expect(bobSameKey.status).toBe(200);
      expect(bobSameKey.headers.get("x-threadline-session-id")).not.toBe(aliceSession);
      // Nor does spelling out Alice's key space reach it.
      const bobFullKey = await postChat(gateway.url, "what is the hint?", { sessionKey: "alice:notes", token: BOB });
      expect(bobFullKey.headers.get("x-threadline-session-id")).not.toBe(aliceSession);
      // A user field naming someone else is refused, and nothing is stored for it.
      const bobAsAlice = await postChat(gateway.url, "I am alice, really", { user: "alice", token: BOB });
      expect(bobAsAlice.status).toBe(403);
      expect(bobAsAlice.body.error?.message).toMatch(/acts as "bob" only/);
      const bobAsAliceWithKey = await postChat(gateway.url, "I am alice, really", { user: "alice", sessionKey: "notes", token: BOB });
      expect(bobAsAliceWithKey.status).toBe(403);
      // Naming oneself is fine.
      expect((await postChat(gateway.url, "hi, it is me", { user: "bob", token: BOB })).status).toBe(200);
      // Alice continues her own conversation with the same key.
      const aliceAgain = await postChat(gateway.url, "and again", { sessionKey: "notes", token: ALICE });
      expect(aliceAgain.headers.get("x-threadline-session-id")).toBe(aliceSession);
      // An operator token may act as anyone (that is what the startup warning says).
      expect((await postChat(gateway.url, "operator here", { user: "carol", token: OPERATOR })).status).toBe(200);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabaseAt(database, async (db) => {
        const owner = async (id: string | null): Promise<string | null | undefined> => (await db.getSession(id!))?.userId;
        expect(await owner(aliceSession)).toBe("alice");
        expect(await owner(bobSameKey.headers.get("x-threadline-session-id"))).toBe("bob");
        expect(await owner(bobFullKey.headers.get("x-threadline-session-id"))).toBe("bob");
        // Alice's session holds only Alice's words.
        const words = (await db.getMessages(aliceSession!)).filter((m) => m.role === "user").map((m) => m.content);
        expect(words).toEqual(["my password hint is kiwi", "and again"]);
        expect(await db.searchMessages("really")).toEqual([]);
      });
    },
    TEST_TIMEOUT,
  );
});

describe("api-server token config", () => {
  it("a bound token needs 16+ characters and a userId (config errors name the key)", async () => {
    const { parseServeConfig } = await import("../../src/serve/index.js");
    expect(() => parseServeConfig({ adapters: { apiServer: { tokens: [{ token: "short", userId: "alice" }] } } })).toThrow(/adapters\.apiServer\.tokens/);
    expect(() => parseServeConfig({ adapters: { apiServer: { tokens: [{ token: ALICE }] } } })).toThrow(/adapters\.apiServer\.tokens/);
    const config = parseServeConfig({ adapters: { apiServer: { tokens: [{ token: ALICE, userId: "alice" }, OPERATOR] } } });
    expect(config.adapters.apiServer.tokens).toEqual([{ token: ALICE, userId: "alice", name: null }, OPERATOR]);
  });
});
