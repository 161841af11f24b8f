/**
 * Leases a dead earlier process of the same replica left behind (src/gateway/stale-leases.ts):
 * holder names, which holders are stale (real processes: one that has exited, one alive), and
 * the receiver lease taking a stale holder's lease over without waiting for it to run out.
 * What a takeover may never do is in test/security/lease-takeover.test.ts.
 */
import { deadPid } from "../support/dead-pid.js";
import { describe, expect, it } from "vitest";
import type { ReceiverHandlers } from "../../src/gateway/index.js";
import { leaseHolderName, staleHolderTest } from "../../src/gateway/index.js";
import { receiverLeaseKey, StoreReceiverLease } from "../../src/gateway/receiver-lease.js";
import { parseLeaseHolder, processAlive } from "../../src/gateway/stale-leases.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend } from "./backends.js";

const SELF = { replicaId: "gw-a", host: "node-1", pid: process.pid };
const HOUR = 3600;

describe("lease holder names", () => {
  it("name one process of one replica on one host, and parse back; other shapes are not parsed", () => {
    expect(leaseHolderName({ replicaId: "gw-a", host: "node 1.example", pid: 42 })).toBe("gw-a@node-1.example#42");
    expect(parseLeaseHolder("gw-a@node-1.example#42")).toEqual({ replicaId: "gw-a", host: "node-1.example", pid: 42 });
    for (const other of ["gw-a-42", "gw-a:compress", "gw-a@node-1#", "gw-a@node-1#4x", "@node-1#42", "gw-a@#42", "gateway-node-1-42"])
      expect(parseLeaseHolder(other)).toBeNull();
  });

  it("a holder is stale only when it is this replica on this host, another pid, and that process is gone", async () => {
    const dead = await deadPid();
    expect(processAlive(dead)).toBe(false);
    expect(processAlive(process.ppid)).toBe(true);
    const stale = staleHolderTest(SELF);
    expect(stale(`gw-a@node-1#${dead}`)).toBe(true);
    // Alive, this very process, another replica, another host, another holder kind: not stale.
    expect(stale(`gw-a@node-1#${process.ppid}`)).toBe(false);
    expect(stale(`gw-a@node-1#${process.pid}`)).toBe(false);
    expect(stale(`gw-b@node-1#${dead}`)).toBe(false);
    expect(stale(`gw-a@node-2#${dead}`)).toBe(false);
    expect(stale(`gw-a-${dead}`)).toBe(false);
    expect(stale("gw-a:compress")).toBe(false);
  });
});

forEachBackend((backend) => {
  it("a receiver lease left by a dead process of this replica is taken over without waiting for it to run out", async () => {
    const { db } = await backend.fresh();
    const deadHolder = leaseHolderName({ ...SELF, pid: await deadPid() });
    await db.acquireLease(receiverLeaseKey("discord"), deadHolder, { ttlSeconds: HOUR });
    let receiving = false;
    const handlers: ReceiverHandlers = {
      start: async () => {
        receiving = true;
      },
      stop: async () => {
        receiving = false;
      },
    };
    const release = new StoreReceiverLease(db, "discord", { holder: leaseHolderName(SELF), ttlSeconds: HOUR, stale: staleHolderTest(SELF) }).hold(handlers);
    try {
      // With an hour's lease, receiving at all means the takeover did not wait for the expiry.
      await waitFor(() => receiving, { what: "this replica receiving" });
      expect(await db.getLease(receiverLeaseKey("discord"))).toMatchObject({ holder: leaseHolderName(SELF) });
    } finally {
      await release();
    }
    expect(receiving).toBe(false);
  });
});
