/**
 * The platform adapter interface: how messages get into the gateway and replies get
 * out. Shipped adapters: `api-server`, `webhook`, `local`; chat platforms (Telegram,
 * Discord, Slack, …) implement the same interface.
 *
 * @module
 */
import type { AttachmentRef } from "../store/index.js";
import type { SessionSource } from "./session-source.js";

/** An attachment of an inbound message. */
export interface InboundMedia {
  /** `image`, `audio`, `video`, `file`, … */
  kind: string;
  /**
   * Where the platform's file API serves it (a Slack `url_private`, a Discord attachment URL, a
   * Matrix `mxc://` URI), or a `data:` URL (an API client's image part). Only the adapter's
   * {@link Adapter.fetchMedia} ever fetches it, and only from the platform's own file endpoints;
   * never stored, never logged (it may carry a token).
   */
  url?: string | null;
  /** The platform's own id of the file (e.g. a Telegram `file_id`), when there is no URL to fetch it from. */
  fileId?: string | null;
  mimeType?: string | null;
  fileName?: string | null;
  caption?: string | null;
  /** The size the platform declared, in bytes: a file over the limit is refused before it is downloaded. */
  size?: number | null;
  /** A voice note recorded in the chat (kind `audio`), not an audio file someone sent. */
  voice?: boolean;
  /** Extra facts the platform gave (`{ durationSeconds }`, `{ width, height }`). */
  meta?: Record<string, unknown> | null;
  /** Set by the gateway once the bytes are stored: what the turn's user message refers to. */
  stored?: AttachmentRef | null;
  /** Set by the gateway when it was not kept (too big, a refused type, the download failed): the sentence the chat was told. */
  refused?: string | null;
  /** Set by the gateway on a stored audio it transcribed: the text, stored as a text part of the user message (search finds it). */
  transcript?: string | null;
}

/** What {@link Adapter.fetchMedia} is asked for. */
export interface MediaFetchRequest {
  /** The chat the message came from. */
  source: SessionSource;
  /** The most bytes that will be kept (`media.maxBytes`, or less): an adapter may refuse a larger file before downloading. */
  maxBytes: number;
  /** Aborts the download (the gateway stopping, a timeout). */
  signal: AbortSignal;
}

/** The bytes of an inbound attachment as the platform's file API serves them (see {@link Adapter.fetchMedia}). */
export interface FetchedMedia {
  /** The bytes as they arrive (the gateway reads them with the size limit, never all at once). */
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
  /** The length the file API announced, when it did (checked against the limit before reading). */
  size?: number | null;
  /** The type the file API announced. */
  mimeType?: string | null;
  /** The file name the file API announced. */
  fileName?: string | null;
}

/**
 * Thrown by {@link Adapter.fetchMedia} when the platform will not give the file (too big for its
 * file API, gone, expired): its message is said to the chat, so it must be a plain sentence
 * without secrets ("Telegram lets bots download files of at most 20 MB.").
 */
export class MediaUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MediaUnavailableError";
  }
}

/** A message from a platform. */
export interface InboundMessage {
  /** Who and where (routing uses its raw ids). */
  source: SessionSource;
  /** The text (may be empty for media-only messages). */
  text: string;
  /** The platform's message id (de-duplication, reply threading). */
  messageId?: string | null;
  /**
   * `messageId` is a client-chosen idempotency key (the api-server's `Idempotency-Key`):
   * a message whose id is already stored in the chat's session is not stored again — its
   * stored reply is sent again, a reply still running is awaited, and a turn that failed
   * is run once more.
   */
  idempotent?: boolean;
  /** Attachments; several media messages of one album merge into one turn while busy. */
  media?: InboundMedia[];
  /** The album/media-group id of a media message. */
  albumId?: string | null;
  /** A platform edit of an earlier message (handled as a new message in this release). */
  editOf?: string | null;
  /** The provider model to answer with (the api-server maps a request's `model` to it); default: the agent's own. */
  model?: string | null;
}

/** A message to a platform. */
export interface OutboundMessage {
  text: string;
  /** `reply` (the agent's answer), `notice` (resets, queue state, command replies) or `error`. */
  kind: "reply" | "notice" | "error";
  /** The inbound message ids this answers (api-server uses them to complete the waiting request). */
  inReplyTo: string[];
  /** Token usage of the turn, for adapters that report it (OpenAI-compatible responses). */
  usage?: { promptTokens: number; completionTokens: number };
  /** The session it belongs to. */
  sessionId?: string;
  /** The model that answered (a reply from an agent that reports it). */
  model?: string;
  /**
   * Kind `error` only: the request was refused because of the user's input (an unknown
   * command, a bad argument, a title in use), not because something failed.
   * Request/response adapters answer it as a normal reply, not as a server error.
   */
  refused?: boolean;
}

/** A piece of a reply, sent while the model is still producing it (see {@link Adapter.sendDelta}). */
export interface OutboundDelta {
  /** The next text of the reply (pieces concatenate; the whole reply still follows through `send`). */
  text: string;
  /** The inbound message ids the reply answers. */
  inReplyTo: string[];
  /** The session it belongs to. */
  sessionId?: string;
}

/** How the gateway acknowledged an inbound message. */
export type InboundAck =
  | { status: "accepted"; sessionKey: string }
  | { status: "queued"; sessionKey: string; depth: number }
  | { status: "duplicate"; sessionKey: string }
  | { status: "rejected"; sessionKey: string; reason: string }
  | { status: "command"; sessionKey: string }
  /** The sender may not talk to the agent here (`adapters.<platform>.access`): not stored, not answered (a pairing code may have been sent). */
  | { status: "refused"; sessionKey: string };

/** What an adapter calls for every inbound message; resolves once the message is durable (or refused). */
export type InboundHandler = (message: InboundMessage) => Promise<InboundAck>;

/**
 * A message the platform accepted from the adapter but later reported as not delivered
 * (a WhatsApp `failed` status callback, for instance). Not a user message: the gateway logs
 * it (with the session key when the source is known) and counts it.
 */
export interface DeliveryFailure {
  /** The platform name. */
  platform: string;
  /** Where the message was sent (the source it answered), when the adapter knows it. */
  source: SessionSource | null;
  /** The platform's id of the message that was not delivered. */
  messageId: string;
  /** A short, bounded reason: the platform's error code (`131047`) or a word (`unknown`). Used as a metric label. */
  reason: string;
  /** What happened and what to do, in a sentence (no secrets, no message text). */
  description: string;
}

/** What a receiver does when it gets or loses the right to receive (see {@link ReceiverLease}). */
export interface ReceiverHandlers {
  /** Starts receiving (polling, a socket, a sync loop). Called each time the lease is taken. */
  start(): Promise<void>;
  /** Stops receiving; must be safe to follow by `start` again. Called when the lease is lost or released. */
  stop(): Promise<void>;
}

/**
 * Which process receives for a platform's credentials when several gateway replicas share one
 * database: a platform that keeps one connection per token (Telegram polling, the Discord
 * gateway, Slack Socket Mode, a Matrix sync loop, Signal's receive) receives in one replica at
 * a time, and another takes over within the lease time when that one dies.
 */
export interface ReceiverLease {
  /**
   * Calls `handlers.start` once this process holds the lease (at once when it is free), keeps
   * it renewed, calls `handlers.stop` if it is lost and then waits to take it again. Returns a
   * function that stops all this: it calls `handlers.stop` (if started) and releases the lease.
   */
  hold(handlers: ReceiverHandlers): () => Promise<void>;
}

/** What an adapter can report to the gateway besides inbound messages (see {@link Adapter.connect}). */
export interface AdapterEvents {
  /** A message the platform accepted was reported as not delivered. Must not throw. */
  deliveryFailed(failure: DeliveryFailure): void;
  /**
   * With several replicas (`gateway.leases`): the lease on receiving for `name` (the platform,
   * e.g. `telegram`). Absent on a single process: a connection-style adapter then receives at once.
   */
  receiverLease?(name: string): ReceiverLease;
}

/** A platform connection. */
export interface Adapter {
  /** The platform name it produces sources for (`api-server`, `webhook`, `telegram`, …). */
  readonly platform: string;
  /**
   * Starts receiving; every message goes to `handler`. `events` (given by the runner)
   * takes what the platform reports later about messages already sent (delivery failures).
   */
  connect(handler: InboundHandler, events?: AdapterEvents): Promise<void>;
  /** Stops receiving (in-flight sends may still complete). */
  disconnect(): Promise<void>;
  /**
   * Optional: stops taking new messages while sends keep working. The runner calls it when
   * a drain begins, so a platform that redelivers (Telegram getUpdates) keeps what arrives
   * during the drain for the next start instead of it being refused.
   */
  stopReceiving?(): Promise<void>;
  /** Delivers a message to the chat of `source`; returns the platform message id when there is one. */
  send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }>;
  /**
   * Request/response adapters (the api-server) answer on the connection that brought the
   * message. When another replica runs the turn, the receiving replica relays the stored
   * reply while this returns true for the message id.
   */
  awaitsReply?(messageId: string): boolean;
  /**
   * Optional, with {@link Adapter.sendDelta}: whether the reply to these messages should be
   * streamed (an api-server request with `stream: true`, a terminal). The runner then asks the
   * agent to stream and hands each piece to `sendDelta`; the whole reply still goes through `send`.
   */
  wantsStream?(inReplyTo: string[]): boolean;
  /** Optional: delivers a piece of a reply as the model produces it (must not throw). */
  sendDelta?(source: SessionSource, delta: OutboundDelta): void;
  /** Optional: opens a thread for a handoff and returns its source. */
  createThread?(source: SessionSource, title: string): Promise<SessionSource>;
  /** Optional: edits a message it sent earlier. */
  editMessage?(source: SessionSource, messageId: string, text: string): Promise<void>;
  /**
   * Optional: fetches an inbound attachment's bytes through the platform's own file API (Telegram
   * `getFile`, Slack `url_private` with the bot token, the WhatsApp media endpoint, …), never from
   * a URL that a message names. The gateway calls it in the turn that takes the message (after the
   * sender was let in), reads the body with the size limit and checks the type by the bytes. Throw
   * {@link MediaUnavailableError} when the platform will not give it; any other error is reported
   * as a failed download. An adapter without it gets its attachments noted as text only.
   */
  fetchMedia?(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia>;
}
