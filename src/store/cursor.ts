/**
 * Opaque keyset cursors for paged listings: the sort key and id of the last row of a
 * page, base64url-encoded with the ordering they belong to.
 *
 * @module
 */
import { InvalidInputError } from "./errors.js";

/** The position after which the next page starts. */
export interface CursorPosition {
  /** Which ordering the cursor belongs to (a cursor of another ordering is rejected). */
  order: string;
  /** The sort value of the last row. */
  key: number;
  /** The id of the last row (tie-breaker). */
  id: string;
}

/** Encodes a cursor. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.order, position.key, position.id]), "utf8").toString("base64url");
}

/** Decodes a cursor made by {@link encodeCursor} for the same ordering; throws {@link InvalidInputError} otherwise. */
export function decodeCursor(cursor: string, order: string): CursorPosition {
  const bad = (why: string): InvalidInputError =>
    new InvalidInputError(`The cursor is not valid (${why}). Pass the nextCursor of the previous page unchanged, with the same order.`, { field: "cursor" });
  if (typeof cursor !== "string" || cursor.length === 0 || cursor.length > 2048 || !/^[A-Za-z0-9_-]+$/u.test(cursor)) {
    throw bad("not a cursor string");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw bad("cannot be decoded");
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    typeof parsed[0] !== "string" ||
    typeof parsed[1] !== "number" ||
    !Number.isFinite(parsed[1]) ||
    typeof parsed[2] !== "string"
  ) {
    throw bad("malformed");
  }
  if (parsed[0] !== order) throw bad(`it belongs to the "${parsed[0]}" ordering, not "${order}"`);
  return { order: parsed[0], key: parsed[1], id: parsed[2] };
}
