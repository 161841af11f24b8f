/**
 * The memory routes over real loopback HTTP, on both backends: `GET /memory` lists records
 * newest first with a cursor (times in epoch seconds, each with its limit), `GET
 * /memory/{platform}/{userId}` both kinds, `PUT …/{kind}` replaces the entries with the
 * version read (a stale version is a 409 naming the version now; too long is a 422 naming the
 * limit), `DELETE …[/{kind}]` clears one kind or both (404 when nothing is stored). A key
 * scoped to a user reads and writes its own memories (test/security/memory-tenant-scope covers
 * everyone else's).
 */
import { afterEach, expect, it } from "vitest";
import type { SessionDB } from "../../src/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { ALICE, call, closeServers, startApi } from "./api-harness.js";

afterEach(closeServers);

const T0 = 1_700_000_000_000;

/** Seeds three people's memories, written one second apart (alice's user memory last). */
async function seedMemories(db: SessionDB): Promise<void> {
  const write = async (platform: string, userId: string, kind: "memory" | "user", entries: string[], at: number): Promise<void> => {
    const written = await db.writeMemory({ owner: { platform, userId }, kind, entries, expectedVersion: null, now: T0 + at * 1000 });
    if (written === null) throw new Error(`seeding ${platform}/${userId}/${kind} conflicted`);
  };
  await write("owner", "owner", "memory", ["The operator deploys on Fridays."], 1);
  await write("slack", "bob", "memory", ["Bob prefers short answers."], 2);
  await write("telegram", "alice", "memory", ["Alice's project is called Kestrel.", "She is in UTC+2."], 3);
  await write("telegram", "alice", "user", ["Alice is a pilot."], 4);
}

forEachBackend((backend) => {
  it("an admin key lists every record newest first, pages with the cursor, and reads both kinds of a person", async () => {
    const { db } = await backend.fresh();
    await seedMemories(db);
    const api = await startApi(db);

    const all = await call(api, "GET", "/memory");
    expect(all.status, all.text).toBe(200);
    expect(all.body.items.map((r: { owner: { platform: string }; kind: string }) => `${r.owner.platform}/${r.kind}`)).toEqual([
      "telegram/user",
      "telegram/memory",
      "slack/memory",
      "owner/memory",
    ]);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items[1]).toEqual({
      owner: { platform: "telegram", userId: "alice" },
      kind: "memory",
      entries: ["Alice's project is called Kestrel.", "She is in UTC+2."],
      chars: [..."Alice's project is called Kestrel.\n§\nShe is in UTC+2."].length,
      limit: 2200,
      updatedAt: T0 / 1000 + 3,
      version: 1,
    });
    expect(all.body.items[0]).toMatchObject({ kind: "user", limit: 1375 });

    const first = await call(api, "GET", "/memory?limit=3");
    expect(first.body.items).toHaveLength(3);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(api, "GET", `/memory?limit=3&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.items.map((r: { owner: { platform: string } }) => r.owner.platform)).toEqual(["owner"]);
    expect(second.body.nextCursor).toBeNull();

    expect((await call(api, "GET", "/memory?platform=owner")).body.items).toHaveLength(1);
    expect((await call(api, "GET", "/memory?user_id=bob")).body.items.map((r: { owner: unknown }) => r.owner)).toEqual([{ platform: "slack", userId: "bob" }]);
    const unknownParam = await call(api, "GET", "/memory?userId=bob");
    expect(unknownParam.status).toBe(422);

    const alice = await call(api, "GET", "/memory/telegram/alice");
    expect(alice.status).toBe(200);
    expect(alice.body.owner).toEqual({ platform: "telegram", userId: "alice" });
    expect(alice.body.memory.entries).toHaveLength(2);
    expect(alice.body.user.entries).toEqual(["Alice is a pilot."]);
    const bob = await call(api, "GET", "/memory/slack/bob");
    expect(bob.body.user).toBeNull();
    expect((await call(api, "GET", "/memory/owner/owner")).body.memory.entries).toEqual(["The operator deploys on Fridays."]);

    const nobody = await call(api, "GET", "/memory/slack/nobody");
    expect(nobody.status).toBe(404);
    expect(nobody.body.error).toEqual({ code: "TL_ERR_NOT_FOUND", message: "Memory of user 'nobody' on 'slack' not found" });
  });

  it("PUT replaces the entries with the version read: stale is 409 with the version now, too long is 422 naming the limit", async () => {
    const { db } = await backend.fresh();
    await seedMemories(db);
    const api = await startApi(db);

    const updated = await call(api, "PUT", "/memory/slack/bob/memory", {
      body: { entries: ["Bob prefers bullet points.", "Bob is on call this week."], expectedVersion: 1 },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({
      owner: { platform: "slack", userId: "bob" },
      kind: "memory",
      version: 2,
      limit: 2200,
      entries: ["Bob prefers bullet points.", "Bob is on call this week."],
    });
    expect((await db.getMemory({ platform: "slack", userId: "bob" }, "memory"))?.entries).toEqual(["Bob prefers bullet points.", "Bob is on call this week."]);

    // Someone else wrote version 2 meanwhile: a client still holding version 1 is refused, nothing is written.
    const stale = await call(api, "PUT", "/memory/slack/bob/memory", { body: { entries: ["overwritten"], expectedVersion: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: "TL_ERR_CONFLICT", details: { version: 2 } });
    expect(stale.body.error.message).toMatch(/changed elsewhere.*version 1.*version 2.*Reload/u);
    expect((await db.getMemory({ platform: "slack", userId: "bob" }, "memory"))?.version).toBe(2);

    // Creating: null must mean "none yet".
    const created = await call(api, "PUT", "/memory/slack/bob/user", { body: { entries: ["Bob works nights."], expectedVersion: null } });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ kind: "user", version: 1, limit: 1375 });
    const createdTwice = await call(api, "PUT", "/memory/slack/bob/user", { body: { entries: ["again"], expectedVersion: null } });
    expect(createdTwice.status).toBe(409);
    expect(createdTwice.body.error.details).toEqual({ version: 1 });

    // Over the limit: 1375 characters for user.
    const tooLong = await call(api, "PUT", "/memory/slack/bob/user", { body: { entries: ["x".repeat(1376)], expectedVersion: 1 } });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.error.code).toBe("TL_ERR_INVALID_INPUT");
    expect(tooLong.body.error.message).toMatch(/1,?375/u);
    const exactly = await call(api, "PUT", "/memory/slack/bob/user", { body: { entries: ["x".repeat(1375)], expectedVersion: 1 } });
    expect(exactly.status, exactly.text).toBe(200);

    // Bad bodies and kinds.
    expect((await call(api, "PUT", "/memory/slack/bob/user", { body: { entries: ["a"] } })).status).toBe(422);
    expect((await call(api, "PUT", "/memory/slack/bob/user", { body: { entries: ["a"], expectedVersion: 2, extra: 1 } })).status).toBe(422);
    expect((await call(api, "PUT", "/memory/slack/bob/notes", { body: { entries: ["a"], expectedVersion: 2 } })).status).toBe(422);
    expect((await db.getMemory({ platform: "slack", userId: "bob" }, "user"))?.version).toBe(2);
  });

  it("DELETE clears one kind or both; nothing stored is 404", async () => {
    const { db } = await backend.fresh();
    await seedMemories(db);
    const api = await startApi(db);
    expect((await call(api, "DELETE", "/memory/telegram/alice/user")).status).toBe(204);
    const after = await call(api, "GET", "/memory/telegram/alice");
    expect(after.body.user).toBeNull();
    expect(after.body.memory.entries).toHaveLength(2);
    expect((await call(api, "DELETE", "/memory/telegram/alice/user")).status).toBe(404);
    expect((await call(api, "DELETE", "/memory/telegram/alice")).status).toBe(204);
    expect((await call(api, "GET", "/memory/telegram/alice")).status).toBe(404);
    expect((await call(api, "DELETE", "/memory/telegram/alice")).status).toBe(404);
    expect(await db.getMemory({ platform: "telegram", userId: "alice" }, "memory")).toBeNull();
    expect((await call(api, "GET", "/memory")).body.items).toHaveLength(2);
  });

  it("a key scoped to a user reads, writes and clears its own memories on any platform", async () => {
    const { db } = await backend.fresh();
    await seedMemories(db);
    const api = await startApi(db);
    const mine = await call(api, "GET", "/memory", { key: ALICE });
    expect(mine.body.items.map((r: { owner: { userId: string } }) => r.owner.userId)).toEqual(["alice", "alice"]);
    const put = await call(api, "PUT", "/memory/api-server/alice/user", { key: ALICE, body: { entries: ["Alice also uses the API."], expectedVersion: null } });
    expect(put.status, put.text).toBe(200);
    expect((await call(api, "GET", "/memory/api-server/alice", { key: ALICE })).body.user.entries).toEqual(["Alice also uses the API."]);
    expect((await call(api, "GET", "/memory", { key: ALICE })).body.items).toHaveLength(3);
    expect((await call(api, "DELETE", "/memory/telegram/alice", { key: ALICE })).status).toBe(204);
    expect(await db.getMemory({ platform: "telegram", userId: "alice" }, "memory")).toBeNull();
  });
});
