/**
 * Sending to Matrix ({@link MatrixSender}): `m.room.message` events built by
 * {@link matrixMessageContents} (Markdown with an HTML copy, split at 16,000 bytes, threads
 * and replies as relations), threads for handoffs and edits (`m.replace`), sent with the
 * SDK's HTTP client (`PUT …/send/m.room.message/{txnId}`, not its scheduler, which would give
 * up on every queued message of every room when one send fails): `M_LIMIT_EXCEEDED` is
 * waited out (`retry_after_ms`, at most 60 s a time), 5xx and connection errors retried, 4
 * retries with the same transaction id; a refused send (403 `M_FORBIDDEN`, …) is thrown as a
 * clear error. Nothing is sent to an end-to-end encrypted room. Sending needs no sync loop.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import type { MatrixClient, MatrixError } from "matrix-js-sdk";
import type { GatewayLogger, OutboundMessage, SessionSource } from "../../gateway/index.js";
import { InvalidInputError, PlatformError, ThreadlineError } from "../../store/index.js";
import { redactError, redactText, retry } from "../chat/index.js";
import type { MatrixBotPosts } from "./matrix-bot-posts.js";
import { matrixEditContent, matrixMessageContents } from "./matrix-format.js";
import type { MatrixRooms } from "./matrix-rooms.js";
import { MATRIX_PLATFORM } from "./matrix-source.js";

type MatrixSdk = typeof import("matrix-js-sdk");

/** The longest wait for a rate limit before a send gives up, in ms. */
const MAX_RETRY_WAIT_MS = 60_000;
/**
 * How long a login or a send may take, in ms. (Not the SDK's `localTimeoutMs`: its timer is
 * never cleared and would keep a failed start's process alive.)
 */
const REQUEST_TIMEOUT_MS = 60_000;

/** What {@link MatrixSender} works with. */
export interface MatrixSenderOptions {
  client: MatrixClient;
  sdk: MatrixSdk;
  log: GatewayLogger;
  /** The bot's access token (removed from every error). */
  accessToken: string;
  rooms: MatrixRooms;
  botPosts: MatrixBotPosts;
  /** The bot's user id (`null` before the login, unless configured). */
  userId(): string | null;
}

/** Sends messages, thread roots and edits to Matrix rooms. */
export class MatrixSender {
  readonly #client: MatrixClient;
  readonly #sdk: MatrixSdk;
  readonly #log: GatewayLogger;
  readonly #accessToken: string;
  readonly #rooms: MatrixRooms;
  readonly #botPosts: MatrixBotPosts;
  readonly #userId: () => string | null;

  constructor(options: MatrixSenderOptions) {
    this.#client = options.client;
    this.#sdk = options.sdk;
    this.#log = options.log;
    this.#accessToken = options.accessToken;
    this.#rooms = options.rooms;
    this.#botPosts = options.botPosts;
    this.#userId = options.userId;
  }

  /** Sends `message` to the room of `source`; returns the first event id. */
  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const roomId = source.chatId;
    if (!roomId)
      throw new InvalidInputError("matrix: the session source has no chatId (room id) to send to; pass the source of a Matrix room.", {
        field: "source.chatId",
      });
    try {
      this.#refuseEncrypted(roomId);
      const replyTo = message.inReplyTo.find((id) => id.startsWith("$")) ?? null;
      const replyToUser = replyTo !== null && source.userId?.startsWith("@") && source.userId !== this.#userId() ? source.userId : null;
      const contents = matrixMessageContents(message.text, { kind: message.kind, replyTo, threadId: source.threadId ?? null, replyToUser });
      let first: string | null = null;
      for (const content of contents) {
        const eventId = await this.#sendEvent(roomId, content);
        this.#botPosts.addEvent(eventId);
        first ??= eventId;
      }
      if (source.threadId) await this.#botPosts.rememberThread(source.threadId);
      return { messageId: first };
    } catch (error) {
      throw this.#sendError(error, roomId);
    }
  }

  /**
   * Starts a thread in the room of `source` for a handoff: a root notice (`🧵 <title>`) whose
   * event id is the thread's `threadId`.
   */
  async createThread(source: SessionSource, title: string): Promise<SessionSource> {
    const roomId = source.chatId;
    if (!roomId)
      throw new InvalidInputError(
        "matrix: the home channel has no chatId (room id); set homeChannels.matrix.chatId to a room id (!…:server), or send /sethome in that room.",
        { field: "source.chatId" },
      );
    try {
      this.#refuseEncrypted(roomId);
      const [content] = matrixMessageContents(`🧵 ${title.trim() || "Threadline"}`, { kind: "notice", replyTo: null, threadId: null });
      const root = await this.#sendEvent(roomId, content!);
      this.#botPosts.addEvent(root);
      await this.#botPosts.rememberThread(root);
      const dm = source.chatType === "dm";
      return {
        platform: MATRIX_PLATFORM,
        chatType: dm ? "dm" : "thread",
        chatId: roomId,
        chatName: source.chatName ?? null,
        threadId: root,
        ...(dm ? {} : { parentChatId: roomId }),
      };
    } catch (error) {
      throw this.#sendError(error, roomId);
    }
  }

  /** Edits a message the bot sent (`m.replace`). */
  async editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    const roomId = source.chatId;
    if (!roomId)
      throw new InvalidInputError("matrix: the session source has no chatId (room id) of the message to edit; pass the source the message was sent to.", {
        field: "source.chatId",
      });
    try {
      await this.#sendEvent(roomId, matrixEditContent(messageId, text));
    } catch (error) {
      throw this.#sendError(error, roomId);
    }
  }

  #refuseEncrypted(roomId: string): void {
    if (this.#rooms.isEncrypted(roomId)) {
      throw new PlatformError(
        MATRIX_PLATFORM,
        `matrix: room ${roomId} is end-to-end encrypted; Threadline does not send there (encrypted rooms are not supported). Use an unencrypted room for the bot.`,
      );
    }
  }

  /**
   * `PUT /rooms/{roomId}/send/m.room.message/{txnId}` with one transaction id for all its
   * attempts (the homeserver answers a repeat with the first event, so a retried send after a
   * lost response posts nothing twice). Rate limits are waited out (`retry_after_ms`, at most
   * 60 s a time), 5xx answers and connection errors retried after 1, 2, 4 and 8 s; anything
   * else, or a fifth failure, is thrown.
   */
  async #sendEvent(roomId: string, content: object): Promise<string> {
    const txnId = `tl.${randomUUID()}`;
    const path = `/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${encodeURIComponent(txnId)}`;
    const sent = await retry(
      () => this.#client.http.authedRequest<{ event_id: string }>(this.#sdk.Method.Put, path, undefined, content as Record<string, unknown>, timeoutOpts()),
      {
        attempts: 5,
        backoff: { initialMs: 1_000, maxMs: 8_000, maxRetryAfterMs: MAX_RETRY_WAIT_MS },
        isRetryable: (error) => {
          if (isRateLimit(error)) return (retryAfterMs(error) ?? 0) <= MAX_RETRY_WAIT_MS;
          const status = (error as MatrixError).httpStatus;
          return (status !== undefined && status >= 500) || error instanceof this.#sdk.ConnectionError || isTimeout(error);
        },
        retryAfter: (error) => {
          const ms = isRateLimit(error) ? retryAfterMs(error) : null;
          return ms === null ? null : ms / 1000;
        },
        onRetry: ({ attempt, delayMs, error }) => {
          const e = error as MatrixError;
          this.#log.warn(
            { platform: MATRIX_PLATFORM, roomId, status: e.httpStatus ?? null, errcode: e.errcode ?? null, retryInMs: delayMs, attempt },
            isRateLimit(error)
              ? `matrix: rate limited by the homeserver; sending again in ${delayMs} ms`
              : `matrix: sending failed (${this.#safe(error).message}); sending again in ${delayMs} ms`,
          );
        },
      },
    );
    return sent.event_id;
  }

  #sendError(error: unknown, roomId: string): ThreadlineError {
    if (error instanceof ThreadlineError) return error;
    const safe = this.#safe(error);
    if (/^matrix: /u.test(safe.message)) return new PlatformError(MATRIX_PLATFORM, safe.message, { cause: safe });
    const status = (error as MatrixError).httpStatus;
    const errcode = (error as MatrixError).errcode;
    const hint =
      errcode === "M_FORBIDDEN"
        ? " — the bot is not in the room (it was kicked, or left) or may not post there"
        : errcode === "M_LIMIT_EXCEEDED"
          ? " — still rate limited after waiting"
          : /configured to use encryption/u.test(safe.message)
            ? " — the room is end-to-end encrypted, which Threadline does not support"
            : "";
    return new PlatformError(
      MATRIX_PLATFORM,
      status !== undefined
        ? `matrix: the homeserver refused the message to room ${roomId} (${status}${errcode ? ` ${errcode}` : ""}: ${homeserverReason(error, this.#accessToken)})${hint}`
        : `matrix: sending to room ${roomId} failed: ${safe.message}${hint}`,
      // The homeserver's answer is quoted already; other failures keep what caused them.
      { platformCode: errcode ?? null, ...(status === undefined ? { cause: safe } : {}) },
    );
  }

  #safe(error: unknown): Error {
    return redactError(error, [this.#accessToken]);
  }
}

/** A rate limit (`M_LIMIT_EXCEEDED` or 429). */
function isRateLimit(error: unknown): boolean {
  const e = error as MatrixError;
  return e.errcode === "M_LIMIT_EXCEEDED" || e.httpStatus === 429;
}

/** The homeserver's `retry_after_ms` of a rate limit (`null` when it gave none). */
function retryAfterMs(error: unknown): number | null {
  try {
    const after = (error as MatrixError).getRetryAfterMs?.() ?? null;
    return after === null ? null : Math.max(0, after);
  } catch {
    return null;
  }
}

/** The homeserver's own words (`error` of the error body), else the error's message; `accessToken` removed. */
export function homeserverReason(error: unknown, accessToken: string): string {
  const said = (error as MatrixError).data?.error;
  return typeof said === "string" && said !== "" ? redactText(said, [accessToken]) : redactError(error, [accessToken]).message;
}

/** Request options that abort after {@link REQUEST_TIMEOUT_MS} (an unref'd timer). */
export function timeoutOpts(): Parameters<MatrixClient["http"]["authedRequest"]>[4] {
  // `priority` (from the DOM's RequestInit) is optional at run time.
  return { abortSignal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) } as Parameters<MatrixClient["http"]["authedRequest"]>[4];
}

/** A request that ran out of time (our abort signal). */
export function isTimeout(error: unknown): boolean {
  const name = (error as Error | null)?.name;
  return name === "AbortError" || name === "TimeoutError";
}
