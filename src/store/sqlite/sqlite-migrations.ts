/**
 * The SQLite schema as an ordered list of forward migrations: index + 1 = the
 * version it brings the database to (kept in `PRAGMA user_version`). Each runs in
 * its own transaction.
 *
 * @module
 */
import type Database from "better-sqlite3";
import { toIndexText } from "../search/search-text.js";
import { contentText, makePreview } from "../preview.js";
import type { ContentPart } from "../contract.js";
import { SUMMARY_HEADING_START, SUMMARY_MESSAGE_PREFIX, syntheticMessageKind } from "../message-origin.js";

/** One schema step. */
export interface SqliteMigration {
  /** What it does, for humans. */
  description: string;
  up(db: Database.Database): void;
}

/** The FTS5 tokenizer: our own pre-tokenised stream, folded for case and diacritics. */
export const FTS_TOKENIZE = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'";

/** The text a message contributes to the search index: its content text and tool names. */
export function messageIndexText(content: string | null, contentParts: number, toolName: string | null, toolCalls: string | null): string {
  let text = content ?? "";
  if (contentParts && content) text = contentText(JSON.parse(content) as ContentPart[]);
  const names: string[] = [];
  if (toolName) names.push(toolName);
  if (toolCalls) {
    for (const call of JSON.parse(toolCalls) as Array<{ function?: { name?: unknown } }>) {
      if (typeof call?.function?.name === "string") names.push(call.function.name);
    }
  }
  const indexed = toIndexText(text);
  return names.length ? `${indexed} ${toIndexText(names.join(" "))}` : indexed;
}

/** Every migration, in order. Never edit a released one: add a new one. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    description: "sessions, messages and meta",
    up(db) {
      db.exec(`
        CREATE TABLE meta (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE sessions (
          id                 TEXT PRIMARY KEY,
          source             TEXT NOT NULL,
          user_id            TEXT,
          model              TEXT,
          model_config       TEXT,
          system_prompt      TEXT,
          parent_session_id  TEXT REFERENCES sessions(id) ON DELETE SET NULL,
          started_at         REAL NOT NULL,
          ended_at           REAL,
          end_reason         TEXT,
          title              TEXT,
          title_base         TEXT,
          title_n            INTEGER,
          session_key        TEXT,
          chat_id            TEXT,
          chat_type          TEXT,
          thread_id          TEXT,
          message_count      INTEGER NOT NULL DEFAULT 0,
          tool_call_count    INTEGER NOT NULL DEFAULT 0,
          last_message_at    REAL,
          last_active_at     REAL NOT NULL,
          preview            TEXT,
          chain_started_at   REAL NOT NULL,
          list_hidden        INTEGER NOT NULL DEFAULT 0,
          input_tokens       INTEGER NOT NULL DEFAULT 0,
          output_tokens      INTEGER NOT NULL DEFAULT 0,
          cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
          cache_write_tokens INTEGER NOT NULL DEFAULT 0,
          reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
          api_calls          INTEGER NOT NULL DEFAULT 0,
          estimated_cost_usd REAL NOT NULL DEFAULT 0,
          actual_cost_usd    REAL,
          billing_provider   TEXT,
          billing_mode       TEXT,
          cost_status        TEXT
        );
        CREATE UNIQUE INDEX sessions_title ON sessions(title) WHERE title IS NOT NULL;
        CREATE INDEX sessions_title_lineage ON sessions(title_base, title_n) WHERE title_base IS NOT NULL;
        CREATE INDEX sessions_parent ON sessions(parent_session_id) WHERE parent_session_id IS NOT NULL;
        CREATE INDEX sessions_key ON sessions(session_key) WHERE session_key IS NOT NULL;
        CREATE INDEX sessions_active ON sessions(list_hidden, last_active_at, id);
        CREATE INDEX sessions_source_active ON sessions(source, list_hidden, last_active_at, id);
        CREATE INDEX sessions_chain_started ON sessions(list_hidden, chain_started_at, id);
        CREATE INDEX sessions_source_chain_started ON sessions(source, list_hidden, chain_started_at, id);
        CREATE INDEX sessions_started ON sessions(started_at, id);
        CREATE INDEX sessions_source_started ON sessions(source, started_at, id);

        CREATE TABLE messages (
          id                  INTEGER PRIMARY KEY AUTOINCREMENT,
          session_id          TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          role                TEXT NOT NULL,
          content             TEXT,
          content_parts       INTEGER NOT NULL DEFAULT 0,
          tool_calls          TEXT,
          tool_call_count     INTEGER NOT NULL DEFAULT 0,
          tool_call_id        TEXT,
          tool_name           TEXT,
          token_count         INTEGER,
          finish_reason       TEXT,
          reasoning           TEXT,
          reasoning_details   TEXT,
          platform_message_id TEXT,
          timestamp           REAL NOT NULL,
          rewound_at          REAL,
          rewind_batch        INTEGER
        );
        CREATE INDEX messages_session ON messages(session_id, id);
      `);
    },
  },
  {
    description: "full-text search index (contentless FTS5, CJK bigrams), filled lazily up to a watermark",
    up(db) {
      // Existing messages are indexed by the first search (see sqlite-search-index.ts):
      // the watermark starts at 0. Deleting a row removes its index entry only when the
      // index has seen it. prefix '2 3': short prefixes (`zu*`) match thousands of terms,
      // so they get their own index; longer prefixes are selective enough without one.
      db.exec(`
        CREATE VIRTUAL TABLE messages_fts USING fts5(
          body, content = '', contentless_delete = 1, prefix = '2 3', tokenize = "${FTS_TOKENIZE}"
        );
        INSERT INTO meta(key, value) VALUES ('fts.indexed_upto', '0');
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
          WHEN old.rewound_at IS NULL
           AND old.id <= CAST((SELECT value FROM meta WHERE key = 'fts.indexed_upto') AS INTEGER)
        BEGIN
          DELETE FROM messages_fts WHERE rowid = old.id;
        END;
      `);
    },
  },
  {
    description: "gateway state: routing entries, identity aliases, durable inbound queue",
    up(db) {
      db.exec(`
        CREATE TABLE routes (
          key                   TEXT PRIMARY KEY,
          session_id            TEXT NOT NULL,
          created_at            REAL NOT NULL,
          updated_at            REAL NOT NULL,
          origin                TEXT,
          display_name          TEXT,
          platform              TEXT,
          chat_type             TEXT,
          was_auto_reset        INTEGER NOT NULL DEFAULT 0,
          auto_reset_reason     TEXT,
          reset_had_activity    INTEGER NOT NULL DEFAULT 0,
          is_fresh_reset        INTEGER NOT NULL DEFAULT 0,
          expiry_finalized      INTEGER NOT NULL DEFAULT 0,
          suspended             INTEGER NOT NULL DEFAULT 0,
          resume_pending        INTEGER NOT NULL DEFAULT 0,
          resume_reason         TEXT,
          last_resume_marked_at REAL,
          last_prompt_tokens    INTEGER NOT NULL DEFAULT 0,
          turn_started_at       REAL,
          interrupted_restarts  INTEGER NOT NULL DEFAULT 0,
          finalize_failures     INTEGER NOT NULL DEFAULT 0,
          version               INTEGER NOT NULL
        );
        CREATE INDEX routes_session ON routes(session_id, updated_at);
        CREATE INDEX routes_updated ON routes(updated_at);

        CREATE TABLE identity_aliases (
          namespace TEXT NOT NULL,
          alias     TEXT NOT NULL,
          canonical TEXT NOT NULL,
          PRIMARY KEY (namespace, alias)
        ) WITHOUT ROWID;
        CREATE INDEX identity_aliases_canonical ON identity_aliases(namespace, canonical);

        CREATE TABLE inbound_queue (
          id            INTEGER PRIMARY KEY AUTOINCREMENT,
          key           TEXT NOT NULL,
          payloads      TEXT NOT NULL,
          message_ids   TEXT NOT NULL,
          merge_key     TEXT,
          enqueued_at   REAL NOT NULL,
          last_event_at REAL NOT NULL,
          claimed_at    REAL
        );
        CREATE INDEX inbound_queue_key ON inbound_queue(key, id);
      `);
    },
  },
  {
    description: "session-key leases with fencing tokens (a released row keeps its token)",
    up(db) {
      db.exec(`
        CREATE TABLE session_leases (
          key        TEXT PRIMARY KEY,
          holder     TEXT,
          token      INTEGER NOT NULL,
          expires_at REAL NOT NULL
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    description: "cross-platform handoffs (pending → running → completed | failed), gone with their session",
    up(db) {
      db.exec(`
        CREATE TABLE handoffs (
          id          TEXT PRIMARY KEY,
          session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          platform    TEXT NOT NULL,
          status      TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
          reason      TEXT,
          created_at  REAL NOT NULL,
          updated_at  REAL NOT NULL,
          claimed_by  TEXT,
          chat_id     TEXT,
          thread_id   TEXT,
          session_key TEXT
        );
        CREATE INDEX handoffs_pending ON handoffs(created_at) WHERE status = 'pending';
        CREATE INDEX handoffs_session ON handoffs(session_id);
      `);
    },
  },
  {
    description: "execution sessions (agent and workflow runs) with kept listing totals; per-user session indexes",
    up(db) {
      db.exec(`
        CREATE TABLE executions (
          id              TEXT PRIMARY KEY,
          kind            TEXT NOT NULL,
          name            TEXT NOT NULL,
          base_id         TEXT NOT NULL,
          parent_id       TEXT REFERENCES executions(id) ON DELETE CASCADE,
          user_id         TEXT,
          created_at      REAL NOT NULL,
          updated_at      REAL NOT NULL,
          unit_updated_at REAL NOT NULL,
          result          TEXT NOT NULL,
          message_count   INTEGER NOT NULL,
          agents_involved TEXT,
          version         INTEGER NOT NULL,
          is_step         INTEGER NOT NULL
        );
        CREATE INDEX executions_recent ON executions(is_step, updated_at, id);
        CREATE INDEX executions_name ON executions(kind, name, is_step, updated_at, id);
        CREATE INDEX executions_user_recent ON executions(user_id, is_step, updated_at, id) WHERE user_id IS NOT NULL;
        CREATE INDEX executions_user_name ON executions(user_id, kind, name, is_step, updated_at, id) WHERE user_id IS NOT NULL;
        CREATE INDEX executions_base ON executions(base_id, id);
        CREATE INDEX executions_parent ON executions(parent_id, id) WHERE parent_id IS NOT NULL;
        CREATE INDEX executions_units ON executions(is_step, unit_updated_at, id);
        CREATE INDEX executions_user_units ON executions(user_id, is_step, unit_updated_at, id) WHERE user_id IS NOT NULL;

        CREATE TABLE execution_counts (
          key TEXT PRIMARY KEY,
          n   INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE INDEX sessions_user_active ON sessions(user_id, list_hidden, last_active_at, id) WHERE user_id IS NOT NULL;
        CREATE INDEX sessions_user_chain_started ON sessions(user_id, list_hidden, chain_started_at, id) WHERE user_id IS NOT NULL;
        CREATE INDEX sessions_user_started ON sessions(user_id, started_at, id) WHERE user_id IS NOT NULL;
      `);
    },
  },
  {
    description: "per-session tool-call tally (kept on write, for insights), back-filled from the visible messages",
    up(db) {
      db.exec(`
        CREATE TABLE session_tool_calls (
          session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
          tool_name  TEXT NOT NULL,
          calls      INTEGER NOT NULL,
          PRIMARY KEY (session_id, tool_name)
        ) WITHOUT ROWID;
        INSERT INTO session_tool_calls (session_id, tool_name, calls)
          SELECT m.session_id, json_extract(j.value, '$.function.name'), count(*)
            FROM messages m, json_each(m.tool_calls) j
           WHERE m.tool_calls IS NOT NULL AND m.rewound_at IS NULL
             AND json_type(j.value, '$.function.name') = 'text'
           GROUP BY 1, 2;
      `);
    },
  },
  {
    description:
      "compression summaries stored before they were marked get their marker (platform_message_id summary:<parent>), and their sessions' previews skip them",
    up(db) {
      // The first message of a continuation (its parent ended with reason compression), a
      // user message with no platform id whose text starts with that parent's summary heading.
      const summaries = db
        .prepare(
          `SELECT m.id, s.id AS session_id, s.parent_session_id AS parent
             FROM sessions s
             JOIN sessions p ON p.id = s.parent_session_id AND p.end_reason = 'compression'
             JOIN messages m ON m.id = (SELECT min(id) FROM messages WHERE session_id = s.id)
            WHERE m.role = 'user' AND m.platform_message_id IS NULL AND m.content_parts = 0
              AND substr(m.content, 1, length(@heading) + length(s.parent_session_id) + 2) = @heading || s.parent_session_id || ')]'`,
        )
        .all({ heading: SUMMARY_HEADING_START }) as Array<{ id: number; session_id: string; parent: string }>;
      const mark = db.prepare("UPDATE messages SET platform_message_id = ? WHERE id = ?");
      const users = db.prepare(
        `SELECT content, content_parts, platform_message_id FROM messages
          WHERE session_id = ? AND role = 'user' AND rewound_at IS NULL ORDER BY id`,
      );
      const setPreview = db.prepare("UPDATE sessions SET preview = ? WHERE id = ?");
      for (const summary of summaries) {
        mark.run(`${SUMMARY_MESSAGE_PREFIX}${summary.parent}`, summary.id);
        // The preview as the store computes it: the first visible user message with text, not a summary or note.
        let preview: string | null = null;
        for (const row of users.iterate(summary.session_id) as IterableIterator<{
          content: string | null;
          content_parts: number;
          platform_message_id: string | null;
        }>) {
          if (syntheticMessageKind({ role: "user", platformMessageId: row.platform_message_id }) !== null) continue;
          preview = makePreview(row.content_parts && row.content !== null ? (JSON.parse(row.content) as ContentPart[]) : row.content);
          if (preview !== null) break;
        }
        setPreview.run(preview, summary.session_id);
      }
    },
  },
  {
    description: "DM pairing: pending codes, approved people, per-sender request times and per-platform failed approvals (times in epoch ms)",
    up(db) {
      db.exec(`
        CREATE TABLE pairing_requests (
          platform   TEXT NOT NULL,
          code       TEXT NOT NULL,
          user_id    TEXT NOT NULL,
          user_name  TEXT,
          chat_id    TEXT,
          created_at INTEGER NOT NULL,
          expires_at INTEGER NOT NULL,
          PRIMARY KEY (platform, code)
        ) WITHOUT ROWID;
        CREATE INDEX pairing_requests_user ON pairing_requests(platform, user_id);
        CREATE INDEX pairing_requests_expiry ON pairing_requests(platform, expires_at);

        CREATE TABLE pairing_approvals (
          platform    TEXT NOT NULL,
          user_id     TEXT NOT NULL,
          user_name   TEXT,
          approved_at INTEGER NOT NULL,
          approved_by TEXT,
          PRIMARY KEY (platform, user_id)
        ) WITHOUT ROWID;

        CREATE TABLE pairing_senders (
          platform     TEXT NOT NULL,
          user_id      TEXT NOT NULL,
          requested_at INTEGER NOT NULL,
          PRIMARY KEY (platform, user_id)
        ) WITHOUT ROWID;

        CREATE TABLE pairing_lockouts (
          platform     TEXT PRIMARY KEY,
          failures     INTEGER NOT NULL,
          locked_until INTEGER
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    description: "per-person memory (hermes' MEMORY.md and USER.md): bounded entry lists per owner and kind, versioned (times in epoch ms)",
    up(db) {
      db.exec(`
        CREATE TABLE memories (
          platform   TEXT NOT NULL,
          user_id    TEXT NOT NULL,
          kind       TEXT NOT NULL CHECK (kind IN ('memory', 'user')),
          entries    TEXT NOT NULL,
          chars      INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          version    INTEGER NOT NULL,
          PRIMARY KEY (platform, user_id, kind)
        ) WITHOUT ROWID;
        CREATE INDEX memories_recent ON memories(updated_at, platform, user_id, kind);
        CREATE INDEX memories_user_recent ON memories(user_id, updated_at, platform, kind);
      `);
    },
  },
  {
    description: "inbound claims: the platform messages the gateway has taken (platform, chat, message id), so replicas store and answer each once",
    up(db) {
      db.exec(`
        CREATE TABLE inbound_claims (
          platform   TEXT NOT NULL,
          chat       TEXT NOT NULL,
          message_id TEXT NOT NULL,
          claimed_at REAL NOT NULL,
          PRIMARY KEY (platform, chat, message_id)
        ) WITHOUT ROWID;
        CREATE INDEX inbound_claims_age ON inbound_claims(claimed_at);
      `);
    },
  },
  {
    description:
      "media: content-addressed blobs (sha256) stored in 256 KiB chunks, and the index of the attachment parts of every message (which message of which session refers to which blob)",
    up(db) {
      db.exec(`
        CREATE TABLE media (
          sha256     TEXT PRIMARY KEY,
          mime_type  TEXT NOT NULL,
          size       INTEGER NOT NULL,
          created_at REAL NOT NULL,
          touched_at REAL NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX media_touched ON media(touched_at);

        CREATE TABLE media_chunks (
          sha256 TEXT NOT NULL REFERENCES media(sha256) ON DELETE CASCADE,
          seq    INTEGER NOT NULL,
          data   BLOB NOT NULL,
          PRIMARY KEY (sha256, seq)
        );

        CREATE TABLE message_attachments (
          message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
          position   INTEGER NOT NULL,
          session_id TEXT NOT NULL,
          sha256     TEXT NOT NULL,
          kind       TEXT NOT NULL,
          mime_type  TEXT NOT NULL,
          size       INTEGER NOT NULL,
          file_name  TEXT,
          attachment TEXT NOT NULL,
          PRIMARY KEY (message_id, position)
        ) WITHOUT ROWID;
        CREATE INDEX message_attachments_blob ON message_attachments(sha256);
        CREATE INDEX message_attachments_session ON message_attachments(session_id, sha256);
      `);
    },
  },
];

/** The version this code writes. */
export const SQLITE_SCHEMA_VERSION = SQLITE_MIGRATIONS.length;
