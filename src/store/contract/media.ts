/**
 * Media: the bytes of photos, voice notes and files people send, kept with the messages they
 * came in. Part of the storage contract (see `./index.ts`).
 *
 * - **Blobs** are content-addressed: one stored copy per SHA-256, whatever number of messages
 *   refer to it ({@link MediaStore.putMedia} de-duplicates).
 * - **References** are content parts of a message: an {@link AttachmentPart}
 *   (`{ type: "attachment", attachment: { sha256, kind, mimeType, size, … } }`) in the message's
 *   `content`. The store keeps an index of them (which message of which session refers to which
 *   blob) whenever a message is written (append, turn, replace, import), so a session's
 *   attachments can be listed and served, and blobs nothing refers to can be removed.
 * - **Removal:** deleting or pruning a session, clearing or replacing its messages, removes in
 *   the same transaction the blobs that only its messages referred to, except blobs stored in the
 *   last {@link MEDIA_GRACE_SECONDS} (a turn may be about to refer to them). {@link MediaStore.sweepMedia}
 *   removes the rest later (crash-safe: a blob stored by a turn that died before writing its
 *   message goes at the next sweep).
 * - A reference whose blob is missing (an import made with `--media skip`) is kept as it is:
 *   reading it gives `null`, and `doctor` reports it.
 *
 * @module
 */

/**
 * A stored blob is kept this long without any message referring to it (1 hour): long enough
 * for the turn that stored it to write its message.
 */
export const MEDIA_GRACE_SECONDS = 3600;

/** What an attachment is, for the model and for display. */
export type AttachmentKind = "image" | "audio" | "video" | "file";

/** A reference to a stored blob, as a message's content part carries it. */
export interface AttachmentRef {
  /** Lower-case hex SHA-256 of the bytes: the blob's identity. */
  sha256: string;
  kind: AttachmentKind;
  /** The type the bytes were found to be (not only what the sender declared), e.g. `image/jpeg`. */
  mimeType: string;
  /** Bytes. */
  size: number;
  /** The file name the sender gave, if any. */
  fileName?: string | null;
  /** The caption or alt text the sender gave for this attachment, if any. */
  caption?: string | null;
  /** A voice note recorded in the chat (kind `audio`), not an audio file. */
  voice?: boolean;
  /** Extra facts (`{ durationSeconds }`, `{ width, height }`): any JSON object. */
  meta?: Record<string, unknown> | null;
}

/** The content part of a message that refers to a stored blob. */
export interface AttachmentPart {
  type: "attachment";
  attachment: AttachmentRef;
  [key: string]: unknown;
}

/** A blob as stored. */
export interface StoredMedia {
  sha256: string;
  mimeType: string;
  size: number;
  /** When it was first stored (epoch seconds). */
  createdAt: number;
}

/** One attachment of a session: a reference in one of its messages. */
export interface SessionAttachment extends AttachmentRef {
  sessionId: string;
  /** The message that refers to it. */
  messageId: number;
  /** Whether the blob's bytes are stored (false after an import made without media). */
  stored: boolean;
}

/** The bytes to store: in memory, or a file read in chunks (memory stays bounded whatever its size). */
export type MediaInput = { bytes: Uint8Array } | { file: string };

/** Options of {@link MediaStore.putMedia}. */
export interface PutMediaOptions {
  /** The type the bytes were found to be. */
  mimeType: string;
  /** The SHA-256 the caller computed; when given it is checked against the bytes (a mismatch throws `InvalidInputError`). */
  sha256?: string;
  /** When (epoch seconds, default now): starts the grace period; a put of a blob already stored renews it. */
  at?: number;
}

/** Options of {@link MediaStore.sweepMedia}. */
export interface SweepMediaOptions {
  /** Remove only blobs stored (or renewed) before this time; default now − {@link MEDIA_GRACE_SECONDS}. */
  before?: number;
}

/** A reference that does not resolve (see {@link MediaStore.checkMedia}). */
export interface MissingMedia {
  sessionId: string;
  messageId: number;
  sha256: string;
}

/** What {@link MediaStore.checkMedia} found. */
export interface MediaCheck {
  /** Blobs stored. */
  blobs: number;
  /** Their bytes. */
  bytes: number;
  /** References (attachment parts) in messages. */
  references: number;
  /** References whose blob is missing (at most 100 listed). */
  missing: MissingMedia[];
  /** How many references are missing in all. */
  missingCount: number;
  /** Blobs nothing refers to (the next sweep removes those past the grace period). */
  unreferenced: number;
  /** Blobs whose stored bytes no longer hash to their id (only with `{ verify: true }`; at most 100 listed). */
  corrupt: string[];
}

/** Stored media (photos, voice notes, files) and their references. */
export interface MediaStore {
  /**
   * Stores a blob (de-duplicated by SHA-256; storing bytes already stored writes nothing but
   * renews the grace period). Resolves once it is durable. Nothing refers to it until a message
   * with an {@link AttachmentPart} naming it is written.
   */
  putMedia(input: MediaInput, options: PutMediaOptions): Promise<StoredMedia>;
  /** The blob's record, or `null` when it is not stored. */
  getMedia(sha256: string): Promise<StoredMedia | null>;
  /** The blob's bytes, or `null` when it is not stored. */
  readMedia(sha256: string): Promise<Uint8Array | null>;
  /** The blob's bytes in chunks (memory bounded by one chunk), or `null` when it is not stored. */
  streamMedia(sha256: string): Promise<AsyncIterable<Uint8Array> | null>;
  /** The attachments of a session's visible messages, oldest first (one entry per reference). */
  listAttachments(sessionId: string): Promise<SessionAttachment[]>;
  /** The session's reference to this blob (the newest one), or `null` when none of its messages refers to it: what scoping checks. */
  findAttachment(sessionId: string, sha256: string): Promise<SessionAttachment | null>;
  /** Removes blobs nothing refers to, stored before `before`; resolves with how many. */
  sweepMedia(options?: SweepMediaOptions): Promise<number>;
  /** Counts blobs and references and lists references that do not resolve (`doctor`); `verify` re-hashes every blob. */
  checkMedia(options?: { verify?: boolean }): Promise<MediaCheck>;
}
