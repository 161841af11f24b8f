/**
 * Issue 26, point 2, through a real `threadline serve`: unrelated conversations that start
 * alike get distinct titles that do not read as a lineage (`t (2)`, not `t #2`), so a title
 * argument can never land on an unrelated chat; `#N` stays with compression continuations.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cleanupProcesses, makeHome, postChat, spawnGateway, waitFor, withDatabase } from "./gateway-process.js";

afterEach(async () => {
  await cleanupProcesses();
});

describe("threadline serve: auto-titles of unrelated chats", () => {
  it("three chats that start 'hello there' are titled t, t (2) and t (3), with no parent links between them", async () => {
    const home = await makeHome();
    // No provider: the echo agent answers and the heuristic titler names each session.
    const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, THREADLINE_MODEL: undefined } });
    const ids: string[] = [];
    for (const key of ["alice", "bob", "carol"]) {
      const response = await postChat(gateway.url, "hello there", { sessionKey: key });
      expect(response.status).toBe(200);
      const id = response.headers.get("x-threadline-session-id");
      expect(id).not.toBeNull();
      ids.push(id!);
      // Titling runs after the reply: wait for it before the next chat, so the order is known.
      await waitFor(() => withDatabase(home, async (db) => (await db.getTitle(id!)) ?? false), { what: `the title of ${id}`, timeoutMs: 10_000 });
    }
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    await withDatabase(home, async (db) => {
      const sessions = await Promise.all(ids.map((id) => db.getSession(id)));
      const [first, second, third] = sessions.map((s) => s!.title!);
      expect(first).toMatch(/^Hello there$/iu);
      expect(first).not.toMatch(/ (#\d+|\(\d+\))$/u);
      expect([second, third]).toEqual([`${first} (2)`, `${first} (3)`]);
      expect(sessions.map((s) => s!.parentSessionId)).toEqual([null, null, null]);
      // Each title names its own session.
      for (const s of sessions) expect(await db.resolveByTitle(s!.title!)).toBe(s!.id);
    });
  }, 60_000);
});
