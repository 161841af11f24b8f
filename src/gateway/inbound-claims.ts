/**
 * The gateway's side of inbound claims (the store's `InboundClaimStore`): which claim an
 * inbound message makes, and how admission tells that another replica took it first. The
 * per-process de-duplication of the runner stays the fast path; the claim is what makes a
 * message delivered to several replicas (every Discord session of one token, a webhook posted
 * to two replicas) stored and answered once.
 *
 * @module
 */
import { InboundClaimedError, type InboundClaim, type InboundClaimStore } from "../store/index.js";
import type { InboundMessage } from "./adapter.js";

/**
 * The claim an inbound message makes: its platform, its chat (the chat id; for a chat without
 * one, the sender's id) and the platform's message id. `null` for a message without an id, and
 * for an idempotent one (the api-server's `Idempotency-Key`: a repeat is answered again from the
 * transcript, not dropped).
 */
export function inboundClaimOf(message: InboundMessage): InboundClaim | null {
  if (message.idempotent === true || !message.messageId) return null;
  const s = message.source;
  const chat = s.chatId || s.userIdAlt || s.userId;
  if (!chat) return null;
  return { platform: s.platform, chat, messageId: message.messageId };
}

/** Whether a store write failed because the message it claims was taken already (by another replica). */
export function isClaimedElsewhere(error: unknown): boolean {
  return error instanceof InboundClaimedError;
}

/**
 * Claims a slash command's message on its own before it runs (a command stores nothing to
 * claim it with). `true` when it may run: it has no claim to make, or this call took it.
 */
export async function claimCommand(store: InboundClaimStore, message: InboundMessage): Promise<boolean> {
  const claim = inboundClaimOf(message);
  return claim === null || store.claimInbound(claim);
}
