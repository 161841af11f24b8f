/**
 * The table of sessions that `threadline sessions list` (and `prune --dry-run`) print.
 *
 * When any row has a title the columns are Title, Preview, Last Active, ID; otherwise
 * Preview, Last Active, Src, ID. The preview is the first user message a user typed (never a
 * compressed session's summary or a handoff's note: the store leaves them out). Columns are aligned by display width (a Japanese or emoji
 * preview takes two columns a character). Times are relative (`5m ago`, `yesterday`, then the date).
 *
 * @module
 */
import type { SessionSummary } from "../store/index.js";
import { relativeTime, styles, table, truncate } from "./cli-output.js";

/** Widest title shown, in terminal columns (longer ones end in `…`). */
export const TITLE_WIDTH = 30;
/** Widest preview shown next to titles, in terminal columns. */
export const PREVIEW_WIDTH_WITH_TITLES = 40;
/** Widest preview shown when no row has a title, in terminal columns. */
export const PREVIEW_WIDTH = 50;

/**
 * What the Preview column shows for a session without a preview (no user message with text:
 * a compressed session's summary is not one): `(no messages)` or `(no user message yet)`.
 */
export function noPreview(session: Pick<SessionSummary, "messageCount">): string {
  return session.messageCount === 0 ? "(no messages)" : "(no user message yet)";
}

/**
 * The table as text (header in bold when `color`), without a trailing newline.
 *
 * @example
 * io.stdout.write(sessionTable(page.items, { now: io.now(), color: useColor(io) }) + "\n");
 */
export function sessionTable(sessions: readonly SessionSummary[], { now, color = false }: { now: number; color?: boolean }): string {
  const withTitles = sessions.some((s) => s.title !== null && s.title !== "");
  const preview = (s: SessionSummary, width: number): string => (s.preview === null ? noPreview(s) : truncate(s.preview, width));
  const text = withTitles
    ? table(
        ["Title", "Preview", "Last Active", "ID"],
        sessions.map((s) => [s.title ? truncate(s.title, TITLE_WIDTH) : "-", preview(s, PREVIEW_WIDTH_WITH_TITLES), relativeTime(s.lastActiveAt, now), s.id]),
      )
    : table(
        ["Preview", "Last Active", "Src", "ID"],
        sessions.map((s) => [preview(s, PREVIEW_WIDTH), relativeTime(s.lastActiveAt, now), s.source, s.id]),
      );
  const [header, ...rows] = text.split("\n");
  return [styles(color).bold(header ?? ""), ...rows].join("\n");
}
