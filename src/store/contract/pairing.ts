/**
 * The {@link PairingStore} role (who may talk to the agent on a platform: DM pairing) and its
 * records. Part of the storage contract (see `./index.ts`).
 *
 * @module
 */

/**
 * A pending pairing code: an unknown sender asked to talk to the agent and was given
 * {@link code}; an operator approves it with `threadline pairing approve <platform> <code>`
 * (or an admin from chat). Codes are short-lived secrets: never log them.
 */
export interface PairingRequest {
  /** The platform the sender wrote on (`telegram`, `slack`, …). */
  platform: string;
  /** The code, 8 characters of `ABCDEFGHJKLMNPQRSTUVWXYZ23456789`. */
  code: string;
  /** The sender's canonical user id on that platform. */
  userId: string;
  /** The sender's display name as the platform gave it (untrusted text), or `null`. */
  userName: string | null;
  /** The chat the request came from, or `null`. */
  chatId: string | null;
  /** When the code was made (epoch milliseconds). */
  createdAt: number;
  /** When it stops being accepted (epoch milliseconds): one hour after {@link createdAt}. */
  expiresAt: number;
}

/** A person approved to talk to the agent on a platform (until revoked). */
export interface PairingApproval {
  platform: string;
  /** The person's canonical user id on that platform. */
  userId: string;
  /** Their display name when they asked (untrusted text), or `null`. */
  userName: string | null;
  /** When they were approved (epoch milliseconds). */
  approvedAt: number;
  /** Who approved them: `"cli"`, or `"<platform>:<adminUserId>"` when approved from chat; `null` when not said. */
  approvedBy: string | null;
}

/** What {@link PairingStore.requestPairingCode} did. */
export type PairingCodeOutcome =
  /** A new code: send it to the sender (exactly once). */
  | { kind: "code"; code: string; expiresAt: number }
  /** The sender is approved: let the message through. */
  | { kind: "already-approved" }
  /** The sender asked within the last 10 minutes: send nothing. */
  | { kind: "rate-limited" }
  /** 3 codes are pending on this platform: no code was made. */
  | { kind: "too-many-pending" };

/** What {@link PairingStore.approvePairingCode} did. */
export type PairingApproveOutcome =
  /** The code was pending: its sender is approved, and their pending codes are gone. */
  | { kind: "approved"; approval: PairingApproval; request: PairingRequest }
  /** No such pending, unexpired code on this platform (counted as a failed approval). */
  | { kind: "unknown-code" }
  /** 5 failed approvals on this platform: every approval there is refused until `until` (epoch milliseconds). */
  | { kind: "locked-out"; until: number };

/** Options of {@link PairingStore.requestPairingCode}. */
export interface PairingCodeRequestOptions {
  /** The sender's display name (stored for the operator to see; untrusted). */
  userName?: string | null;
  /** The chat the request came from. */
  chatId?: string | null;
  /** "Now" in epoch milliseconds (default: the current time). */
  now?: number;
}

/** Options of {@link PairingStore.approvePairingCode}. */
export interface PairingApproveOptions {
  /** Who approves: `"cli"`, or `"<platform>:<adminUserId>"`. */
  by?: string | null;
  /** "Now" in epoch milliseconds (default: the current time). */
  now?: number;
}

/** Options of {@link PairingStore.listPairing}. */
export interface ListPairingOptions {
  /** Only this platform. */
  platform?: string;
  /** "Now" in epoch milliseconds (default: the current time): codes expired by then are left out. */
  now?: number;
}

/** What {@link PairingStore.listPairing} returns. */
export interface PairingList {
  /** Unexpired pending codes, oldest first. */
  pending: PairingRequest[];
  /** Approved people, by platform then approval time. */
  approved: PairingApproval[];
}

/**
 * Who may talk to the agent on a platform: DM pairing (hermes-agent's rules). An unknown
 * sender asks for a one-time code; an operator approves it; approvals stay until revoked.
 * Every decision is atomic across processes (replicas sharing a database).
 *
 * The rules: codes are 8 characters of `ABCDEFGHJKLMNPQRSTUVWXYZ23456789`, cryptographically
 * random, valid for 1 hour; at most 3 unexpired codes pending per platform; one code request
 * per person per 10 minutes; 5 failed approvals on a platform lock approvals there for 1 hour
 * (the count resets when the lockout ends or an approval succeeds).
 */
export interface PairingStore {
  /**
   * An unknown sender's request for a code. `already-approved` when they are approved;
   * `rate-limited` when they asked within the last 10 minutes (whether or not that code is
   * still pending); `too-many-pending` when 3 unexpired codes wait on the platform (nothing
   * is recorded then); else a new code, which replaces nothing (an earlier code of theirs stays
   * valid until it expires or one of them is approved).
   */
  requestPairingCode(platform: string, userId: string, options?: PairingCodeRequestOptions): Promise<PairingCodeOutcome>;
  /**
   * Approves a pending code (matched case-insensitively, ignoring spaces and dashes). On
   * success the sender is approved and every pending code of theirs on the platform is removed.
   * An unknown, expired or malformed code is a failed approval; the 5th failure locks the
   * platform's approvals for an hour (that call still answers `unknown-code`; later ones
   * `locked-out`, even with a right code). Of concurrent approvals of one code, exactly one wins.
   */
  approvePairingCode(platform: string, code: string, options?: PairingApproveOptions): Promise<PairingApproveOutcome>;
  /** Whether the person is approved on the platform. */
  isPairingApproved(platform: string, userId: string): Promise<boolean>;
  /** Pending (unexpired) codes and approved people, of one platform or all. */
  listPairing(options?: ListPairingOptions): Promise<PairingList>;
  /** Removes an approval; `true` when there was one. Their next message is treated as a stranger's. */
  revokePairing(platform: string, userId: string): Promise<boolean>;
}
