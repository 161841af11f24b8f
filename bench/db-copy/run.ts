/**
 * `threadline db copy` from SQLite into PostgreSQL on the shared workload's dataset (issue 32).
 *
 *     npx tsx bench/db-copy/run.ts [--size medium] [--db postgres://127.0.0.1:5432/test] [--lanes N]
 *
 * The SQLite database is bench:cli's cached one (the dataset ingested through this checkout's
 * `dist/`, so `npm run build` first; see bench/cli/sessions-database.ts). It is copied with
 * `copyDatabase` (what the command runs) into a new schema of `--db`, which is dropped afterwards;
 * the counts are checked against the dataset and the target's own totals. Prints one JSON object
 * on stdout (dataset, load average before and after, counts, seconds, messages per second);
 * progress goes to stderr.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { openSessionDB } from "../../src/index.js";
import { copyDatabase } from "../../src/store/index.js";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";
import { ensureSessionsDatabase } from "../cli/sessions-database.js";
import { log } from "../log.js";

const USAGE = "usage: tsx bench/db-copy/run.ts [--size small|medium|large|N] [--db postgres://…] [--lanes N]";

function parse(argv: string[]): { size: string; db: string; lanes: number | undefined } {
  const options: { size: string; db: string; lanes: number | undefined } = {
    size: "medium",
    db: process.env["THREADLINE_TEST_PG_URL"] ?? "postgres://127.0.0.1:5432/test",
    lanes: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (argv[i] === "--size" && value !== undefined) options.size = value;
    else if (argv[i] === "--db" && value !== undefined) options.db = value;
    else if (argv[i] === "--lanes" && value !== undefined) options.lanes = Number(value);
    else throw new Error(USAGE);
    i += 1;
  }
  return options;
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(url) });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const source = await ensureSessionsDatabase(root, root, options.size);
  const schema = `bench_db_copy_${randomBytes(4).toString("hex")}`;
  const target = `${options.db}${options.db.includes("?") ? "&" : "?"}schema=${schema}`;
  const loadBefore = loadavg()[0]!;
  const from = await openSessionDB(source.path);
  const to = await openSessionDB(target);
  try {
    log(`copying ${source.path} (${source.sessions} sessions, ${source.messages} messages) into schema ${schema}`);
    let last = 0;
    const report = await copyDatabase(from, to, {
      ...(options.lanes === undefined ? {} : { lanes: options.lanes }),
      onSession: (c) => {
        if (c.sessions - last >= 500) {
          last = c.sessions;
          log(`  ${c.sessions} sessions, ${c.messages} messages`);
        }
      },
    });
    const stats = await to.getStats({ searchIndexBytes: false });
    const sourceStats = await from.getStats({ searchIndexBytes: false });
    const c = report.counts;
    const problems = [
      c.sessions !== source.sessions ? `sessions ${c.sessions} ≠ dataset ${source.sessions}` : null,
      c.messages !== source.messages ? `messages ${c.messages} ≠ dataset ${source.messages}` : null,
      stats.totalSessions !== sourceStats.totalSessions ? `target holds ${stats.totalSessions} sessions, source ${sourceStats.totalSessions}` : null,
      stats.totalMessages !== sourceStats.totalMessages ? `target holds ${stats.totalMessages} messages, source ${sourceStats.totalMessages}` : null,
      report.sessionErrors.length + report.stateErrors.length > 0 ? `${report.sessionErrors.length + report.stateErrors.length} records refused` : null,
    ].filter((p) => p !== null);
    if (problems.length > 0) throw new Error(`the copy does not match: ${problems.join("; ")}`);
    const result = {
      dataset: options.size,
      lanes: options.lanes ?? "default (4)",
      loadAverage: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
      counts: c,
      targetTotals: { sessions: stats.totalSessions, messages: stats.totalMessages },
      seconds: Number(report.seconds.toFixed(2)),
      messagesPerSecond: Math.round(c.messages / report.seconds),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await from.close();
    await to.close();
    await dropSchema(options.db, schema);
  }
}

await main();
