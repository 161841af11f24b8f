/**
 * Inbound claims (`inbound_claims`), once for every backend: validation, the claim step a
 * queued event or a routing write runs inside its transaction, the standalone claim and the
 * prune. A claim is an `INSERT … ON CONFLICT DO NOTHING` on the primary key (platform, chat,
 * message id): of two transactions inserting one claim, the second waits for the first and
 * inserts nothing once it commits (or inserts, when the first rolled back), so exactly one
 * process ever holds a message.
 *
 * @module
 */
import type { EnqueueResult, InboundClaim } from "../contract.js";
import { InboundClaimedError, InvalidInputError, ThreadlineError } from "../errors.js";
import { checkId, checkTime } from "../input-validation.js";
import { run, value, type Steps } from "./steps.js";

/** The claims of a write, checked, in one order (so two writes claiming the same ones never wait on each other crosswise); `[]` when none. */
export function checkClaims(claims: unknown, field = "claims"): InboundClaim[] {
  if (claims === undefined || claims === null) return [];
  if (!Array.isArray(claims)) throw new InvalidInputError(`${field} must be an array of { platform, chat, messageId }.`, { field });
  return claims
    .map((claim: unknown, i) => checkClaim(claim, `${field}[${i}]`))
    .sort((a, b) => compare(a.platform, b.platform) || compare(a.chat, b.chat) || compare(a.messageId, b.messageId));
}

/** Checks one claim. */
export function checkClaim(claim: unknown, field = "claim"): InboundClaim {
  if (claim === null || typeof claim !== "object") throw new InvalidInputError(`${field} must be { platform, chat, messageId }.`, { field });
  const c = claim as Record<string, unknown>;
  return { platform: checkId(c.platform, `${field}.platform`), chat: checkId(c.chat, `${field}.chat`), messageId: checkId(c.messageId, `${field}.messageId`) };
}

/** Checks the `before` of a prune. */
export function checkPruneBefore(options: unknown): number {
  if (options === null || typeof options !== "object")
    throw new InvalidInputError("pruneInboundClaims needs { before } (epoch seconds).", { field: "options" });
  const before = (options as { before?: unknown }).before;
  if (before === undefined) throw new InvalidInputError("before is required (epoch seconds).", { field: "before" });
  return checkTime(before, "before", 0);
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Takes one claim (inside a write); `true` when this write took it, `false` when it was taken already. */
export function* takeClaim(claim: InboundClaim, at: number): Steps<boolean> {
  const inserted = yield* run("INSERT INTO inbound_claims (platform, chat, message_id, claimed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", [
    claim.platform,
    claim.chat,
    claim.messageId,
    at,
  ]);
  return inserted > 0;
}

/**
 * Takes every claim of a write (inside it, before what it stores is kept): throws
 * {@link InboundClaimedError} at the first one taken already, which rolls the whole write back.
 */
export function* takeClaims(claims: readonly InboundClaim[], at: number): Steps<void> {
  for (const claim of claims) if (!(yield* takeClaim(claim, at))) throw new InboundClaimedError(claim);
}

/** Removes the claims made before `before`; returns how many. */
export function* pruneClaims(before: number): Steps<number> {
  return yield* run("DELETE FROM inbound_claims WHERE claimed_at < ?", [before]);
}

/**
 * A queued event with claims (inside the key's queue write): the claims are taken first; a
 * claim taken already makes it a `duplicate`, and an event that is not queued (full, or a
 * duplicate of the queue) takes none. Both are rolled back by throwing {@link NotQueued},
 * which the caller turns back into its result.
 */
export function* enqueueClaimed(claims: readonly InboundClaim[], at: number, key: string, enqueue: () => Steps<EnqueueResult>): Steps<EnqueueResult> {
  if (claims.length === 0) return yield* enqueue();
  for (const claim of claims) {
    if (!(yield* takeClaim(claim, at))) {
      const waiting = yield* value<number | string | bigint>("SELECT COUNT(*) FROM inbound_queue WHERE key = ? AND claimed_at IS NULL", [key]);
      throw new NotQueued({ status: "duplicate", depth: Number(waiting ?? 0) });
    }
  }
  const result = yield* enqueue();
  if (result.status === "duplicate" || result.status === "full") throw new NotQueued(result);
  return result;
}

/** Thrown inside a queue write to roll its claims back (a `ThreadlineError`, so backends pass it through); carries what the call resolves with. */
export class NotQueued extends ThreadlineError {
  readonly result: EnqueueResult;

  constructor(result: EnqueueResult) {
    super("TL_ERR_CONFLICT", "The event was not queued; nothing was written.");
    this.result = result;
  }
}

/** Turns a {@link NotQueued} rejection back into the enqueue's result. */
export function notQueuedResult(error: unknown): EnqueueResult {
  if (error instanceof NotQueued) return error.result;
  throw error;
}
