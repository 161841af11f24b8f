/**
 * The pairing routes over real loopback HTTP, on both backends: `GET /pairing` lists pending
 * codes and approved people, `POST /pairing/approve` approves a code (unknown: 404 without the
 * code in the reply; after 5 failures: 409 with `details.until`), `DELETE
 * /pairing/{platform}/{userId}` revokes. Keys scoped to a user get 403 on every one of them
 * and nothing changes.
 */
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { ALICE, call, closeServers, startApi } from "./api-harness.js";

afterEach(closeServers);

forEachBackend((backend) => {
  it("an admin key lists pending codes (seconds), approves one, and the person is listed as approved; revoke removes them", async () => {
    const { db } = await backend.fresh();
    const asked = await db.requestPairingCode("telegram", "4242", { userName: "<img src=x onerror=alert(1)>", chatId: "4242" });
    if (asked.kind !== "code") throw new Error(asked.kind);
    const api = await startApi(db);

    const list = await call(api, "GET", "/pairing");
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      pending: [
        {
          platform: "telegram",
          code: asked.code,
          userId: "4242",
          userName: "<img src=x onerror=alert(1)>",
          chatId: "4242",
          createdAt: expect.any(Number),
          expiresAt: asked.expiresAt / 1000,
        },
      ],
      approved: [],
    });
    expect(list.body.pending[0].expiresAt - list.body.pending[0].createdAt).toBe(3600);
    expect((await call(api, "GET", "/pairing?platform=slack")).body).toEqual({ pending: [], approved: [] });

    const typed = `${asked.code.slice(0, 4).toLowerCase()} ${asked.code.slice(4)}`;
    const approved = await call(api, "POST", "/pairing/approve", { body: { platform: "telegram", code: typed } });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toEqual({
      approved: { platform: "telegram", userId: "4242", userName: "<img src=x onerror=alert(1)>", approvedAt: expect.any(Number), approvedBy: "http:ops" },
    });
    expect(await db.isPairingApproved("telegram", "4242")).toBe(true);
    expect((await call(api, "GET", "/pairing")).body.approved).toHaveLength(1);

    expect((await call(api, "DELETE", "/pairing/telegram/4242")).status).toBe(204);
    expect(await db.isPairingApproved("telegram", "4242")).toBe(false);
    const again = await call(api, "DELETE", "/pairing/telegram/4242");
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("TL_ERR_NOT_FOUND");
  });

  it("an unknown code is 404 without the code; 5 failures lock approvals: 409 with details.until, even for the right code", async () => {
    const { db } = await backend.fresh();
    const asked = await db.requestPairingCode("slack", "U1");
    if (asked.kind !== "code") throw new Error(asked.kind);
    const api = await startApi(db);
    const wrong = asked.code === "ZZZZZZZZ" ? "YYYYYYYY" : "ZZZZZZZZ";
    for (let i = 0; i < 5; i++) {
      const failed = await call(api, "POST", "/pairing/approve", { body: { platform: "slack", code: wrong } });
      expect(failed.status).toBe(404);
      expect(failed.text).not.toContain(wrong);
    }
    const locked = await call(api, "POST", "/pairing/approve", { body: { platform: "slack", code: asked.code } });
    expect(locked.status).toBe(409);
    expect(locked.body.error).toMatchObject({ code: "TL_ERR_CONFLICT", details: { platform: "slack", until: expect.any(Number) } });
    expect(locked.body.error.details.until - Date.now() / 1000).toBeGreaterThan(3500);
    expect(locked.text).not.toContain(asked.code);
    expect(await db.isPairingApproved("slack", "U1")).toBe(false);
  });

  it("bad input: an unknown platform or a missing code is 422 naming the field", async () => {
    const { db } = await backend.fresh();
    const api = await startApi(db);
    const platform = await call(api, "POST", "/pairing/approve", { body: { platform: "irc", code: "ABCDEFGH" } });
    expect(platform.status).toBe(422);
    expect(platform.body.error.details.field).toBe("platform");
    const code = await call(api, "POST", "/pairing/approve", { body: { platform: "telegram" } });
    expect(code.status).toBe(422);
    expect(code.body.error.details.field).toBe("code");
    expect((await call(api, "GET", "/pairing?platform=irc")).status).toBe(422);
  });

  it("a key scoped to a user gets 403 on every pairing route, and nothing changes", async () => {
    const { db } = await backend.fresh();
    const asked = await db.requestPairingCode("discord", "D1");
    if (asked.kind !== "code") throw new Error(asked.kind);
    const other = await db.requestPairingCode("discord", "D2");
    if (other.kind !== "code") throw new Error(other.kind);
    await db.approvePairingCode("discord", other.code);
    const api = await startApi(db);
    const list = await call(api, "GET", "/pairing", { key: ALICE });
    expect(list.status).toBe(403);
    expect(list.text).not.toContain(asked.code);
    const approve = await call(api, "POST", "/pairing/approve", { key: ALICE, body: { platform: "discord", code: asked.code } });
    expect(approve.status).toBe(403);
    const revoke = await call(api, "DELETE", "/pairing/discord/D2", { key: ALICE });
    expect(revoke.status).toBe(403);
    for (const reply of [list, approve, revoke]) expect(reply.body.error.code).toBe("TL_ERR_FORBIDDEN");
    expect(await db.isPairingApproved("discord", "D1")).toBe(false);
    expect(await db.isPairingApproved("discord", "D2")).toBe(true);
    expect((await db.listPairing()).pending.map((p) => p.userId)).toEqual(["D1"]);
  });
});
