/**
 * The cursor of `session_show`: an opaque string naming the session and the last message id
 * of the page it follows (keyset paging, stable while messages are appended). A cursor of
 * another session, or one that was altered, is refused with a clear message.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";

/** Encodes the position after message `afterId` of `sessionId`. */
export function encodeTranscriptCursor(sessionId: string, afterId: number): string {
  return Buffer.from(JSON.stringify({ s: sessionId, a: afterId }), "utf8").toString("base64url");
}

/** The message id a cursor continues after; throws {@link InvalidInputError} for a cursor that is not one of `sessionId`'s. */
export function decodeTranscriptCursor(cursor: string, sessionId: string): number {
  const bad = (why: string): InvalidInputError =>
    new InvalidInputError(
      `cursor is not valid (${why}): pass the nextCursor of the previous session_show result unchanged, with the same id, or leave cursor out to start at the first message.`,
      { field: "cursor" },
    );
  if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/u.test(cursor)) throw bad("not a cursor string");
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw bad("cannot be decoded");
  }
  const record = parsed as { s?: unknown; a?: unknown } | null;
  if (record === null || typeof record !== "object" || typeof record.s !== "string" || !Number.isSafeInteger(record.a) || (record.a as number) < 0) {
    throw bad("malformed");
  }
  if (record.s !== sessionId) throw bad(`it belongs to another session`);
  return record.a as number;
}
