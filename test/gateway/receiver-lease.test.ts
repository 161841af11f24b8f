/**
 * The store-backed ReceiverLease with two holders (two replicas) on one real database: one
 * receives at a time, the other stands by and takes over when the first releases, loses the
 * lease, or dies (stops renewing); start and stop never overlap for one holder.
 */
import { expect, it } from "vitest";
import type { ReceiverHandlers } from "../../src/gateway/index.js";
import { receiverLeaseKey, StoreReceiverLease } from "../../src/gateway/receiver-lease.js";
import type { SessionDB } from "../../src/store/contract.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend } from "./backends.js";

/** A receiver that records its starts and stops, and whether it is receiving now. */
class Receiver implements ReceiverHandlers {
  receiving = false;
  starts = 0;
  stops = 0;
  overlaps = 0;
  #busy = false;
  failNextStart = false;

  async start(): Promise<void> {
    if (this.#busy) this.overlaps += 1;
    this.#busy = true;
    await Promise.resolve();
    this.#busy = false;
    if (this.failNextStart) {
      this.failNextStart = false;
      throw new Error("the platform refused the login");
    }
    this.starts += 1;
    this.receiving = true;
  }

  async stop(): Promise<void> {
    if (this.#busy) this.overlaps += 1;
    this.#busy = true;
    await Promise.resolve();
    this.#busy = false;
    this.stops += 1;
    this.receiving = false;
  }
}

const TTL = 1;

forEachBackend((backend) => {
  function lease(db: SessionDB, holder: string): StoreReceiverLease {
    return new StoreReceiverLease(db, "discord", { holder, ttlSeconds: TTL });
  }

  it("one holder receives, the other stands by and takes over when the first releases", async () => {
    const { db, reopen } = await backend.fresh();
    const a = new Receiver();
    const b = new Receiver();
    const releaseA = lease(db, "replica-a").hold(a);
    await waitFor(() => a.receiving, { what: "replica A receiving" });
    const releaseB = lease(await reopen(), "replica-b").hold(b);
    // B stands by: its first look found A's lease (the lease row names A), and it keeps looking.
    await waitFor(async () => (await db.getLease(receiverLeaseKey("discord")))?.holder === "replica-a", { what: "A's lease" });
    expect(b.starts).toBe(0);
    await releaseA();
    expect(a).toMatchObject({ receiving: false, starts: 1, stops: 1 });
    await waitFor(() => b.receiving, { what: "replica B taking over" });
    expect((await db.getLease(receiverLeaseKey("discord")))?.holder).toBe("replica-b");
    await releaseB();
    expect(b).toMatchObject({ receiving: false, starts: 1, stops: 1 });
    expect(await db.getLease(receiverLeaseKey("discord"))).toBeNull();
    expect(a.overlaps + b.overlaps).toBe(0);
  });

  it("a holder that dies (stops renewing) is taken over once its lease runs out; the lease renews while held", async () => {
    const { db, reopen } = await backend.fresh();
    const dying = await reopen();
    const a = new Receiver();
    const b = new Receiver();
    lease(dying, "replica-a").hold(a);
    await waitFor(() => a.receiving, { what: "replica A receiving" });
    const first = (await db.getLease(receiverLeaseKey("discord")))!;
    // Held across several TTLs: renewed, never handed over.
    await waitFor(async () => ((await db.getLease(receiverLeaseKey("discord")))?.expiresAt ?? 0) > first.expiresAt + 2 * TTL, {
      what: "two TTLs of renewals",
    });
    const releaseB = lease(db, "replica-b").hold(b);
    expect((await db.getLease(receiverLeaseKey("discord")))?.holder).toBe("replica-a");
    // A's database connection goes away (the process died): no renewals any more.
    await dying.close();
    await waitFor(() => b.receiving, { what: "replica B taking over after A's lease ran out" });
    const taken = (await db.getLease(receiverLeaseKey("discord")))!;
    expect(taken).toMatchObject({ holder: "replica-b", token: first.token + 1 });
    // A (its renewals failing) stops receiving by itself once its lease has run out.
    await waitFor(() => !a.receiving, { what: "replica A stopping after its lease ran out" });
    await releaseB();
  });

  it("a holder whose lease was taken stops receiving, goes back to waiting and receives again once it is free", async () => {
    const { db, reopen } = await backend.fresh();
    const a = new Receiver();
    const releaseA = lease(await reopen(), "replica-a").hold(a);
    await waitFor(() => a.receiving, { what: "replica A receiving" });
    const held = (await db.getLease(receiverLeaseKey("discord")))!;
    // Another process took the key (A's lease released under it, then acquired by a third holder).
    expect(await db.releaseLease(held.key, "replica-a", held.token)).toBe(true);
    const other = (await db.acquireLease(held.key, "intruder", { ttlSeconds: 3600, now: Date.now() / 1000 }))!;
    await waitFor(() => a.stops === 1, { what: "replica A stopping after losing the lease" });
    expect(a.receiving).toBe(false);
    // It waits, and takes the lease again once the other holder gives it up.
    expect(await db.releaseLease(other.key, "intruder", other.token)).toBe(true);
    await waitFor(() => a.starts === 2 && a.receiving, { what: "replica A receiving again" });
    await releaseA();
    expect(a).toMatchObject({ starts: 2, stops: 2, overlaps: 0 });
  });

  it("a start that fails gives the lease up, so another replica can receive", async () => {
    const { db, reopen } = await backend.fresh();
    const a = new Receiver();
    a.failNextStart = true;
    const b = new Receiver();
    const releaseA = lease(db, "replica-a").hold(a);
    const releaseB = lease(await reopen(), "replica-b").hold(b);
    await waitFor(() => a.receiving || b.receiving, { what: "one replica receiving" });
    // Both keep looking: exactly one receives at any time it is checked.
    await waitFor(async () => (await db.getLease(receiverLeaseKey("discord"))) !== null, { what: "a lease" });
    expect(a.receiving && b.receiving).toBe(false);
    await releaseA();
    await releaseB();
    expect(a.receiving || b.receiving).toBe(false);
    expect(a.overlaps + b.overlaps).toBe(0);
  });

  it("releasing while standing by takes nothing and starts nothing", async () => {
    const { db, reopen } = await backend.fresh();
    const a = new Receiver();
    const b = new Receiver();
    const releaseA = lease(db, "replica-a").hold(a);
    await waitFor(() => a.receiving, { what: "replica A receiving" });
    const releaseB = lease(await reopen(), "replica-b").hold(b);
    await releaseB();
    await releaseB();
    expect(b).toMatchObject({ starts: 0, stops: 0 });
    expect((await db.getLease(receiverLeaseKey("discord")))?.holder).toBe("replica-a");
    await releaseA();
  });
});
