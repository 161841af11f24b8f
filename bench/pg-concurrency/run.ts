/**
 * PostgreSQL appends from N concurrent sessions in one process (issue 31).
 *
 *     npx tsx bench/pg-concurrency/run.ts [--root DIR] [--db URL] [--sessions 1,10,100]
 *                                         [--seconds S] [--messages M] [--pool P]
 *
 * For each N: a fresh schema, N sessions created (untimed), then N writers, one per session,
 * each appending its messages one durable call at a time (`appendMessage`, awaited, as a
 * gateway does), until `--seconds` have passed or the N writers together wrote `--messages`.
 * The figure is messages per second over that time, with the per-call latency p50 and p99.
 * The schema is dropped afterwards. It imports `${root}/dist/index.js` (and the store's
 * PostgreSQL entry), so `--root` measures another build (the reference checkout of
 * `npm run bench:compare -- <ref> script bench/pg-concurrency/run.ts`); its `dist/` must be built.
 *
 * Prints one JSON line on stdout; progress goes to stderr.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { log } from "../log.js";

/** The part of a store this benchmark uses (both builds have it). */
interface BenchStore {
  createSession(input: { id: string; source: string; startedAt?: number }): Promise<unknown>;
  appendMessage(sessionId: string, message: Record<string, unknown>): Promise<number>;
  close(): Promise<void>;
}

interface PostgresEntry {
  PostgresSessionDB: { open(config: { connectionString: string; schema: string; poolSize?: number }): Promise<BenchStore> };
}

interface Options {
  root: string;
  db: string;
  sessions: number[];
  seconds: number;
  messages: number;
  pool: number | undefined;
}

interface RoundResult {
  sessions: number;
  messages: number;
  seconds: number;
  msgPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

const USAGE = "usage: tsx bench/pg-concurrency/run.ts [--root DIR] [--db URL] [--sessions 1,10,100] [--seconds S] [--messages M] [--pool P]";

function parse(argv: string[]): Options {
  const options: Options = {
    root: resolve(dirname(fileURLToPath(import.meta.url)), "../.."),
    db: "postgres://127.0.0.1:5432/test",
    sessions: [1, 10, 100],
    seconds: 5,
    messages: 20_000,
    pool: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    const positive = (v: string): number => {
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`${arg} needs a positive number, not ${JSON.stringify(v)}\n${USAGE}`);
      return n;
    };
    if (arg === "--root") options.root = resolve(value());
    else if (arg === "--db") options.db = value();
    else if (arg === "--sessions")
      options.sessions = value()
        .split(",")
        .map((v) => Math.floor(positive(v)));
    else if (arg === "--seconds") options.seconds = positive(value());
    else if (arg === "--messages") options.messages = Math.floor(positive(value()));
    else if (arg === "--pool") options.pool = Math.floor(positive(value()));
    else throw new Error(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
  }
  return options;
}

/** The n-th message of a session: user and assistant turns of a few hundred characters, every fifth with a tool call. */
function message(n: number, at: number): Record<string, unknown> {
  const words = "the quick brown fox jumps over a lazy dog while postgres commits durable rows to its write ahead log".split(" ");
  const text = Array.from({ length: 40 + (n % 7) * 10 }, (_, i) => words[(i * 7 + n) % words.length]).join(" ");
  if (n % 2 === 0) return { role: "user", content: `${text} (${n})`, timestamp: at };
  if (n % 5 === 1) {
    return {
      role: "assistant",
      content: text,
      timestamp: at,
      toolCalls: [{ id: `call_${n}`, type: "function", function: { name: "search", arguments: `{"q":"${n}"}` } }],
    };
  }
  return { role: "assistant", content: text, timestamp: at, tokenCount: 50 + n };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function round(entry: PostgresEntry, options: Options, n: number): Promise<RoundResult> {
  const schema = `bench_pgconc_${process.pid}_${n}_${Date.now().toString(36)}`;
  const db = await entry.PostgresSessionDB.open({ connectionString: options.db, schema, ...(options.pool === undefined ? {} : { poolSize: options.pool }) });
  try {
    const ids = Array.from({ length: n }, (_, i) => `pgconc-${i}`);
    const t0 = 1_700_000_000;
    for (const id of ids) await db.createSession({ id, source: "bench", startedAt: t0 });
    const latencies: number[] = [];
    let written = 0;
    const start = performance.now();
    const deadline = start + options.seconds * 1000;
    const writer = async (id: string): Promise<void> => {
      for (let k = 0; performance.now() < deadline && written < options.messages; k++) {
        const callStart = performance.now();
        await db.appendMessage(id, message(k, t0 + k));
        latencies.push(performance.now() - callStart);
        written++;
      }
    };
    await Promise.all(ids.map(writer));
    const seconds = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    const result = {
      sessions: n,
      messages: written,
      seconds: Number(seconds.toFixed(3)),
      msgPerSec: Math.round(written / seconds),
      p50Ms: Number(percentile(latencies, 50).toFixed(2)),
      p99Ms: Number(percentile(latencies, 99).toFixed(2)),
    };
    log(`pg-concurrency: ${n} session(s): ${result.msgPerSec} msg/s (${written} in ${seconds.toFixed(2)} s; p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms)`);
    return result;
  } finally {
    await db.close();
    const client = new pg.Client({ connectionString: options.db });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await client.end();
    }
  }
}

function commitOf(root: string): string | null {
  try {
    return execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  if (!process.env["PGUSER"] && !process.env["USER"]) process.env["PGUSER"] = "postgres";
  const entry = (await import(pathToFileURL(resolve(options.root, "dist/store/postgres/index.js")).href)) as PostgresEntry;
  // The root entry too, as an application would load it (and to fail early on an unbuilt checkout).
  await import(pathToFileURL(resolve(options.root, "dist/index.js")).href);
  log(`pg-concurrency: ${options.root} (${commitOf(options.root) ?? "?"}), ${options.sessions.join("/")} session(s), ${options.seconds} s each`);
  const results: RoundResult[] = [];
  for (const n of options.sessions) results.push(await round(entry, options, n));
  const single = results.find((r) => r.sessions === 1)?.msgPerSec;
  process.stdout.write(
    `${JSON.stringify({
      bench: "pg-concurrency",
      root: options.root,
      commit: commitOf(options.root),
      poolSize: options.pool ?? "default",
      loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
      results: results.map((r) => ({ ...r, ...(single === undefined || single === 0 ? {} : { vsSingle: Number((r.msgPerSec / single).toFixed(2)) }) })),
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
