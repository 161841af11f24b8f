/**
 * The sessions database bench:cli lists and shows: the shared workload's dataset (2,000
 * sessions for `medium`) ingested into a SQLite file through the MEASURED checkout's own
 * `dist/index.js` (so its schema version is the one that checkout opens), cached under
 * `os.tmpdir()/threadline-bench-cli/` by dataset and schema version.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureDataset, readLines, readSessionIndex, type MessageLine, type SessionLine } from "../dataset.js";
import { fmtSeconds, log } from "../log.js";

/** The calls of a SessionDB the ingest makes (any build's `openSessionDB` result has them). */
interface IngestTarget {
  createSession(input: Record<string, unknown>): Promise<unknown>;
  appendMessage(sessionId: string, message: Record<string, unknown>): Promise<unknown>;
  endSession(sessionId: string, reason: string, options: { endedAt: number }): Promise<unknown>;
  close(): Promise<void>;
}

type OpenSessionDB = (target: string, options: { synchronous: "OFF" }) => Promise<IngestTarget>;

/** A ready database and the session `sessions show` prints. */
export interface SessionsDatabase {
  path: string;
  sessions: number;
  messages: number;
  /** The session in the middle of the file (file order), shown by `sessions show`. */
  showId: string;
}

/** What names the schema of `root`'s build: its SQLite schema version, else a hash of its migrations. */
async function schemaKey(root: string): Promise<string> {
  const sqliteIndex = join(root, "dist", "store", "sqlite", "index.js");
  if (existsSync(sqliteIndex)) {
    const mod = (await import(pathToFileURL(sqliteIndex).href)) as { SQLITE_SCHEMA_VERSION?: unknown };
    if (typeof mod.SQLITE_SCHEMA_VERSION === "number") return `schema${mod.SQLITE_SCHEMA_VERSION}`;
  }
  const migrations = join(root, "dist", "store", "sqlite", "sqlite-migrations.js");
  if (!existsSync(migrations)) throw new Error(`${root}/dist has no SQLite store: run "npm run build" there first.`);
  return `migrations-${createHash("sha256").update(readFileSync(migrations)).digest("hex").slice(0, 12)}`;
}

/** SQLite's files of a database: the main file, its WAL and its shared-memory index. */
function dbFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

/**
 * The cached database of `size` for `root`'s build, ingested first when missing.
 *
 * @param projectRoot This checkout (its `bench-data/` holds the generated dataset).
 * @param root The measured checkout (its `dist/index.js` writes the database).
 */
export async function ensureSessionsDatabase(projectRoot: string, root: string, size: string): Promise<SessionsDatabase> {
  const data = await ensureDataset(projectRoot, size);
  const dir = join(tmpdir(), "threadline-bench-cli");
  const path = join(dir, `${size}-${await schemaKey(root)}.db`);
  if (existsSync(path)) log(`reusing database ${path}`);
  else {
    await mkdir(dir, { recursive: true });
    const building = `${path}.building-${process.pid}`;
    await ingest(root, data.jsonlPath, building);
    for (const [from, to] of dbFiles(building).map((f, i) => [f, dbFiles(path)[i] as string] as const)) {
      if (existsSync(from)) await rename(from, to);
    }
  }
  const index = await readSessionIndex(data.jsonlPath);
  const showId = index.ids[Math.floor(index.ids.length / 2)];
  if (showId === undefined) throw new Error(`dataset ${size} has no sessions`);
  return { path, sessions: data.meta.sessions, messages: data.meta.messages, showId };
}

/** Writes every line of the dataset into a new database at `path` through `root`'s dist (no fsync: a cache). */
async function ingest(root: string, jsonlPath: string, path: string): Promise<void> {
  for (const file of dbFiles(path)) await rm(file, { force: true });
  const entry = join(root, "dist", "index.js");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run "npm run build" in ${root} first.`);
  const { openSessionDB } = (await import(pathToFileURL(entry).href)) as { openSessionDB: OpenSessionDB };
  log(`building ${path} through ${entry}`);
  const started = performance.now();
  const db = await openSessionDB(path, { synchronous: "OFF" });
  let messages = 0;
  try {
    for await (const line of readLines(jsonlPath)) {
      if (line.type === "session") await createSession(db, line);
      else if (line.type === "message") {
        await db.appendMessage(line.session_id, newMessage(line));
        if (++messages % 20_000 === 0) log(`database: ${messages} messages`);
      } else await db.endSession(line.session_id, line.end_reason, { endedAt: line.ended_at });
    }
  } finally {
    await db.close();
  }
  log(`database: ${messages} messages in ${fmtSeconds((performance.now() - started) / 1000)}`);
}

/** Creates the session; on a title conflict (`TL_ERR_CONFLICT`) creates it untitled, as bench/phases/ingest.ts does. */
async function createSession(db: IngestTarget, line: SessionLine): Promise<void> {
  const input = {
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
  } catch (error) {
    if (line.title === null || (error as { code?: unknown } | null)?.code !== "TL_ERR_CONFLICT") throw error;
    await db.createSession({ ...input, title: null });
  }
}

function newMessage(line: MessageLine): Record<string, unknown> {
  return {
    role: line.role,
    content: line.content,
    toolCalls: line.tool_calls ?? null,
    toolName: line.tool_name ?? null,
    toolCallId: line.tool_call_id ?? null,
    timestamp: line.timestamp,
    tokenCount: line.token_count,
    finishReason: line.finish_reason ?? null,
  };
}
