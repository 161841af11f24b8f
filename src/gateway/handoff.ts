/**
 * Cross-platform handoff: moving a live CLI session to a platform's home channel. The
 * request is recorded in the database; a running gateway claims it, binds the target
 * chat's key to the same session, runs a synthetic summary turn there and completes it.
 * (Being written: the signatures here are the agreed interface.)
 *
 * @module
 */
import type { SessionDB } from "../store/index.js";

/** Why a handoff did not complete. */
export type HandoffFailure = "no_home_channel" | "turn_running" | "failed" | "timeout";

/** A handoff that did not complete; `message` says what happened and what to do. */
export class HandoffError extends Error {
  readonly reason: HandoffFailure;
  constructor(reason: HandoffFailure, message: string) {
    super(message);
    this.name = "HandoffError";
    this.reason = reason;
  }
}

/** What to hand off. */
export interface HandoffRequest {
  sessionId: string;
  platform: string;
}

/** A completed handoff. */
export interface HandoffOutcome {
  id: string;
  status: "completed";
  platform: string;
  chatId: string;
  threadId: string | null;
  /** The key of the target chat, now routing to the same session. */
  sessionKey: string;
}

/** Options of {@link requestHandoff}. */
export interface RequestHandoffOptions {
  /** Configured home channels per platform (`homeChannels` in the config file). */
  homeChannels: Record<string, { chatId: string; name?: string | null; threadsSupported?: boolean }>;
  /** A turn of the session is running (refused). */
  turnRunning?: boolean;
  /** How long to wait for a gateway to complete it (default 60,000 ms). */
  timeoutMs?: number;
  /** How often to look (default 250 ms). */
  pollMs?: number;
}

/**
 * Records a handoff and waits for a running gateway to complete it. Throws
 * {@link HandoffError} when refused, failed or timed out (the CLI session is untouched).
 */
export async function requestHandoff(_db: SessionDB, _request: HandoffRequest, _options: RequestHandoffOptions): Promise<HandoffOutcome> {
  throw new HandoffError("failed", "Handoff is not available in this build.");
}
