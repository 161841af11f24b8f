/**
 * Messages stored with role `user` that no user typed, as the transcript shows them: the
 * summary a compressed session continues from (`platformMessageId` `summary:<parent
 * session id>`) and a handoff's note to the model (`handoff:<id>`). The same rule as the
 * store's `message-origin.ts` (the page imports nothing from the rest of `src/`; a test
 * checks that the two agree).
 *
 * @module
 */

/** What a user-role message that no user typed is. */
export type SyntheticMessageKind = "summary" | "note";

const SUMMARY_PREFIX = "summary:";
const NOTE_PREFIX = "handoff:";

/** `summary`, `note`, or `null` for a message as its author wrote it. */
export function syntheticMessageKind(message: { role: string; platformMessageId?: string | null }): SyntheticMessageKind | null {
  const id = message.platformMessageId;
  if (message.role !== "user" || typeof id !== "string") return null;
  if (id.startsWith(SUMMARY_PREFIX)) return "summary";
  if (id.startsWith(NOTE_PREFIX)) return "note";
  return null;
}

/** The session a summary summarises (from its `summary:<id>` marker). */
export function summarisedSession(platformMessageId: string): string {
  return platformMessageId.slice(SUMMARY_PREFIX.length);
}

const SUMMARY_HEADING = /^\[Summary of the earlier conversation \(session [^)\n]*\)\]\s*/u;
const NOTE_BRACKETS = /^\[System note:\s*([\s\S]*?)\]\s*$/u;

/** The text without the wrapping the model reads (the summary's heading line, the note's brackets). */
export function syntheticMessageBody(kind: SyntheticMessageKind, text: string): string {
  if (kind === "summary") return text.replace(SUMMARY_HEADING, "");
  const note = NOTE_BRACKETS.exec(text);
  return note === null ? text : note[1]!;
}
