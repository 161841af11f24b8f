/**
 * hermes-agent's SessionDB file (`~/.hermes/state.db`) as an import source: opened read-only,
 * its shape checked, its rows read a session at a time. Columns a hermes version does not have
 * read as `null`, so older and newer files import alike; the FTS tables are never read.
 *
 * @module
 */
import { InvalidInputError, NotFoundError, openReadOnlySqliteFile, type ReadOnlySqliteFile } from "../store/index.js";

/** A `sessions` row, with the columns the import uses (`null` where the file lacks one). */
export interface HermesSessionRow {
  id: string;
  source: string | null;
  user_id: string | null;
  session_key: string | null;
  chat_id: string | null;
  chat_type: string | null;
  thread_id: string | null;
  model: string | null;
  model_config: string | null;
  system_prompt: string | null;
  parent_session_id: string | null;
  started_at: number | null;
  ended_at: number | null;
  end_reason: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  reasoning_tokens: number | null;
  api_call_count: number | null;
  estimated_cost_usd: number | null;
  actual_cost_usd: number | null;
  billing_provider: string | null;
  billing_mode: string | null;
  cost_status: string | null;
  title: string | null;
}

/** A `messages` row, with the columns the import uses (`null` where the file lacks one). */
export interface HermesMessageRow {
  id: number;
  role: string | null;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  timestamp: number | null;
  token_count: number | null;
  finish_reason: string | null;
  reasoning: string | null;
  reasoning_content: string | null;
  reasoning_details: string | null;
  codex_reasoning_items: string | null;
  codex_message_items: string | null;
  platform_message_id: string | number | null;
  /** `0` for a row a rewind (or a compaction) hid; `null` in files from before the column. */
  active: number | null;
  compacted: number | null;
}

/** What planning needs of a session: its place in the lineage and in time. */
export interface HermesSessionOutline {
  id: string;
  parentId: string | null;
  startedAt: number | null;
  title: string | null;
}

const SESSION_COLUMNS: ReadonlyArray<keyof HermesSessionRow> = [
  "id",
  "source",
  "user_id",
  "session_key",
  "chat_id",
  "chat_type",
  "thread_id",
  "model",
  "model_config",
  "system_prompt",
  "parent_session_id",
  "started_at",
  "ended_at",
  "end_reason",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "api_call_count",
  "estimated_cost_usd",
  "actual_cost_usd",
  "billing_provider",
  "billing_mode",
  "cost_status",
  "title",
];
const MESSAGE_COLUMNS: ReadonlyArray<keyof HermesMessageRow> = [
  "id",
  "role",
  "content",
  "tool_call_id",
  "tool_calls",
  "tool_name",
  "timestamp",
  "token_count",
  "finish_reason",
  "reasoning",
  "reasoning_content",
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
  "platform_message_id",
  "active",
  "compacted",
];
const REQUIRED_SESSION_COLUMNS = ["id", "source", "started_at"];
const REQUIRED_MESSAGE_COLUMNS = ["id", "session_id", "role", "content", "timestamp"];

const WHAT_TO_DO = "Name the state.db of hermes-agent (by default ~/.hermes/state.db, or state.db in $HERMES_HOME).";

/** A hermes-agent `state.db`, open read-only. */
export class HermesStateFile {
  readonly #file: ReadOnlySqliteFile;
  readonly #sessionSelect: string;
  readonly #messageSelect: string;
  /** The file's `schema_version`, or `null` when it has none. */
  readonly schemaVersion: number | null;

  private constructor(file: ReadOnlySqliteFile) {
    this.#file = file;
    const sessionColumns = new Set(file.columns("sessions"));
    const messageColumns = new Set(file.columns("messages"));
    const pick = (present: Set<string>, wanted: readonly string[]): string => wanted.map((c) => (present.has(c) ? `"${c}"` : `NULL AS "${c}"`)).join(", ");
    this.#sessionSelect = `SELECT ${pick(sessionColumns, SESSION_COLUMNS)} FROM sessions WHERE id = ?`;
    this.#messageSelect = `SELECT ${pick(messageColumns, MESSAGE_COLUMNS)} FROM messages WHERE session_id = ? ORDER BY id`;
    let version: number | null = null;
    if (file.columns("schema_version").includes("version")) {
      version = file.get<{ version: number }>("SELECT max(version) AS version FROM schema_version")?.version ?? null;
    }
    this.schemaVersion = version;
  }

  /**
   * Opens `path` read-only (it is never written) and checks that it is a hermes-agent SessionDB.
   *
   * @throws {NotFoundError} when there is no file at `path`.
   * @throws {InvalidInputError} when it is not a SQLite database, or not a hermes-agent one (saying what is missing).
   */
  static async open(path: string): Promise<HermesStateFile> {
    let file: ReadOnlySqliteFile;
    try {
      file = await openReadOnlySqliteFile(path);
    } catch (error) {
      if (error instanceof InvalidInputError) throw new InvalidInputError(`${error.message} ${WHAT_TO_DO}`, { cause: error });
      if (error instanceof NotFoundError) throw new NotFoundError(`${error.message} ${WHAT_TO_DO}`, { cause: error });
      throw error;
    }
    try {
      checkShape(file);
      return new HermesStateFile(file);
    } catch (error) {
      file.close();
      throw error;
    }
  }

  /** Every session, oldest first (by `started_at`, then id): the plan of an import. */
  outlines(): HermesSessionOutline[] {
    return this.#file
      .all<{ id: string; parent_session_id: string | null; started_at: number | null; title: string | null }>(
        "SELECT id, parent_session_id, started_at, title FROM sessions ORDER BY started_at, id",
      )
      .map((r) => ({ id: String(r.id), parentId: r.parent_session_id === null ? null : String(r.parent_session_id), startedAt: r.started_at, title: r.title }));
  }

  /** Messages per session: all of them and the visible (`active`) ones. */
  messageCounts(): Map<string, { all: number; active: number }> {
    const rows = this.#file.all<{ session_id: string; n: number; active: number }>(
      `SELECT session_id, count(*) AS n, ${this.#hasActive() ? "sum(CASE WHEN active = 0 THEN 0 ELSE 1 END)" : "count(*)"} AS active FROM messages GROUP BY session_id`,
    );
    return new Map(rows.map((r) => [String(r.session_id), { all: r.n, active: r.active }]));
  }

  /** Sessions named by messages but missing from `sessions`, with how many messages each has. */
  orphanMessages(): Array<{ sessionId: string; messages: number }> {
    return this.#file
      .all<{ session_id: string; n: number }>(
        "SELECT session_id, count(*) AS n FROM messages WHERE session_id NOT IN (SELECT id FROM sessions) GROUP BY session_id ORDER BY session_id",
      )
      .map((r) => ({ sessionId: String(r.session_id), messages: r.n }));
  }

  /** One session row, or `undefined` when it is gone (the file is being written while read). */
  session(id: string): HermesSessionRow | undefined {
    return this.#file.get<HermesSessionRow>(this.#sessionSelect, [id]);
  }

  /** A session's messages in the order they were written. */
  messages(sessionId: string): HermesMessageRow[] {
    return this.#file.all<HermesMessageRow>(this.#messageSelect, [sessionId]);
  }

  /** The file, as given. */
  get path(): string {
    return this.#file.path;
  }

  /** Closes the file. */
  close(): void {
    this.#file.close();
  }

  #hasActive(): boolean {
    return this.#file.columns("messages").includes("active");
  }
}

/** Throws an {@link InvalidInputError} saying why `file` is not a hermes-agent SessionDB. */
function checkShape(file: ReadOnlySqliteFile): void {
  const sessions = file.columns("sessions");
  const messages = file.columns("messages");
  // A Threadline database has tables of the same names; say so rather than "columns missing".
  if (file.columns("meta").length > 0 && messages.includes("rewound_at")) {
    throw new InvalidInputError(
      `${file.path} is a Threadline database, not a hermes-agent one. To copy sessions between Threadline databases, ` +
        `"threadline sessions export" them and import the JSONL file (the default --from jsonl).`,
    );
  }
  if (sessions.length === 0 || messages.length === 0) {
    const missing = [sessions.length === 0 ? "sessions" : null, messages.length === 0 ? "messages" : null].filter((t) => t !== null);
    throw new InvalidInputError(`${file.path} is a SQLite database but not a hermes-agent state.db: it has no ${missing.join(" or ")} table. ${WHAT_TO_DO}`);
  }
  const lacking = [
    ...REQUIRED_SESSION_COLUMNS.filter((c) => !sessions.includes(c)).map((c) => `sessions.${c}`),
    ...REQUIRED_MESSAGE_COLUMNS.filter((c) => !messages.includes(c)).map((c) => `messages.${c}`),
  ];
  if (lacking.length > 0) {
    throw new InvalidInputError(
      `${file.path} is a SQLite database but not a hermes-agent state.db: it lacks the column${lacking.length === 1 ? "" : "s"} ${lacking.join(", ")}. ${WHAT_TO_DO}`,
    );
  }
}
