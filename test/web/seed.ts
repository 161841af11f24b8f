/**
 * Seeded SQLite databases for the web page tests, written with the real `SessionDB`
 * before `threadline serve` opens them.
 *
 * @module
 */
import { openSessionDB, type NewMessage } from "../../src/store/index.js";

/** A fixed "now" a little in the past, so every seeded time is ordered and in the past. */
export const T0 = Math.floor(Date.now() / 1000) - 86_400;

/** One seeded session. */
export interface SeedSession {
  id: string;
  source: string;
  title?: string | null;
  userId?: string | null;
  model?: string | null;
  startedAt: number;
  messages: NewMessage[];
  /** The session this one continues or branches from (seeded before it). */
  parentSessionId?: string | null;
  /** Ends the session with this reason after its messages (`compression` makes its children continuations). */
  endReason?: string;
  /** Token and cost totals recorded for the session. */
  usage?: { inputTokens: number; outputTokens: number; estimatedCostUsd: number };
}

/** Writes `sessions` into the SQLite database at `path`. */
export async function seed(path: string, sessions: SeedSession[]): Promise<void> {
  const db = await openSessionDB(path);
  try {
    for (const s of sessions) {
      await db.createSession({
        id: s.id,
        source: s.source,
        userId: s.userId ?? null,
        model: s.model ?? null,
        startedAt: s.startedAt,
        parentSessionId: s.parentSessionId ?? null,
      });
      if (s.title) await db.setTitle(s.id, s.title);
      for (const m of s.messages) await db.appendMessage(s.id, m);
      if (s.usage !== undefined) await db.recordUsage(s.id, s.usage);
      if (s.endReason !== undefined) await db.endSession(s.id, s.endReason, { endedAt: s.startedAt + 500 });
    }
  } finally {
    await db.close();
  }
}

/** A user/assistant exchange at `at` (seconds). */
export function exchange(at: number, user: string, assistant: string): NewMessage[] {
  return [
    { role: "user", content: user, timestamp: at },
    { role: "assistant", content: assistant, timestamp: at + 1, tokenCount: 42 },
  ];
}
