/**
 * How terminal chat sessions (source `cli`) end, so retention can remove them: a chat ends
 * its session when it leaves (`/exit`, `/quit`, end of input, SIGINT, SIGTERM, SIGHUP) with
 * {@link END_REASON_USER_EXIT}, as hermes does. A chat whose process was killed (SIGKILL, a
 * crash) leaves its session live; such a session counts as ended once it has been idle for
 * {@link ABANDONED_AFTER_SECONDS}: the next `threadline chat` ends it with
 * {@link END_REASON_ABANDONED} (then retention counts its age as for any ended session). A
 * recent live session is never touched: another terminal may be chatting in it (and a chat
 * whose session was ended under it, by another terminal leaving or as abandoned, reopens it
 * with its next line). Resuming an ended session (`-c`, `-r`) reopens it.
 *
 * @module
 */
import { CLI_PLATFORM } from "../adapters/internal.js";
import type { SessionHistory } from "../store/index.js";
import { collectSessions } from "./session-pages.js";

/** The end reason of a session whose chat left: `/exit`, `/quit`, end of input, SIGINT, SIGTERM, SIGHUP (as hermes). */
export const END_REASON_USER_EXIT = "user_exit";

/** The end reason of a terminal session left live by a chat that was killed, once idle for {@link ABANDONED_AFTER_SECONDS}. */
export const END_REASON_ABANDONED = "abandoned";

/**
 * A live terminal session idle this long (seconds; one day, the default idle reset time) was
 * left by a chat that died, and counts as ended. A terminal left open that long loses
 * nothing: its next line reopens its session.
 */
export const ABANDONED_AFTER_SECONDS = 86_400;

/**
 * Ends the live terminal sessions idle longer than {@link ABANDONED_AFTER_SECONDS} at `now`
 * (compression children included) with {@link END_REASON_ABANDONED}, each at its last
 * activity (when its chat was last seen): what `threadline chat` does when it starts, so
 * retention can remove them. One that ended meanwhile keeps its first end. Returns how many
 * this call ended.
 */
export async function endAbandonedTerminalSessions(db: SessionHistory, now: number): Promise<number> {
  const cutoff = now - ABANDONED_AFTER_SECONDS;
  const idle = await collectSessions(db, { sources: [CLI_PLATFORM], includeChildren: true, until: cutoff }, Infinity);
  let ended = 0;
  for (const session of idle.items) {
    if (session.endedAt !== null || session.lastActiveAt >= cutoff) continue;
    if (await db.endSession(session.id, END_REASON_ABANDONED, { endedAt: session.lastActiveAt })) ended++;
  }
  return ended;
}
