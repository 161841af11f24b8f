/**
 * Threat: a restarted replica takes over leases it must not (docs/security.md, "A restarted
 * replica takes over a live process's sessions"). A lease is taken over early only from a dead
 * process of the same replica on the same host; the takeover bumps the token, so a late write
 * of the holder it was taken from is refused and writes nothing; a live process of the same
 * replica (two processes sharing one `replicaId`) keeps its lease.
 */
import { expect, it } from "vitest";
import { leaseHolderName, staleHolderTest } from "../../src/gateway/index.js";
import { releaseStaleLease } from "../../src/gateway/stale-leases.js";
import { LeaseLostError } from "../../src/store/errors.js";
import { forEachBackend } from "../gateway/backends.js";
import { deadPid } from "../support/dead-pid.js";

const SELF = { replicaId: "gw-a", host: "node-1", pid: process.pid };
const HOUR = 3600;

forEachBackend((backend) => {
  it("a stale holder's lease is released at once and the next holder's token is one higher: the dead holder's late write is refused", async () => {
    const { db } = await backend.fresh();
    const key = "agent:main:telegram:dm:1";
    await db.createSession({ id: "s", source: "telegram", sessionKey: key });
    const deadHolder = leaseHolderName({ ...SELF, pid: await deadPid() });
    const old = (await db.acquireLease(key, deadHolder, { ttlSeconds: HOUR }))!;
    const self = leaseHolderName(SELF);
    expect(await db.acquireLease(key, self, { ttlSeconds: HOUR })).toBeNull();

    expect(await releaseStaleLease(db, key, staleHolderTest(SELF))).toBe(true);
    const taken = (await db.acquireLease(key, self, { ttlSeconds: HOUR }))!;
    expect(taken).toMatchObject({ holder: self, token: old.token + 1 });
    await expect(db.appendMessage("s", { role: "user", content: "late" }, { fence: { key, token: old.token } })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await db.getMessages("s")).toEqual([]);
    // Nothing to release now: this process holds it, and it is alive.
    expect(await releaseStaleLease(db, key, staleHolderTest(SELF))).toBe(false);
    expect(await db.getLease(key)).toEqual(taken);
  });

  it("a live holder of the same replica keeps its lease (two processes with one replicaId do not steal from each other)", async () => {
    const { db } = await backend.fresh();
    const key = "agent:main:telegram:dm:2";
    const live = leaseHolderName({ ...SELF, pid: process.ppid });
    const held = (await db.acquireLease(key, live, { ttlSeconds: HOUR }))!;
    expect(await releaseStaleLease(db, key, staleHolderTest(SELF))).toBe(false);
    expect(await db.getLease(key)).toEqual(held);
    expect(await db.acquireLease(key, leaseHolderName(SELF), { ttlSeconds: HOUR })).toBeNull();
  });
});
