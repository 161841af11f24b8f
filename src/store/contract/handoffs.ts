/**
 * The {@link HandoffStore} role (cross-platform handoffs) and its records. Part of the storage
 * contract (see `./index.ts`).
 *
 * @module
 */

/** The states of a {@link Handoff}: `pending` → `running` → `completed` | `failed` (a pending one may also fail). */
export const HANDOFF_STATUSES = ["pending", "running", "completed", "failed"] as const;
/** A handoff state. */
export type HandoffStatus = (typeof HANDOFF_STATUSES)[number];

/**
 * A request to move a live session to a platform's home channel (`/handoff <platform>`),
 * recorded so that a gateway process can claim and carry it out.
 */
export interface Handoff {
  /** Store-assigned id. */
  id: string;
  /** The session being handed off. */
  sessionId: string;
  /** The target platform (`telegram`, `webhook`, …). */
  platform: string;
  status: HandoffStatus;
  /** Why it failed (`timeout`, or what the gateway reported); `null` otherwise. */
  reason: string | null;
  createdAt: number;
  /** Last status change. */
  updatedAt: number;
  /** The holder (a gateway) that claimed it; `null` while pending (and when it failed unclaimed). */
  claimedBy: string | null;
  /** The chat the session now continues in (set on completion). */
  chatId: string | null;
  /** The thread inside that chat, when one was created. */
  threadId: string | null;
  /** The session key of that chat, now routing to `sessionId`. */
  sessionKey: string | null;
}

/** What {@link HandoffStore.createHandoff} needs. */
export interface NewHandoff {
  /** The session to hand off (must exist). */
  sessionId: string;
  /** The target platform. */
  platform: string;
  /** Creation time (default: now). */
  now?: number;
}

/** Options of {@link HandoffStore.claimHandoff}. */
export interface ClaimHandoffOptions {
  /** Only handoffs to these platforms (an empty list claims nothing). */
  platforms: string[];
  /** Who claims (recorded as `claimedBy`). */
  holder: string;
  /** Only handoffs created at or before this time (default: any age). */
  createdBefore?: number;
  /** The claim time, recorded as `updatedAt` (default: now). */
  now?: number;
}

/** How a handoff ended, for {@link HandoffStore.finishHandoff}. */
export interface HandoffResult {
  status: "completed" | "failed";
  /** Why it failed (kept for `failed`; ignored for `completed`). */
  reason?: string | null;
  /** The target chat (required for `completed`). */
  chatId?: string | null;
  /** The thread in the target chat, if any. */
  threadId?: string | null;
  /** The target chat's session key (required for `completed`). */
  sessionKey?: string | null;
  /** When it ended (default: now). */
  now?: number;
}

/** Cross-platform handoffs: requests to move a session to another platform, claimed by a gateway. */
export interface HandoffStore {
  /**
   * Records a `pending` handoff of a session to a platform. Throws {@link NotFoundError}
   * when the session does not exist. A handoff row goes when its session is deleted.
   */
  createHandoff(input: NewHandoff): Promise<Handoff>;
  /** The handoff, or `null`. */
  getHandoff(id: string): Promise<Handoff | null>;
  /**
   * Atomically moves the oldest `pending` handoff (creation time, then creation order) to one
   * of `platforms` to `running`, claimed by `holder`, and returns it; `null` when there is
   * none. Race-safe across processes: of several concurrent claimers, exactly one gets
   * each handoff.
   */
  claimHandoff(options: ClaimHandoffOptions): Promise<Handoff | null>;
  /**
   * Ends a handoff: `completed` (from `running` only; needs `chatId` and `sessionKey`) or
   * `failed` (from `pending` or `running`). Returns the stored handoff. Throws
   * {@link NotFoundError} for an unknown id and {@link ConflictError} (nothing changed) when
   * it is not in a state it can end from, e.g. it has already ended.
   */
  finishHandoff(id: string, result: HandoffResult): Promise<Handoff>;
}
