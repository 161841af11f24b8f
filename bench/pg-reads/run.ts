/**
 * PostgreSQL read latency against the server's round-trip floor, measured interleaved in one
 * run (issue 31): on a schema a store run kept (`npm run bench -- medium --db URL?schema=S --keep`),
 * each round times a bare `SELECT 1` on a pool of its own, then the store's listing (all
 * sources, then `telegram`, then with continuation steps: two index ranges), a transcript and a
 * title lookup. On a shared machine the p99 of
 * every read follows the floor's (the operating system's scheduling of two processes per round
 * trip), so the floor is what a read's p99 is judged against.
 *
 *     npx tsx bench/pg-reads/run.ts 'postgres://127.0.0.1:5432/test?schema=S' [--rounds 1000]
 *
 * Prints one JSON object (p50/p90/p99/max ms of each) on stdout.
 *
 * @module
 */
import { cpus, loadavg } from "node:os";
import pg from "pg";
import { openSessionDB } from "../../src/index.js";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";

const url = process.argv[2];
if (url === undefined || !url.startsWith("postgres")) {
  process.stderr.write("usage: npx tsx bench/pg-reads/run.ts postgres://…?schema=S [--rounds N]\n");
  process.exit(2);
}
const roundsAt = process.argv.indexOf("--rounds");
const rounds = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 1000;

/** Nearest-rank percentiles, ms rounded to µs. */
function percentiles(ms: number[]): Record<string, number> {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number): number => Math.round(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]! * 1000) / 1000;
  return { p50_ms: at(50), p90_ms: at(90), p99_ms: at(99), max_ms: at(100) };
}

const schema = new URL(url).searchParams.get("schema") ?? "public";
const pool = new pg.Pool({ connectionString: withDefaultUser(url.replace(/[?&]schema=[^&]*/u, "")), max: 2, options: `-c search_path=${schema}` });
const db = await openSessionDB(url);
const loadBefore = loadavg();
try {
  const first = await db.listSessions({ limit: 200, includeChildren: true });
  const ids = first.items.filter((s) => s.messageCount > 0).map((s) => s.id);
  const titles = first.items.map((s) => s.title).filter((t): t is string => t !== null);
  if (ids.length === 0 || titles.length === 0)
    throw new Error(`schema ${schema} holds no sessions with messages and titles: run the store benchmark with --keep first`);
  const probes: Array<[string, (i: number) => Promise<unknown>]> = [
    ["select_1", () => pool.query("SELECT 1")],
    ["list_recent", () => db.listSessions({ limit: 20 })],
    ["list_recent_source", () => db.listSessions({ limit: 20, sources: ["telegram"] })],
    ["list_with_children", () => db.listSessions({ limit: 20, includeChildren: true })],
    ["get_messages", (i) => db.getMessages(ids[i % ids.length]!)],
    ["resolve_title", (i) => db.resolveByTitle(titles[i % titles.length]!)],
  ];
  const times = new Map<string, number[]>(probes.map(([name]) => [name, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [name, probe] of probes) {
      const t0 = performance.now();
      await probe(i);
      times.get(name)!.push(performance.now() - t0);
    }
  }
  const report = Object.fromEntries([...times].map(([name, ms]) => [name, percentiles(ms)]));
  process.stdout.write(
    `${JSON.stringify({ bench: "pg-reads", schema, rounds, cpus: cpus().length, load_before: loadBefore, load_after: loadavg(), ...report })}\n`,
  );
} finally {
  await db.close();
  await pool.end();
}
