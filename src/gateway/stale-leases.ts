/**
 * Leases a dead earlier process of this same replica left behind. A lease holder names one
 * process: `<replicaId>@<host>#<pid>`. When a replica is killed and restarted (a crash, then
 * the service manager's restart), its session and receiver leases would otherwise block
 * their keys until they expire (`gateway.leaseTtlSeconds`), and the chats that were active
 * at the crash would wait that long for an answer. A holder with this replica's id, on this
 * host, whose process is gone, is stale: its lease may be released at once, and the next
 * acquisition bumps the token, so nothing the dead process had in flight can still write.
 *
 * A holder of another replica, of another host, or of a process still alive (or whose pid
 * was reused) is never stale: that lease runs out by itself, as before.
 *
 * @module
 */
import type { LeaseStore } from "../store/index.js";

/** Who holds a lease: one process of one replica on one host. */
export interface LeaseHolderIdentity {
  /** The replica's `gateway.replicaId` (letters, digits, `_`, `.`, `-`). */
  replicaId: string;
  /** The host name, with characters other than letters, digits, `_`, `.` and `-` replaced by `-`. */
  host: string;
  /** The process id. */
  pid: number;
}

/** Whether a lease holder is stale: see {@link staleHolderTest}. */
export type StaleHolderTest = (holder: string) => boolean;

const HOLDER = /^([\w.-]+)@([\w.-]+)#(\d+)$/u;

/** The host name as it appears in a holder name. */
export function holderHost(hostname: string): string {
  return hostname.replace(/[^\w.-]/gu, "-").slice(0, 64) || "host";
}

/**
 * The lease holder name of a process (`<replicaId>@<host>#<pid>`).
 *
 * @example
 * leaseHolderName({ replicaId: "gw-a", host: "node-1", pid: 4242 }); // "gw-a@node-1#4242"
 */
export function leaseHolderName(identity: LeaseHolderIdentity): string {
  return `${identity.replicaId}@${holderHost(identity.host)}#${identity.pid}`;
}

/** The identity in a holder name, or `null` for a name of another shape (another holder kind, an older version). */
export function parseLeaseHolder(holder: string): LeaseHolderIdentity | null {
  const match = HOLDER.exec(holder);
  if (match === null) return null;
  const pid = Number(match[3]);
  return Number.isSafeInteger(pid) ? { replicaId: match[1]!, host: match[2]!, pid } : null;
}

/**
 * Whether a process of this machine is alive: `kill(pid, 0)` succeeds, or is refused because it
 * belongs to another user (`EPERM`). Only `ESRCH` (no such process) counts as gone.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * The stale-holder test of a process: a holder is stale when it names the same replica on the
 * same host with another pid that `alive` says is gone.
 *
 * @example
 * const stale = staleHolderTest({ replicaId: "gw-a", host: hostname(), pid: process.pid });
 * stale("gw-a@node-1#4242"); // true once process 4242 of this host is gone
 */
export function staleHolderTest(self: LeaseHolderIdentity, alive: (pid: number) => boolean = processAlive): StaleHolderTest {
  const host = holderHost(self.host);
  return (holder) => {
    const other = parseLeaseHolder(holder);
    return other !== null && other.replicaId === self.replicaId && other.host === host && other.pid !== self.pid && !alive(other.pid);
  };
}

/**
 * Releases the lease on `key` when its holder is stale, so that the caller's next acquisition
 * is granted (with the token bumped). Returns whether it released one. A holder that renewed
 * or released meanwhile keeps its lease (the release names the token read).
 */
export async function releaseStaleLease(store: LeaseStore, key: string, stale: StaleHolderTest): Promise<boolean> {
  const lease = await store.getLease(key);
  if (lease === null || !stale(lease.holder)) return false;
  return store.releaseLease(key, lease.holder, lease.token);
}
