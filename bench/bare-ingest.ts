/**
 * Single-stream ingest against its ceiling, side by side in one run: the store's ingest phase
 * (one awaited, durable `createSession`/`appendMessage`/`endSession` call per dataset line)
 * and a bare better-sqlite3 loop with the same commit pattern on the same disk: one
 * transaction per line (a session insert; a message insert plus its session's counter
 * update; an end update), WAL, the same `synchronous`. No store, no validation, no search
 * index: what the disk and SQLite allow for one durable commit per message. A third side, the
 * *indexed* bare loop, keeps what an append must keep current in Threadline's schema for the
 * listings to stay flat (the three `last_active_at` indexes of all / one source / one user)
 * on a file with incremental auto-vacuum, as the store's: the same pages written per commit,
 * without the store's code.
 *
 *     npm run bench:bare -- <small|medium|large|N> [--synchronous FULL|NORMAL] [--rounds N]
 *
 * Runs in turns (store, bare, store, bare, …) on fresh files in the dataset's folder and
 * prints one JSON object: medians of msg/s per side and their ratio (the target is
 * the store at ≥ 90% of the bare loop).
 *
 * @module
 */
import { rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { openSessionDB } from "../src/index.js";
import { ensureDataset, readLines } from "./dataset.js";
import { log } from "./log.js";
import { runIngest } from "./phases/ingest.js";

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE = "usage: npm run bench:bare -- <small|medium|large|N> [--synchronous FULL|NORMAL] [--rounds N]";

type Synchronous = "FULL" | "NORMAL";

function parse(argv: string[]): { size: string; synchronous: Synchronous; rounds: number } {
  let size: string | undefined;
  let synchronous: Synchronous = "FULL";
  let rounds = 2;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--synchronous") {
      const value = argv[++i];
      if (value !== "FULL" && value !== "NORMAL") throw new Error(`--synchronous takes FULL or NORMAL.\n${USAGE}`);
      synchronous = value;
    } else if (arg === "--rounds") {
      rounds = Number(argv[++i]);
      if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds needs a positive integer.\n${USAGE}`);
    } else if (size === undefined && !arg.startsWith("-")) size = arg;
    else throw new Error(`unknown argument ${arg}.\n${USAGE}`);
  }
  if (size === undefined) throw new Error(USAGE);
  return { size, synchronous, rounds };
}

async function removeFiles(path: string): Promise<void> {
  await Promise.all(["", "-wal", "-shm"].map((suffix) => rm(`${path}${suffix}`, { force: true })));
}

/** The store's ingest phase on a fresh file; messages per second. */
async function storeIngest(path: string, jsonlPath: string, synchronous: Synchronous): Promise<number> {
  await removeFiles(path);
  const db = await openSessionDB(path, { synchronous });
  try {
    const result = await runIngest(db, jsonlPath);
    return result.messages / result.seconds;
  } finally {
    await db.close();
    await removeFiles(path);
  }
}

/** The bare loop on a fresh file (`indexed`: with the store's listing indexes and auto-vacuum); messages per second. */
async function bareIngest(path: string, jsonlPath: string, synchronous: Synchronous, indexed = false): Promise<number> {
  await removeFiles(path);
  const db = new Database(path);
  try {
    if (indexed) db.pragma("auto_vacuum = INCREMENTAL");
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${synchronous}`);
    db.exec(`
      CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, title TEXT,
        parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
        message_count INTEGER NOT NULL DEFAULT 0, last_active_at REAL NOT NULL);
      CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
        content TEXT, tool_calls TEXT, tool_name TEXT, tool_call_id TEXT, token_count INTEGER, finish_reason TEXT,
        timestamp REAL NOT NULL);
      CREATE INDEX messages_session ON messages(session_id, id);`);
    if (indexed) {
      db.exec(`
        CREATE INDEX sessions_active ON sessions(last_active_at, id);
        CREATE INDEX sessions_source_active ON sessions(source, last_active_at, id);
        CREATE INDEX sessions_user_active ON sessions(user_id, last_active_at, id) WHERE user_id IS NOT NULL;`);
    }
    const begin = db.prepare("BEGIN IMMEDIATE");
    const commit = db.prepare("COMMIT");
    const insertSession = db.prepare(
      `INSERT INTO sessions (id, source, user_id, model, title, parent_session_id, started_at, last_active_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertMessage = db.prepare(
      `INSERT INTO messages (session_id, role, content, tool_calls, tool_name, tool_call_id, token_count, finish_reason, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const bump = db.prepare("UPDATE sessions SET message_count = message_count + 1, last_active_at = max(last_active_at, ?) WHERE id = ?");
    const end = db.prepare("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL");
    let messages = 0;
    const start = performance.now();
    for await (const line of readLines(jsonlPath)) {
      begin.run();
      if (line.type === "session") {
        insertSession.run(line.id, line.source, line.user_id, line.model, line.title, line.parent_session_id, line.started_at, line.started_at);
      } else if (line.type === "message") {
        insertMessage.run(
          line.session_id,
          line.role,
          line.content,
          line.tool_calls === undefined ? null : JSON.stringify(line.tool_calls),
          line.tool_name ?? null,
          line.tool_call_id ?? null,
          line.token_count,
          line.finish_reason ?? null,
          line.timestamp,
        );
        bump.run(line.timestamp, line.session_id);
        messages++;
      } else {
        end.run(line.ended_at, line.end_reason, line.session_id);
      }
      commit.run();
    }
    const seconds = (performance.now() - start) / 1000;
    log(`bare loop${indexed ? " (indexed)" : ""}: ${messages} messages in ${seconds.toFixed(3)} s`);
    return messages / seconds;
  } finally {
    db.close();
    await removeFiles(path);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const { size, synchronous, rounds } = parse(process.argv.slice(2));
  const data = await ensureDataset(projectRoot, size);
  const path = join(data.dir, "bare-ingest.db");
  const store: number[] = [];
  const bare: number[] = [];
  const indexed: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    log(`round ${round}/${rounds}: the store`);
    store.push(await storeIngest(path, data.jsonlPath, synchronous));
    log(`round ${round}/${rounds}: the bare loop`);
    bare.push(await bareIngest(path, data.jsonlPath, synchronous));
    log(`round ${round}/${rounds}: the indexed bare loop`);
    indexed.push(await bareIngest(path, data.jsonlPath, synchronous, true));
  }
  const storeMedian = Math.round(median(store));
  const bareMedian = Math.round(median(bare));
  const indexedMedian = Math.round(median(indexed));
  const report = {
    bench: "bare-ingest",
    dataset: size,
    messages: data.meta.messages,
    synchronous,
    rounds,
    store_msg_per_sec: storeMedian,
    bare_msg_per_sec: bareMedian,
    ratio: Math.round((storeMedian / bareMedian) * 1000) / 1000,
    indexed_bare_msg_per_sec: indexedMedian,
    ratio_to_indexed: Math.round((storeMedian / indexedMedian) * 1000) / 1000,
    runs: { store: store.map(Math.round), bare: bare.map(Math.round), indexed: indexed.map(Math.round) },
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:bare: ${(error as Error).message}\n`);
  process.exitCode = 2;
});
