/**
 * Messages stored with role `user` that no user typed: the summary a `/compress`
 * continuation starts from, and the note a handoff's summary turn sends the model. They are
 * user turns for the model (it must read the summary, and answer the note), so their role
 * stays `user`; what marks them is their `platformMessageId`, a synthetic id no platform
 * gives (`summary:<parent session id>`, `handoff:<handoff id>`). Listings, recaps and
 * transcripts read it to show them as what they are, and the session preview (the first
 * visible user message) skips them.
 *
 * Summaries stored before the marker existed got it from a migration (both backends): the
 * first message of a session whose parent ended with reason `compression`, when it is a user
 * message without a platform id whose text starts with that parent's summary heading.
 *
 * @module
 */
import type { Message } from "./contract.js";

/** `platformMessageId` of the summary a `/compress` continuation starts from: `summary:<parent session id>`. */
export const SUMMARY_MESSAGE_PREFIX = "summary:";

/** `platformMessageId` of a handoff's note to the model (its summary turn): `handoff:<handoff id>`. */
export const HANDOFF_MESSAGE_PREFIX = "handoff:";

/** What a user-role message that no user typed is. */
export type SyntheticMessageKind = "summary" | "note";

/**
 * `summary` (a compression summary), `note` (a note to the model, such as a handoff's) or
 * `null` (a message as its author wrote it).
 *
 * @example
 * syntheticMessageKind({ role: "user", platformMessageId: "summary:20261127_170000_ab12" }); // "summary"
 * syntheticMessageKind({ role: "user", platformMessageId: "4711" }); // null
 */
export function syntheticMessageKind(message: Pick<Message, "role"> & { platformMessageId?: string | null }): SyntheticMessageKind | null {
  const id = message.platformMessageId;
  if (message.role !== "user" || typeof id !== "string") return null;
  if (id.startsWith(SUMMARY_MESSAGE_PREFIX)) return "summary";
  if (id.startsWith(HANDOFF_MESSAGE_PREFIX)) return "note";
  return null;
}

/** The bracketed first line of a stored compression summary: `[Summary of the earlier conversation (session <id>)]`. */
const SUMMARY_HEADING = /^\[Summary of the earlier conversation \(session [^)\n]*\)\]\s*/u;
/** A note to the model in brackets: `[System note: …]`. */
const NOTE_BRACKETS = /^\[System note:\s*([\s\S]*?)\]\s*$/u;

/**
 * The text of a summary or note without the wrapping the model reads (the summary's heading
 * line, the note's `[System note: …]` brackets), for a display that labels it already.
 *
 * @example
 * syntheticMessageBody("note", "[System note: handed off to telegram.]"); // "handed off to telegram."
 */
export function syntheticMessageBody(kind: SyntheticMessageKind, text: string): string {
  if (kind === "summary") return text.replace(SUMMARY_HEADING, "");
  const note = NOTE_BRACKETS.exec(text);
  return note === null ? text : note[1]!;
}

/** The first line of a stored compression summary, up to the id of the session it summarises. */
export const SUMMARY_HEADING_START = "[Summary of the earlier conversation (session ";

/** The text a stored compression summary holds: a heading naming the compressed session, then the summary. */
export function summaryMessageText(parentSessionId: string, summary: string): string {
  return `${SUMMARY_HEADING_START}${parentSessionId})]\n${summary}`;
}
