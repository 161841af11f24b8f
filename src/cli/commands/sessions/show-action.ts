/**
 * `threadline sessions show <id|title> [--full]`: a session's metadata and transcript, attachments
 * named in it (`[image: photo.jpg, image/jpeg, 195.3 KiB]`; `; bytes not stored` when the blob is missing).
 *
 * The action of the command defined in show-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { NotFoundError, type Session } from "../../../store/index.js";
import { relativeTime, styles, useColor, writeJson, type CliIo } from "../../cli-output.js";
import { noteOnStderr, resolveSessionRef, withExistingDatabase } from "../../cli-context.js";
import { formatLocalDateTime } from "../../local-time.js";
import { renderTranscript } from "../../transcript.js";

interface ShowOptions {
  db?: string;
  json?: boolean;
  full?: boolean;
}

/** Nothing here measures display width (the transcript is not laid out in columns): string-width is not loaded. */
export const loadsDisplayWidthItself = true;

/** Runs `show`: the action of makeShowCommand (in show-command.ts), loaded when the command runs. */
export async function run(io: CliIo, words: string[], options: ShowOptions): Promise<void> {
  await withExistingDatabase(options.db, io.env, async (db) => {
    const id = await resolveSessionRef(db, words.join(" "), { note: noteOnStderr(io) });
    const session = await db.getSession(id);
    if (session === null) throw new NotFoundError(`Session "${id}" was deleted meanwhile.`);
    const messages = await db.getMessages(id);
    if (options.json) {
      writeJson(io, { session, messages });
      return;
    }
    const color = useColor(io);
    io.stdout.write(`${describeSession(session, io.now(), color, options.full === true)}\n`);
    const missingMedia = new Set((await db.listAttachments(id)).filter((a) => !a.stored).map((a) => a.sha256));
    const transcript = renderTranscript(messages, { full: options.full === true, color, systemPrompt: session.systemPrompt, missingMedia });
    io.stdout.write(transcript === "" ? "\n(no messages)\n" : `\n${transcript}\n`);
  });
}

function describeSession(session: Session, now: number, color: boolean, full: boolean): string {
  const s = styles(color);
  const at = (t: number): string => `${formatLocalDateTime(t)} (${relativeTime(t, now)})`;
  const rows: Array<[string, string]> = [["Session", s.bold(session.id)]];
  if (session.title) rows.push(["Title", session.title]);
  const origin = [
    session.userId ? `user ${session.userId}` : null,
    session.chatId ? `chat ${session.chatId}` : null,
    session.chatType,
    session.threadId ? `thread ${session.threadId}` : null,
  ]
    .filter((v): v is string => v !== null && v !== "")
    .join(", ");
  rows.push(["Source", origin ? `${session.source} (${origin})` : session.source]);
  if (session.model) rows.push(["Model", session.model]);
  rows.push(["Started", at(session.startedAt)]);
  rows.push(["Last active", at(session.lastActiveAt)]);
  rows.push(["Ended", session.endedAt === null ? "no (live)" : `${at(session.endedAt)}${session.endReason ? `, ${session.endReason}` : ""}`]);
  if (session.parentSessionId) rows.push(["Parent", session.parentSessionId]);
  rows.push([
    "Messages",
    `${session.messageCount}${session.toolCallCount > 0 ? ` (${session.toolCallCount} tool call${session.toolCallCount === 1 ? "" : "s"})` : ""}`,
  ]);
  const u = session.usage;
  if (u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.reasoningTokens > 0) {
    const extra = [
      u.cacheReadTokens > 0 ? `${n(u.cacheReadTokens)} cache read` : null,
      u.cacheWriteTokens > 0 ? `${n(u.cacheWriteTokens)} cache write` : null,
      u.reasoningTokens > 0 ? `${n(u.reasoningTokens)} reasoning` : null,
    ].filter((v) => v !== null);
    rows.push(["Tokens", `${n(u.inputTokens)} in, ${n(u.outputTokens)} out${extra.length > 0 ? ` (${extra.join(", ")})` : ""}`]);
  }
  const cost = u.actualCostUsd ?? u.estimatedCostUsd;
  if (cost > 0) rows.push(["Cost", `$${cost.toFixed(4)}${u.actualCostUsd === null ? " (estimated)" : ""}`]);
  if (session.systemPrompt && !full) rows.push(["System prompt", s.dim(`${[...session.systemPrompt].length} characters (--full shows it)`)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${s.dim(k.padEnd(width))}  ${v}`).join("\n");
}

function n(value: number): string {
  return value.toLocaleString("en-US");
}
