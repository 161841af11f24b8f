/**
 * The {@link StoreMaintenance} role (the database as a whole: export and import, retention, totals
 * and insights, capabilities, closing) and its records. Part of the storage contract (see
 * `./index.ts`).
 *
 * @module
 */
import type { Message, Session } from "./history.js";

/**
 * One stored blob an exported session's messages refer to (see {@link SessionRecord.media}).
 * `data` is the bytes as standard base64 (with `=` padding); without it, the bytes travel
 * beside the export (a sidecar folder of files named by `sha256`) or not at all.
 */
export interface SessionRecordMedia {
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
  /** The stored type. */
  mimeType: string;
  /** Bytes. */
  size: number;
  /** The bytes, base64 (`media: "inline"`, the default); absent with `media: "refs"`. */
  data?: string;
}

/** One exported session: its metadata and messages. One JSON line of an export. */
export interface SessionRecord {
  format: "threadline.session";
  version: 1;
  session: Omit<Session, "messageCount" | "toolCallCount" | "lastActiveAt" | "preview">;
  messages: Array<Omit<Message, "id" | "sessionId">>;
  /**
   * The blobs the exported messages' attachment parts refer to, one entry per distinct blob
   * that is stored, in the order the messages first refer to them. Left out when there are
   * none, and with `media: "skip"` (the references then dangle after an import until the
   * bytes are imported too; `doctor` names them). Always the record's last key.
   */
  media?: SessionRecordMedia[];
}

/**
 * How an export carries the bytes of attachments:
 * - `"inline"` (default): each {@link SessionRecordMedia} with its `data`;
 * - `"refs"`: the entries without `data` (the caller writes the bytes elsewhere, e.g. the CLI's
 *   `--media-dir` folder, from {@link MediaStore.streamMedia});
 * - `"skip"`: no `media` field.
 */
export type ExportMediaMode = "inline" | "refs" | "skip";

/** Options of {@link StoreMaintenance.exportSessions} and {@link StoreMaintenance.exportSessionLines}. */
export interface ExportOptions {
  /** Only this session. */
  sessionId?: string;
  /** Only these sources. */
  sources?: string[];
  /** Include rewound messages (default false). */
  includeRewound?: boolean;
  /** Only sessions of this user (`Session.userId`); with `sessionId`, another user's session is not found. */
  userId?: string;
  /** How the bytes of attachments travel (default `"inline"`); see {@link ExportMediaMode}. */
  media?: ExportMediaMode;
  /**
   * {@link StoreMaintenance.exportSessionLines} only: a line carrying media inline comes as
   * several items (its session and messages, then each blob's base64 a stored chunk at a time),
   * only the last ending in `\n`, so memory holds one chunk of a blob instead of the whole line
   * (default false: one item per line). `writeLines` counts lines either way.
   */
  chunked?: boolean;
}

/** Options of {@link StoreMaintenance.importSessions}. */
export interface ImportOptions {
  /**
   * A folder holding blobs as files named by their SHA-256 (what `sessions export --media-dir`
   * writes): a record's media entry without `data` is read from `<mediaDir>/<sha256>`; a file
   * that is missing there rejects the record (nothing of it written).
   */
  mediaDir?: string;
}

/** One rejected import line. */
export interface ImportProblem {
  /** 1-based line number in the input. */
  line: number;
  message: string;
}

/** What {@link StoreMaintenance.importSessions} did. */
export interface ImportReport {
  imported: number;
  /** Sessions that already existed (nothing changed, except attachments of theirs that were not stored, filled in from the record's media). */
  skipped: number;
  /** Lines that were rejected; nothing of them was written. */
  errors: ImportProblem[];
}

/** Options of {@link StoreMaintenance.pruneSessions}. */
export interface PruneOptions {
  /** Ended sessions whose last activity is strictly older than this many days go. */
  olderThanDays: number;
  /** Only these sources. */
  sources?: string[];
  /** "Now" for the age computation (default: the current time). */
  now?: number;
  /**
   * Give the freed space back to the file system afterwards (default true). `true`: SQLite
   * runs `PRAGMA incremental_vacuum` in bounded steps (other writers run between them) and
   * checkpoints the WAL, best effort, after a prune that deleted something; a file created
   * before Threadline set `auto_vacuum = INCREMENTAL` keeps its free pages for reuse.
   * `"full"`: a full `VACUUM` even when nothing was deleted (it rewrites the file, holding the
   * write lock throughout, and turns on incremental auto-vacuum for an older file).
   * PostgreSQL leaves reclaiming to autovacuum in every case.
   */
  vacuum?: boolean | "full";
}

/** Options of {@link StoreMaintenance.autoPrune}. */
export interface AutoPruneOptions extends PruneOptions {
  /** Run at most once per this many seconds across every process sharing the database (default 86,400). */
  intervalSeconds?: number;
}

/** Per-model totals in {@link StoreStats}. */
export interface ModelStats {
  model: string | null;
  sessions: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  estimatedCostUsd: number;
  actualCostUsd: number;
}

/** Totals of a database. */
export interface StoreStats {
  totalSessions: number;
  /** Visible messages. */
  totalMessages: number;
  sessionsBySource: Record<string, number>;
  byModel: ModelStats[];
  /** Bytes on disk (SQLite: main file + WAL). */
  databaseBytes: number;
  /** Bytes used by the full-text index, when the backend can tell. */
  searchIndexBytes: number | null;
}

/** Options of {@link StoreMaintenance.getInsights}: which sessions count (by start time and source). */
export interface InsightsOptions {
  /** Sessions started at or after this time (epoch seconds). Default: 30 days before now. */
  since?: number;
  /** Sessions started before this time (epoch seconds, exclusive). Default: no upper bound. */
  until?: number;
  /** Only sessions from these sources. */
  sources?: string[];
  /** Entries in each ranked session list (`longest`, `costliest`): 1–100, default 5. */
  top?: number;
  /** Only sessions of this user (`Session.userId`), e.g. the tenant of a scoped API key. */
  userId?: string;
}

/** Sessions started on one local calendar day from one source, in {@link Insights.byDay}. */
export interface InsightsDay {
  /** The local calendar day, `YYYY-MM-DD` (in `activity.timeZone`). */
  day: string;
  source: string;
  /** Sessions started that day. */
  sessions: number;
  /** Visible messages of those sessions (counted on the day the session started). */
  messages: number;
}

/** Totals over a set of sessions in {@link Insights}. */
export interface InsightsTotals {
  sessions: number;
  /** Visible messages. */
  messages: number;
  /** Tool calls made by visible assistant messages. */
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  apiCalls: number;
  estimatedCostUsd: number;
  /** Sum of the actual costs that are known (sessions without one add 0). */
  actualCostUsd: number;
}

/** Tool calls of one tool in {@link Insights}. */
export interface ToolUsage {
  /** The called function's name. */
  tool: string;
  calls: number;
  /** Sessions that called it at least once. */
  sessions: number;
}

/** A session in a ranked list of {@link Insights}. */
export interface InsightsSession {
  id: string;
  title: string | null;
  source: string;
  model: string | null;
  startedAt: number;
  endedAt: number | null;
  lastActiveAt: number;
  /** `lastActiveAt − startedAt`, in seconds. */
  durationSeconds: number;
  messageCount: number;
  toolCallCount: number;
  inputTokens: number;
  outputTokens: number;
  estimatedCostUsd: number;
  actualCostUsd: number | null;
}

/**
 * Usage over a period ({@link StoreMaintenance.getInsights}), computed from per-session columns
 * and a per-session tool tally that are kept on write (no message is read).
 */
export interface Insights {
  /** The period: sessions started in [since, until). */
  since: number;
  until: number | null;
  sources: string[] | null;
  totals: InsightsTotals;
  /** Per model, most estimated cost first (then most sessions, then by name). */
  byModel: Array<InsightsTotals & { model: string | null }>;
  /** Per source, most sessions first (then by name). */
  bySource: Array<InsightsTotals & { source: string }>;
  /** Per tool, most calls first (then by name). */
  tools: ToolUsage[];
  /**
   * Sessions started, by weekday and hour of their start in the local time zone of the
   * process that asked (`timeZone`, as Intl reports it).
   */
  activity: {
    timeZone: string;
    /** Monday first: `{ weekday: "Mon", sessions }` … `"Sun"`. */
    byWeekday: Array<{ weekday: string; sessions: number }>;
    /** Hours 0–23. */
    byHour: Array<{ hour: number; sessions: number }>;
    /** Local calendar days with at least one session started. */
    activeDays: number;
  };
  /** Per local day and source, oldest day first (then by source); days without sessions are left out. */
  byDay: InsightsDay[];
  /** Longest first (`durationSeconds`), at most `top`. */
  longest: InsightsSession[];
  /** Most estimated cost first, at most `top` (sessions that cost nothing are left out). */
  costliest: InsightsSession[];
}

/** What a backend can do, for callers that must branch (never on the class). */
export interface StoreCapabilities {
  /** `"sqlite"`, `"postgres"`, … */
  backend: string;
  /** Several processes may write at once. */
  multiProcess: boolean;
  /**
   * Processes on several machines may share the database (a server, not a local file): gateway
   * replicas then coordinate through session leases (`gateway.leases: auto` turns them on).
   */
  multiHost: boolean;
}

/**
 * The database as a whole: what it is and where it lives, export and import, retention,
 * totals and insights, and closing it. What the CLI's maintenance commands, the HTTP
 * server's export and stats routes and the process that owns the database call.
 */
export interface StoreMaintenance {
  readonly capabilities: StoreCapabilities;
  /** Where the data lives (a file path, or a URL without its password). */
  readonly location: string;

  // --- export / import ------------------------------------------------------

  /** Streams sessions as records, in constant memory. */
  exportSessions(options?: ExportOptions): AsyncIterable<SessionRecord>;
  /**
   * The same export as JSON Lines, ready to write: each item is one record's line as UTF-8
   * bytes, ending in `\n`, byte for byte `JSON.stringify(record) + "\n"` of what
   * {@link exportSessions} yields (with `chunked`, a line with inline media comes in several
   * items). Faster where the database writes the lines itself (SQLite), in memory bounded by one
   * line (`chunked`: by one record's messages and one stored chunk of a blob). Write them with
   * `writeLines`.
   */
  exportSessionLines(options?: ExportOptions): AsyncIterable<Uint8Array>;
  /**
   * Imports JSONL lines (as exported). Bad lines are reported and skipped; existing sessions are
   * skipped (only attachments of theirs that are not stored are filled in from the record). A
   * record's media (its `data`, or the file in `options.mediaDir`) are checked against their
   * SHA-256 and size and stored before the session is written; a bad entry rejects the line.
   */
  importSessions(lines: AsyncIterable<string> | Iterable<string>, options?: ImportOptions): Promise<ImportReport>;

  // --- retention ------------------------------------------------------------

  /**
   * Deletes ended sessions whose last activity is older than N days, in batches of short
   * transactions (other writers run between them); returns how many.
   */
  pruneSessions(options: PruneOptions): Promise<number>;
  /** Prunes at most once per interval across all processes; `ran` says whether this call did. */
  autoPrune(options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }>;

  // --- totals ---------------------------------------------------------------

  /**
   * Database totals. `{ searchIndexBytes: false }` skips measuring the search index (on SQLite a walk of
   * every index page, about a second on a 1 GB file) and reports it as `null`.
   */
  getStats(options?: { searchIndexBytes?: boolean }): Promise<StoreStats>;
  /**
   * Token usage, cost, tool calls and activity of the sessions started in a period (default:
   * the last 30 days), by model, source and tool, with the longest and costliest sessions.
   * Answered from kept aggregates (session columns and a per-session tool tally), never by
   * reading messages. Invalid options throw {@link InvalidInputError}.
   */
  getInsights(options?: InsightsOptions): Promise<Insights>;

  /** Finishes pending writes and closes the database. Further calls throw {@link StoreClosedError}. */
  close(): Promise<void>;
}
