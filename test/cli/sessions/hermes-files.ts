/**
 * hermes-agent SessionDB files for the import tests: the fixture made by hermes-agent's own
 * code (`test/fixtures/hermes/hermes-state.db`, a copy of the shared `../shared/fixtures/` beside
 * the repository, kept in the repository so a clean clone tests alone; expected counts in
 * `hermes-state.json`), writable copies of it, larger files grown from it, and the check of an
 * imported database against the fixture's expectations.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { expect } from "vitest";
import type { Message, SessionDB } from "../../../src/index.js";

const FIXTURES = process.env["THREADLINE_HERMES_FIXTURES"] ?? fileURLToPath(new URL("../../fixtures/hermes/", import.meta.url));

/** The fixture file (never written: tests import copies of it). */
export const HERMES_FIXTURE = join(FIXTURES, "hermes-state.db");

/** One session as `hermes-state.json` lists it. */
export interface ExpectedSession {
  id: string;
  source: string;
  title: string | null;
  parent_session_id: string | null;
  model: string | null;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  input_tokens: number;
  output_tokens: number;
  estimated_cost_usd: number | null;
  all_messages: number;
  active_messages: number;
  tool_call_messages: number;
}

/** `hermes-state.json`. */
export interface Expected {
  totals: { sessions: number; messages: number; active_messages: number; titled: number; with_parent: number };
  sessions: ExpectedSession[];
}

/** The fixture's expectations, read from `hermes-state.json`. */
export function readExpected(): Expected {
  const path = join(FIXTURES, "hermes-state.json");
  if (!existsSync(path) || !existsSync(HERMES_FIXTURE)) {
    throw new Error(`The hermes fixture is missing at ${FIXTURES} (hermes-state.db and hermes-state.json); set THREADLINE_HERMES_FIXTURES to its directory.`);
  }
  return JSON.parse(readFileSync(path, "utf8")) as Expected;
}

/** A writable copy of the fixture at `dir/name`. */
export function copyFixture(dir: string, name = "hermes-state.db"): string {
  const path = join(dir, name);
  copyFileSync(HERMES_FIXTURE, path);
  return path;
}

/** What must not change when a file is read: its bytes (SHA-256), size and modification time. */
export function fingerprint(path: string): { sha256: string; size: number; mtimeMs: number } {
  const info = statSync(path);
  return { sha256: createHash("sha256").update(readFileSync(path)).digest("hex"), size: info.size, mtimeMs: info.mtimeMs };
}

/**
 * Runs `change` on a writable connection to the hermes file at `path` (a test's own copy), with
 * foreign keys off as in hermes's own connections (SQLite's default), so a test can write the
 * dangling links a real file may hold.
 */
export function editHermesFile(path: string, change: (db: Database.Database) => void): void {
  const db = new Database(path);
  db.pragma("foreign_keys = OFF");
  try {
    change(db);
  } finally {
    db.close();
  }
}

/**
 * Adds `count` sessions of `messagesEach` messages (user/assistant pairs) to the hermes file at
 * `path`, in one transaction, shaped like hermes writes them.
 */
export function addHermesSessions(path: string, count: number, messagesEach = 4): void {
  editHermesFile(path, (db) => {
    const session = db.prepare(
      "INSERT INTO sessions (id, source, user_id, chat_id, chat_type, model, started_at, message_count, input_tokens, output_tokens, estimated_cost_usd) VALUES (?, 'telegram', 'u', ?, 'dm', 'gpt-4o-mini', ?, ?, 10, 5, 0.0001)",
    );
    const message = db.prepare("INSERT INTO messages (session_id, role, content, timestamp, active) VALUES (?, ?, ?, ?, 1)");
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        const id = `20270101_000000_${i.toString(16).padStart(8, "0")}`;
        const at = 1_800_000_000 + i * 60;
        session.run(id, `chat${i}`, at, messagesEach);
        for (let m = 0; m < messagesEach; m++) message.run(id, m % 2 === 0 ? "user" : "assistant", `bulk message ${m} of session ${i}`, at + m);
      }
    })();
  });
}

/** Every message of a hermes file, by session, in the order written (for comparing transcripts). */
export function hermesMessages(path: string): Map<
  string,
  Array<{
    role: string;
    content: string | null;
    tool_call_id: string | null;
    tool_calls: string | null;
    tool_name: string | null;
    reasoning: string | null;
    timestamp: number;
    active: number;
  }>
> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare("SELECT session_id, role, content, tool_call_id, tool_calls, tool_name, reasoning, timestamp, active FROM messages ORDER BY id")
      .all() as Array<{
      session_id: string;
      role: string;
      content: string | null;
      tool_call_id: string | null;
      tool_calls: string | null;
      tool_name: string | null;
      reasoning: string | null;
      timestamp: number;
      active: number;
    }>;
    const out = new Map<string, typeof rows>();
    for (const row of rows) {
      const list = out.get(row.session_id) ?? [];
      list.push(row);
      out.set(row.session_id, list);
    }
    return out;
  } finally {
    db.close();
  }
}

/**
 * Checks that `db` holds every session of `hermes-state.json` with its fields, messages (all
 * and active), title and parent link, and that every transcript is the hermes file's, message
 * by message (rewound where hermes had `active = 0`). `otherSessions`: how many sessions the
 * database holds besides the fixture's (a file grown with {@link addHermesSessions}).
 */
export async function expectFixtureImported(db: SessionDB, expected: Expected, hermesFile: string, { otherSessions = 0 } = {}): Promise<void> {
  const transcripts = hermesMessages(hermesFile);
  let messages = 0;
  let active = 0;
  let titled = 0;
  let withParent = 0;
  for (const want of expected.sessions) {
    const got = await db.getSession(want.id);
    expect(got, `session ${want.id}`).not.toBeNull();
    expect(
      {
        source: got!.source,
        title: got!.title,
        parent: got!.parentSessionId,
        model: got!.model,
        startedAt: got!.startedAt,
        endedAt: got!.endedAt,
        endReason: got!.endReason,
        inputTokens: got!.usage.inputTokens,
        outputTokens: got!.usage.outputTokens,
        cost: got!.usage.estimatedCostUsd,
        messageCount: got!.messageCount,
      },
      `session ${want.id}`,
    ).toEqual({
      source: want.source,
      title: want.title,
      parent: want.parent_session_id,
      model: want.model,
      startedAt: want.started_at,
      endedAt: want.ended_at,
      endReason: want.end_reason,
      inputTokens: want.input_tokens,
      outputTokens: want.output_tokens,
      // hermes leaves a cost it never estimated NULL; Threadline's estimatedCostUsd is a number, 0 for none.
      cost: want.estimated_cost_usd ?? 0,
      messageCount: want.active_messages,
    });
    const all = await db.getMessages(want.id, { includeRewound: true });
    const visible = await db.getMessages(want.id);
    expect(all, `messages of ${want.id}`).toHaveLength(want.all_messages);
    expect(visible, `visible messages of ${want.id}`).toHaveLength(want.active_messages);
    expect(
      all.filter((m) => m.toolCalls !== null),
      `tool-call messages of ${want.id}`,
    ).toHaveLength(want.tool_call_messages);
    const rows = transcripts.get(want.id) ?? [];
    expect(all.map(transcriptLine), `transcript of ${want.id}`).toEqual(
      rows.map((r) => ({
        role: r.role,
        content: r.content,
        toolCallId: r.tool_call_id,
        toolCalls: r.tool_calls === null ? null : JSON.parse(r.tool_calls),
        toolName: r.tool_name,
        reasoning: r.reasoning,
        timestamp: r.timestamp,
        rewound: r.active === 0,
      })),
    );
    messages += all.length;
    active += visible.length;
    if (got!.title !== null) titled += 1;
    if (got!.parentSessionId !== null) withParent += 1;
  }
  expect({ sessions: expected.sessions.length, messages, active_messages: active, titled, with_parent: withParent }).toEqual(expected.totals);
  expect((await db.getStats()).totalSessions).toBe(expected.totals.sessions + otherSessions);
}

function transcriptLine(m: Message): Record<string, unknown> {
  return {
    role: m.role,
    content: m.content,
    toolCallId: m.toolCallId,
    toolCalls: m.toolCalls,
    toolName: m.toolName,
    reasoning: m.reasoning,
    timestamp: m.timestamp,
    rewound: m.rewoundAt !== null,
  };
}
