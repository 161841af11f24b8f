/**
 * The PostgreSQL schema as an ordered list of forward migrations: index + 1 = the
 * version it brings the schema to, recorded in `threadline_migrations`. All pending
 * migrations run in one transaction holding an advisory lock, so several processes
 * starting at once never race; a schema newer than this code is refused untouched.
 *
 * @module
 */
import type pg from "pg";
import { SchemaVersionError } from "../errors.js";
import { HANDOFF_MESSAGE_PREFIX, SUMMARY_HEADING_START, SUMMARY_MESSAGE_PREFIX } from "../message-origin.js";

/** One schema step (SQL run inside the migration transaction, with `search_path` set to the schema). */
export interface PostgresMigration {
  /** What it does, for humans. */
  description: string;
  sql: string;
}

/** The advisory lock every migrating process takes (an arbitrary constant: "threadln"). */
export const MIGRATION_LOCK_KEY = 0x7468726561646c6en;

/** Every migration, in order. Never edit a released one: add a new one. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    description: "sessions, messages (with a tsvector search column and its GIN index) and meta",
    sql: `
      CREATE TABLE meta (
        key   text COLLATE "C" PRIMARY KEY,
        value text NOT NULL
      );

      CREATE TABLE sessions (
        id                 text COLLATE "C" PRIMARY KEY,
        source             text COLLATE "C" NOT NULL,
        user_id            text,
        model              text COLLATE "C",
        model_config       text,
        system_prompt      text,
        parent_session_id  text COLLATE "C" REFERENCES sessions(id) ON DELETE SET NULL,
        started_at         double precision NOT NULL,
        ended_at           double precision,
        end_reason         text,
        title              text COLLATE "C",
        title_base         text COLLATE "C",
        title_n            integer,
        session_key        text,
        chat_id            text,
        chat_type          text,
        thread_id          text,
        message_count      integer NOT NULL DEFAULT 0,
        tool_call_count    integer NOT NULL DEFAULT 0,
        last_message_at    double precision,
        last_active_at     double precision NOT NULL,
        preview            text,
        chain_started_at   double precision NOT NULL,
        list_hidden        smallint NOT NULL DEFAULT 0,
        input_tokens       bigint NOT NULL DEFAULT 0,
        output_tokens      bigint NOT NULL DEFAULT 0,
        cache_read_tokens  bigint NOT NULL DEFAULT 0,
        cache_write_tokens bigint NOT NULL DEFAULT 0,
        reasoning_tokens   bigint NOT NULL DEFAULT 0,
        api_calls          bigint NOT NULL DEFAULT 0,
        estimated_cost_usd double precision NOT NULL DEFAULT 0,
        actual_cost_usd    double precision,
        billing_provider   text,
        billing_mode       text,
        cost_status        text
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
        id                  bigserial PRIMARY KEY,
        session_id          text COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role                text NOT NULL,
        content             text,
        content_kind        smallint NOT NULL DEFAULT 0,
        tool_calls          text,
        tool_call_count     integer NOT NULL DEFAULT 0,
        tool_call_id        text,
        tool_name           text,
        token_count         integer,
        finish_reason       text,
        reasoning           text,
        reasoning_details   text,
        platform_message_id text,
        timestamp           double precision NOT NULL,
        rewound_at          double precision,
        rewind_batch        integer,
        search_vector       tsvector
      );
      CREATE INDEX messages_session ON messages(session_id, id);
      CREATE INDEX messages_search ON messages USING gin (search_vector);
    `,
  },
  {
    description: "gateway state: routing entries, identity aliases, durable inbound queue",
    sql: `
      CREATE TABLE routes (
        key                   text COLLATE "C" PRIMARY KEY,
        session_id            text COLLATE "C" NOT NULL,
        created_at            double precision NOT NULL,
        updated_at            double precision NOT NULL,
        origin                text,
        display_name          text,
        platform              text,
        chat_type             text,
        was_auto_reset        boolean NOT NULL DEFAULT false,
        auto_reset_reason     text,
        reset_had_activity    boolean NOT NULL DEFAULT false,
        is_fresh_reset        boolean NOT NULL DEFAULT false,
        expiry_finalized      boolean NOT NULL DEFAULT false,
        suspended             boolean NOT NULL DEFAULT false,
        resume_pending        boolean NOT NULL DEFAULT false,
        resume_reason         text,
        last_resume_marked_at double precision,
        last_prompt_tokens    bigint NOT NULL DEFAULT 0,
        turn_started_at       double precision,
        interrupted_restarts  bigint NOT NULL DEFAULT 0,
        finalize_failures     bigint NOT NULL DEFAULT 0,
        version               integer NOT NULL
      );
      CREATE INDEX routes_session ON routes(session_id, updated_at);
      CREATE INDEX routes_updated ON routes(updated_at);

      CREATE TABLE identity_aliases (
        namespace text COLLATE "C" NOT NULL,
        alias     text COLLATE "C" NOT NULL,
        canonical text COLLATE "C" NOT NULL,
        PRIMARY KEY (namespace, alias)
      );
      CREATE INDEX identity_aliases_canonical ON identity_aliases(namespace, canonical);

      CREATE TABLE inbound_queue (
        id            bigserial PRIMARY KEY,
        key           text COLLATE "C" NOT NULL,
        payloads      text NOT NULL,
        message_ids   text NOT NULL,
        merge_key     text COLLATE "C",
        enqueued_at   double precision NOT NULL,
        last_event_at double precision NOT NULL,
        claimed_at    double precision
      );
      CREATE INDEX inbound_queue_key ON inbound_queue(key, id);
    `,
  },
  {
    description: "session-key leases with fencing tokens (a released row keeps its token)",
    sql: `
      CREATE TABLE session_leases (
        key        text COLLATE "C" PRIMARY KEY,
        holder     text COLLATE "C",
        token      bigint NOT NULL,
        expires_at double precision NOT NULL
      );
    `,
  },
  {
    description: "cross-platform handoffs (pending → running → completed | failed), gone with their session",
    sql: `
      CREATE TABLE handoffs (
        id          text COLLATE "C" PRIMARY KEY,
        seq         bigserial NOT NULL,
        session_id  text COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        platform    text COLLATE "C" NOT NULL,
        status      text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
        reason      text,
        created_at  double precision NOT NULL,
        updated_at  double precision NOT NULL,
        claimed_by  text,
        chat_id     text,
        thread_id   text,
        session_key text
      );
      CREATE INDEX handoffs_pending ON handoffs(created_at, seq) WHERE status = 'pending';
      CREATE INDEX handoffs_session ON handoffs(session_id);
    `,
  },
  {
    description: "execution sessions (agent and workflow runs) with kept listing totals; per-user session indexes",
    sql: `
      CREATE TABLE executions (
        id              text COLLATE "C" PRIMARY KEY,
        kind            text COLLATE "C" NOT NULL,
        name            text COLLATE "C" NOT NULL,
        base_id         text COLLATE "C" NOT NULL,
        parent_id       text COLLATE "C" REFERENCES executions(id) ON DELETE CASCADE,
        user_id         text COLLATE "C",
        created_at      double precision NOT NULL,
        updated_at      double precision NOT NULL,
        unit_updated_at double precision NOT NULL,
        result          text NOT NULL,
        message_count   bigint NOT NULL,
        agents_involved text,
        version         bigint NOT NULL,
        is_step         smallint NOT NULL
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
        key text COLLATE "C" PRIMARY KEY,
        n   bigint NOT NULL
      );

      CREATE INDEX sessions_user_active ON sessions(user_id, list_hidden, last_active_at, id) WHERE user_id IS NOT NULL;
      CREATE INDEX sessions_user_chain_started ON sessions(user_id, list_hidden, chain_started_at, id) WHERE user_id IS NOT NULL;
      CREATE INDEX sessions_user_started ON sessions(user_id, started_at, id) WHERE user_id IS NOT NULL;
    `,
  },
  {
    description: "per-session tool-call tally (kept on write, for insights), back-filled from the visible messages",
    // A name is stored as encodeText stores it (one starting with U+0001 becomes U+0001
    // followed by its JSON string). PostgreSQL's JSON functions refuse a string holding
    // \u0000 (in a name or in arguments), so the back-fill reads \u0000 as U+FFFD: such a
    // name (never seen in practice) is counted under that spelling instead of failing the upgrade.
    sql: `
      CREATE TABLE session_tool_calls (
        session_id text COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        tool_name  text COLLATE "C" NOT NULL,
        calls      bigint NOT NULL,
        PRIMARY KEY (session_id, tool_name)
      );
      INSERT INTO session_tool_calls (session_id, tool_name, calls)
        SELECT m.session_id,
               CASE WHEN left(n.raw, 7) = '"\\u0001' THEN chr(1) || n.raw ELSE c.call->'function'->>'name' END,
               count(*)
          FROM messages m
          CROSS JOIN LATERAL json_array_elements(replace(m.tool_calls, '\\u0000', '\\ufffd')::json) AS c(call)
          CROSS JOIN LATERAL (SELECT (c.call->'function'->'name')::text AS raw) AS n
         WHERE m.tool_calls IS NOT NULL AND m.rewound_at IS NULL
           AND json_typeof(c.call->'function'->'name') = 'string'
         GROUP BY 1, 2;
    `,
  },
  {
    // The first message of a continuation (its parent ended with reason compression), a user
    // message with no platform id whose text starts with that parent's summary heading, gets
    // the marker; the preview of its session is then the first visible user message with text
    // that is not a summary or note, folded as makePreview does (text content only, as
    // summaries and the messages typed after them are).
    description:
      "compression summaries stored before they were marked get their marker (platform_message_id summary:<parent>), and their sessions' previews skip them",
    sql: `
      CREATE TEMPORARY TABLE marked_summaries ON COMMIT DROP AS
        SELECT m.id, s.id AS session_id, s.parent_session_id AS parent
          FROM sessions s
          JOIN sessions p ON p.id = s.parent_session_id AND p.end_reason = 'compression'
          JOIN messages m ON m.id = (SELECT min(id) FROM messages WHERE session_id = s.id)
         WHERE m.role = 'user' AND m.platform_message_id IS NULL AND m.content_kind = 0
           AND left(m.content, char_length('${SUMMARY_HEADING_START}' || s.parent_session_id || ')]')) = '${SUMMARY_HEADING_START}' || s.parent_session_id || ')]';
      UPDATE messages m SET platform_message_id = '${SUMMARY_MESSAGE_PREFIX}' || k.parent
        FROM marked_summaries k WHERE m.id = k.id;
      UPDATE sessions s SET preview = (
        SELECT CASE WHEN char_length(f.t) > 60 THEN left(f.t, 60) || '...' ELSE f.t END
          FROM messages m
          CROSS JOIN LATERAL (SELECT btrim(regexp_replace(m.content, '[[:space:]]+', ' ', 'g')) AS t) f
         WHERE m.session_id = s.id AND m.role = 'user' AND m.rewound_at IS NULL
           AND m.content_kind = 0 AND left(m.content, 1) <> chr(1)
           AND (m.platform_message_id IS NULL
                OR (left(m.platform_message_id, ${SUMMARY_MESSAGE_PREFIX.length}) <> '${SUMMARY_MESSAGE_PREFIX}'
                    AND left(m.platform_message_id, ${HANDOFF_MESSAGE_PREFIX.length}) <> '${HANDOFF_MESSAGE_PREFIX}'))
           AND f.t <> ''
         ORDER BY m.id LIMIT 1)
       WHERE s.id IN (SELECT session_id FROM marked_summaries);
    `,
  },
  {
    description: "DM pairing: pending codes, approved people, per-sender request times and per-platform failed approvals (times in epoch ms)",
    sql: `
      CREATE TABLE pairing_requests (
        platform   text COLLATE "C" NOT NULL,
        code       text COLLATE "C" NOT NULL,
        user_id    text COLLATE "C" NOT NULL,
        user_name  text,
        chat_id    text COLLATE "C",
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        PRIMARY KEY (platform, code)
      );
      CREATE INDEX pairing_requests_user ON pairing_requests(platform, user_id);
      CREATE INDEX pairing_requests_expiry ON pairing_requests(platform, expires_at);

      CREATE TABLE pairing_approvals (
        platform    text COLLATE "C" NOT NULL,
        user_id     text COLLATE "C" NOT NULL,
        user_name   text,
        approved_at bigint NOT NULL,
        approved_by text COLLATE "C",
        PRIMARY KEY (platform, user_id)
      );

      CREATE TABLE pairing_senders (
        platform     text COLLATE "C" NOT NULL,
        user_id      text COLLATE "C" NOT NULL,
        requested_at bigint NOT NULL,
        PRIMARY KEY (platform, user_id)
      );

      CREATE TABLE pairing_lockouts (
        platform     text COLLATE "C" PRIMARY KEY,
        failures     integer NOT NULL,
        locked_until bigint
      );
    `,
  },
  {
    description: "per-person memory (hermes' MEMORY.md and USER.md): bounded entry lists per owner and kind, versioned (times in epoch ms)",
    sql: `
      CREATE TABLE memories (
        platform   text COLLATE "C" NOT NULL,
        user_id    text COLLATE "C" NOT NULL,
        kind       text COLLATE "C" NOT NULL CHECK (kind IN ('memory', 'user')),
        entries    text NOT NULL,
        chars      integer NOT NULL,
        updated_at bigint NOT NULL,
        version    bigint NOT NULL,
        PRIMARY KEY (platform, user_id, kind)
      );
      CREATE INDEX memories_recent ON memories(updated_at, platform, user_id, kind);
      CREATE INDEX memories_user_recent ON memories(user_id, updated_at, platform, kind);
    `,
  },
  {
    description: "inbound claims: the platform messages the gateway has taken (platform, chat, message id), so replicas store and answer each once",
    sql: `
      CREATE TABLE inbound_claims (
        platform   text COLLATE "C" NOT NULL,
        chat       text COLLATE "C" NOT NULL,
        message_id text COLLATE "C" NOT NULL,
        claimed_at double precision NOT NULL,
        PRIMARY KEY (platform, chat, message_id)
      );
      CREATE INDEX inbound_claims_age ON inbound_claims(claimed_at);
    `,
  },
  {
    description:
      "media: content-addressed blobs (sha256) stored in 256 KiB chunks, and the index of the attachment parts of every message (which message of which session refers to which blob)",
    sql: `
      CREATE TABLE media (
        sha256     text COLLATE "C" PRIMARY KEY,
        mime_type  text NOT NULL,
        size       bigint NOT NULL,
        created_at double precision NOT NULL,
        touched_at double precision NOT NULL
      );
      CREATE INDEX media_touched ON media(touched_at);

      CREATE TABLE media_chunks (
        sha256 text COLLATE "C" NOT NULL REFERENCES media(sha256) ON DELETE CASCADE,
        seq    integer NOT NULL,
        data   bytea NOT NULL,
        PRIMARY KEY (sha256, seq)
      );
      ALTER TABLE media_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

      CREATE TABLE message_attachments (
        message_id bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        position   integer NOT NULL,
        session_id text COLLATE "C" NOT NULL,
        sha256     text COLLATE "C" NOT NULL,
        kind       text NOT NULL,
        mime_type  text NOT NULL,
        size       bigint NOT NULL,
        file_name  text,
        attachment text NOT NULL,
        PRIMARY KEY (message_id, position)
      );
      CREATE INDEX message_attachments_blob ON message_attachments(sha256);
      CREATE INDEX message_attachments_session ON message_attachments(session_id, sha256);
    `,
  },
];

/** The version this code writes. */
export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS.length;

/** Quotes an identifier (the config has already restricted it to [A-Za-z0-9_]). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Creates the schema if missing and applies pending migrations, all in one
 * transaction under {@link MIGRATION_LOCK_KEY}. Throws {@link SchemaVersionError}
 * (changing nothing) when the schema is newer than this code.
 */
export async function migrate(client: pg.ClientBase, schema: string): Promise<number> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY.toString()]);
    const exists = await client.query("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'threadline_migrations'", [schema]);
    let current = 0;
    if (exists.rowCount === 0) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      await client.query(
        `CREATE TABLE ${quoteIdent(schema)}.threadline_migrations (
           version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
    } else {
      const row = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${quoteIdent(schema)}.threadline_migrations`);
      current = row.rows[0]?.v ?? 0;
    }
    if (current > POSTGRES_SCHEMA_VERSION) throw new SchemaVersionError(current, POSTGRES_SCHEMA_VERSION);
    await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    for (let v = current; v < POSTGRES_SCHEMA_VERSION; v++) {
      await client.query(POSTGRES_MIGRATIONS[v]!.sql);
      await client.query("INSERT INTO threadline_migrations(version) VALUES ($1)", [v + 1]);
    }
    await client.query("COMMIT");
    return POSTGRES_SCHEMA_VERSION;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
