/**
 * Cross-platform handoff: moving a live CLI session to a platform's home channel. The
 * request is recorded in the database; a running gateway claims it, binds the target
 * chat's key to the same session, runs a synthetic summary turn there and completes it
 * (see {@link HandoffWorker}). The CLI side is {@link requestHandoff}.
 *
 * @module
 */
import { ConflictError, NotFoundError, ThreadlineError, type Handoff, type HandoffStore, type MetaStore } from "../store/index.js";
import { effectiveHomeChannels } from "./home-channels.js";

/** Why a handoff did not complete. */
export type HandoffFailure = "no_home_channel" | "turn_running" | "failed" | "timeout";

/**
 * A handoff that did not complete (code `TL_ERR_HANDOFF`); `message` says what happened and
 * what to do, `reason` which of the {@link HandoffFailure} cases it was.
 */
export class HandoffError extends ThreadlineError {
  readonly reason: HandoffFailure;
  /** The handoff record, when one was created (`failed`, `timeout`); `null` for refusals. */
  readonly handoffId: string | null;
  constructor(reason: HandoffFailure, message: string, handoffId: string | null = null, options?: { cause?: unknown }) {
    super("TL_ERR_HANDOFF", message, options);
    this.reason = reason;
    this.handoffId = handoffId;
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

/**
 * A configured home channel of a platform (`homeChannels.<platform>` in the config file, or
 * set with `/sethome` in the chat). A handoff continues in the chat under the key the chat's
 * next real message carries (see {@link HandoffWorker}): `chatType` and `userId` say which.
 */
export interface HomeChannel {
  chatId: string;
  name?: string | null;
  /** The platform can open threads: a handoff gets its own thread in the home channel. */
  threadsSupported?: boolean;
  /**
   * The kind of chat: `dm`, `group` or `channel`. Absent: `dm`, the key of a direct chat with
   * the bot (as hermes keys it: the typical home is the owner's own DM), except as the parent
   * of a new thread (`threadsSupported`), which reads as `channel`. `/sethome` records the
   * chat's kind.
   */
  chatType?: "dm" | "group" | "channel" | null;
  /**
   * Whose session a handoff continues in a group or channel with a session per person
   * (`sessions.groupSessionsPerUser`, the default; `threadSessionsPerUser` for threads):
   * that person's next message there continues it. `/sethome` records its sender.
   */
  userId?: string | null;
}

/** Home channels per platform. */
export type HomeChannels = Record<string, HomeChannel>;

/** Options of {@link requestHandoff}. */
export interface RequestHandoffOptions {
  /** Configured home channels per platform (`homeChannels` in the config file). */
  homeChannels: HomeChannels;
  /** A turn of the session is running (refused). */
  turnRunning?: boolean;
  /** How long to wait for a gateway to complete it (default 60,000 ms). */
  timeoutMs?: number;
  /** How often to look (default 250 ms). */
  pollMs?: number;
  /** The config file named in the "no home channel" message (default `~/.threadline/config.yaml`). */
  configPath?: string;
}

/** Default of {@link RequestHandoffOptions.timeoutMs}. */
export const DEFAULT_HANDOFF_TIMEOUT_MS = 60_000;
/** Default of {@link RequestHandoffOptions.pollMs}. */
export const DEFAULT_HANDOFF_POLL_MS = 250;
/** The reason recorded on a handoff the CLI gave up waiting for. */
export const HANDOFF_TIMEOUT_REASON = "timeout";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function outcomeOf(record: Handoff): HandoffOutcome {
  return {
    id: record.id,
    status: "completed",
    platform: record.platform,
    chatId: record.chatId ?? "",
    threadId: record.threadId,
    sessionKey: record.sessionKey ?? "",
  };
}

function failedError(record: Handoff): HandoffError {
  const why = record.reason ?? "no reason was recorded";
  return new HandoffError(
    "failed",
    `The gateway could not hand this session off to ${record.platform}: ${why}. This session is unchanged; you can keep chatting here.`,
    record.id,
  );
}

/**
 * Records a handoff and waits for a running gateway to complete it. Throws
 * {@link HandoffError} when refused, failed or timed out (the CLI session is untouched).
 *
 * - `no_home_channel`: neither `options.homeChannels` nor the database (`/sethome`, see
 *   {@link effectiveHomeChannels}) has a chat for the platform; the message names the config
 *   key, the command that sets it and `/sethome`. Nothing is recorded.
 * - `turn_running`: `options.turnRunning`; nothing is recorded.
 * - `failed`: the gateway recorded a failure (the message carries its reason), or the
 *   session does not exist.
 * - `timeout`: no gateway completed it within `timeoutMs`; the record is marked failed with
 *   reason `timeout`, so a gateway that starts later does not run it. If a gateway completes
 *   it at that very moment, the completion wins and the outcome is returned.
 */
export async function requestHandoff(db: HandoffStore & MetaStore, request: HandoffRequest, options: RequestHandoffOptions): Promise<HandoffOutcome> {
  const platform = request.platform;
  const homes = await effectiveHomeChannels(db, options.homeChannels ?? {});
  const home = Object.hasOwn(homes, platform) ? homes[platform] : undefined;
  if (home === undefined || typeof home.chatId !== "string" || home.chatId.trim() === "") {
    const file = options.configPath ?? "~/.threadline/config.yaml";
    throw new HandoffError(
      "no_home_channel",
      `No home channel is configured for ${platform}. Set homeChannels.${platform}.chatId in ${file} ` +
        `(threadline config set homeChannels.${platform}.chatId <id>), or send /sethome in that ${platform} chat, then hand off again.`,
    );
  }
  if (options.turnRunning === true) {
    throw new HandoffError("turn_running", `A turn is still running in this session; wait for the reply (or interrupt it) and then hand off to ${platform}.`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_HANDOFF_TIMEOUT_MS;
  const pollMs = Math.max(1, options.pollMs ?? DEFAULT_HANDOFF_POLL_MS);

  let record: Handoff;
  try {
    record = await db.createHandoff({ sessionId: request.sessionId, platform });
  } catch (error) {
    if (error instanceof NotFoundError) throw new HandoffError("failed", error.message, null, { cause: error });
    throw error;
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (record.status === "completed") return outcomeOf(record);
    if (record.status === "failed") throw failedError(record);
    const left = deadline - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(pollMs, left));
    const current = await db.getHandoff(record.id);
    if (current === null) {
      throw new HandoffError("failed", `The handoff to ${platform} disappeared (was the session deleted?).`, record.id);
    }
    record = current;
  }

  // Give up: mark it failed so a gateway that comes later does not run it.
  const wasRunning = record.status === "running";
  try {
    await db.finishHandoff(record.id, { status: "failed", reason: HANDOFF_TIMEOUT_REASON });
  } catch (error) {
    if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    // It ended meanwhile: the gateway's outcome wins.
    const final = await db.getHandoff(record.id);
    if (final?.status === "completed") return outcomeOf(final);
    if (final?.status === "failed") throw failedError(final);
  }
  const message = wasRunning
    ? `The gateway (${record.claimedBy ?? "unknown"}) took the handoff to ${platform} but did not finish it within ${seconds(timeoutMs)}; ` +
      "it was cancelled. This session is unchanged; try again, or check the gateway's log."
    : `No running gateway took the handoff to ${platform} within ${seconds(timeoutMs)}. Start one with \`threadline serve\` ` +
      `(with the ${platform} adapter enabled and homeChannels.${platform} set) and try again. This session is unchanged.`;
  throw new HandoffError("timeout", message, record.id);
}
