import { performance } from "node:perf_hooks";
import { MESSAGE_ROLES } from "../../src/index.js";
import type { MessageRole, NewMessage, NewSession, SessionDB } from "../../src/index.js";
import type { DatasetLine, MessageLine, SessionLine } from "../dataset.js";
import { readLines } from "../dataset.js";
import { fmtSeconds, log } from "../log.js";

export interface IngestResult {
  seconds: number;
  messages: number;
  /** Time spent inside the store's calls (the rest is reading and parsing the file). */
  callSeconds: number;
}

const PROGRESS_EVERY_MS = 5000;

/**
 * Streams dataset.jsonl line by line and makes one awaited, durable call per line:
 * createSession, appendMessage or endSession. No batching across lines.
 */
export async function runIngest(db: SessionDB, jsonlPath: string, slice?: { index: number; of: number }): Promise<IngestResult> {
  const owner = slice === undefined ? null : new SliceOwner(slice.of);
  let messages = 0;
  let sessions = 0;
  let titleConflicts = 0;
  let alreadyEnded = 0;
  let callMs = 0;
  const start = performance.now();
  let nextProgress = start + PROGRESS_EVERY_MS;

  for await (const line of readLines(jsonlPath)) {
    if (owner !== null && owner.sliceOf(line) !== slice!.index) continue;
    const callStart = performance.now();
    if (line.type === "session") {
      if (!(await createSession(db, line))) titleConflicts++;
      sessions++;
    } else if (line.type === "message") {
      await db.appendMessage(line.session_id, toNewMessage(line));
      messages++;
    } else {
      if (!(await db.endSession(line.session_id, line.end_reason, { endedAt: line.ended_at }))) alreadyEnded++;
    }
    const now = performance.now();
    callMs += now - callStart;
    if (now >= nextProgress) {
      nextProgress = now + PROGRESS_EVERY_MS;
      const secs = (now - start) / 1000;
      log(`ingest: ${sessions} sessions, ${messages} messages, ${(messages / secs).toFixed(0)} msg/s`);
    }
  }

  const seconds = (performance.now() - start) / 1000;
  if (titleConflicts > 0) log(`ingest: ${titleConflicts} session(s) created without their title (title conflict)`);
  if (alreadyEnded > 0) log(`ingest: ${alreadyEnded} end line(s) found the session already ended`);
  log(`ingest: ${sessions} sessions, ${messages} messages in ${fmtSeconds(seconds)} (${fmtSeconds(callMs / 1000)} in store calls)`);
  return { seconds, messages, callSeconds: callMs / 1000 };
}

/** Creates the session; on a title conflict creates it untitled and returns false. */
async function createSession(db: SessionDB, line: SessionLine): Promise<boolean> {
  const input: NewSession = {
    id: line.id,
    source: line.source,
    userId: line.user_id,
    model: line.model,
    parentSessionId: line.parent_session_id,
    startedAt: line.started_at,
    title: line.title,
  };
  try {
    await db.createSession(input);
    return true;
  } catch (err) {
    if (line.title === null || !isConflict(err)) throw err;
    log(`ingest: title ${JSON.stringify(line.title)} of ${line.id} conflicts (${errorMessage(err)}); creating it untitled`);
    await db.createSession({ ...input, title: null });
    return false;
  }
}

function toNewMessage(line: MessageLine): NewMessage {
  return {
    role: toRole(line.role),
    content: line.content,
    toolCalls: line.tool_calls ?? null,
    toolName: line.tool_name ?? null,
    toolCallId: line.tool_call_id ?? null,
    timestamp: line.timestamp,
    tokenCount: line.token_count,
    finishReason: line.finish_reason ?? null,
  };
}

function toRole(role: string): MessageRole {
  if ((MESSAGE_ROLES as readonly string[]).includes(role)) return role as MessageRole;
  throw new Error(`dataset has an unknown message role ${JSON.stringify(role)}`);
}

/** A ConflictError by its stable code (works whatever module instance threw it). */
function isConflict(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "TL_ERR_CONFLICT";
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Splits the dataset between concurrent writers: a session goes to the slice of its
 * parent (so a lineage stays with one writer), a root to a hash of its id. Every
 * writer streams the whole file and computes the same assignment.
 */
class SliceOwner {
  readonly #of: number;
  readonly #slices = new Map<string, number>();

  constructor(of: number) {
    this.#of = of;
  }

  sliceOf(line: DatasetLine): number {
    if (line.type === "session") {
      const parent = line.parent_session_id === null ? undefined : this.#slices.get(line.parent_session_id);
      const slice = parent ?? hash(line.id) % this.#of;
      this.#slices.set(line.id, slice);
      return slice;
    }
    return this.#slices.get(line.session_id) ?? hash(line.session_id) % this.#of;
  }
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}
