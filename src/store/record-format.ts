/**
 * The export/import format: one JSON line per session, `{ format, version, session,
 * messages }`, shared by every backend. What an export writes lives here; the parser of an
 * import (zod) lives in session-record.ts, loaded only when something is imported.
 *
 * @module
 */
import type { Session, SessionRecord } from "./contract.js";

/** The `format` tag of a record. */
export const RECORD_FORMAT = "threadline.session";
/** The record version this code writes and reads. */
export const RECORD_VERSION = 1;

/** A message of an export record: a {@link Message} without its `id` and `sessionId`. */
export type ExportedMessage = SessionRecord["messages"][number];

/** A session and its exported messages as an export record (derived counters left out: they are recomputed on import). */
export function toSessionRecord(session: Session, messages: ExportedMessage[]): SessionRecord {
  const { messageCount: _m, toolCallCount: _t, lastActiveAt: _l, preview: _p, ...rest } = session;
  return { format: RECORD_FORMAT, version: RECORD_VERSION, session: rest, messages };
}
