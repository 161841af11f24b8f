/**
 * Inbound claims: which platform messages the gateway has already taken, kept in the database
 * so that several gateway replicas sharing it store and answer a message delivered to each of
 * them once. A claim is the platform's message id within its platform and chat, written in the
 * same transaction as what the message became (a queued event, or the user message a turn
 * stores), or on its own before a slash command runs.
 *
 * The {@link InboundClaimStore} role and its records; `gateway-state.ts` joins it to {@link GatewayState}.
 *
 * @module
 */

/**
 * How long claims are kept by default before {@link InboundClaimStore.pruneInboundClaims}
 * removes them: 8 days. A claim only has to outlive the platform's redeliveries of its
 * message; the longest documented one is WhatsApp's (webhooks retried for up to 7 days),
 * Telegram keeps unconfirmed updates for 24 hours and Slack retries an event within the hour.
 * One day more covers clocks that disagree and a gateway that was down meanwhile.
 */
export const INBOUND_CLAIM_RETENTION_SECONDS = 8 * 86_400;

/**
 * A platform message taken by the gateway. The three parts together are the identity, so a
 * message id sent in one chat (or forged there) never claims a message of another chat or
 * platform.
 */
export interface InboundClaim {
  /** The platform (`telegram`, `discord`, …). */
  platform: string;
  /** The chat the message came from (its chat id; for a chat without one, the sender's id). */
  chat: string;
  /** The platform's id of the message. */
  messageId: string;
}

/**
 * A write that also claims inbound messages ({@link RouteWrite}, {@link NewQueuedEvent}):
 * the claims are taken in the write's transaction, so a message is claimed exactly when what
 * it became is stored.
 */
export interface ClaimedWrite {
  /**
   * Claim these messages in the same transaction. When one of them is claimed already, nothing
   * at all is written: a queued event comes back as `duplicate`, a routing write rejects with
   * {@link InboundClaimedError} (from `errors.ts`). A write that writes nothing for another
   * reason (a version conflict, a full queue) claims nothing either.
   */
  claims?: InboundClaim[];
}

/** Options of {@link InboundClaimStore.claimInbound}. */
export interface ClaimInboundOptions {
  /** When it was claimed, in epoch seconds (default: now); pruning compares it. */
  at?: number;
}

/** Options of {@link InboundClaimStore.pruneInboundClaims}. */
export interface PruneInboundClaimsOptions {
  /** Remove the claims made before this time (epoch seconds). */
  before: number;
}

/** Claims on inbound platform messages, shared by every process on the database. */
export interface InboundClaimStore {
  /**
   * Claims a message on its own (a slash command, which stores nothing to claim it with).
   * Resolves `true` when this call took it, `false` when it was claimed already; of several
   * concurrent callers in any processes, exactly one gets `true`.
   */
  claimInbound(claim: InboundClaim, options?: ClaimInboundOptions): Promise<boolean>;
  /**
   * Removes the claims made before `options.before`; resolves with how many. A message
   * delivered again after its claim is gone is taken as new, so keep claims at least as long
   * as a platform redelivers ({@link INBOUND_CLAIM_RETENTION_SECONDS}).
   */
  pruneInboundClaims(options: PruneInboundClaimsOptions): Promise<number>;
}
