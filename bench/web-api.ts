/**
 * Benchmark of the HTTP calls the web page makes (not a test: nothing is asserted on time).
 * Loads a dataset into a SQLite file (or reuses one loaded earlier with --db), starts the API
 * on 127.0.0.1, makes each call over real HTTP and reports the SERVER-SIDE time of each
 * (Fastify's reply.elapsedTime, measured in an onResponse hook) as p50/p99 ms:
 *
 * - list_first_page: `GET /sessions?limit=50` (newest activity first), 200 times
 * - list_filtered: `GET /sessions?limit=50&source=telegram&titled=true`, 200 times
 * - search: `GET /search?query=…&limit=20`, each query of queries.json
 * - transcript_first_page: `GET /sessions/{id}/messages?limit=100` of a 1,000-message session, 200 times
 * - stats_usage: `GET /stats/usage` over the dataset's last 30 days, 50 times (after a first call, reported
 *   apart as stats_usage_first_call: it also reads the database sizes, which are then reused for a minute)
 * - lineage: `GET /sessions/{id}/lineage` of 200 sessions
 *
 * Usage: npx tsx bench/web-api.ts <small|medium|large> [--db FILE] [--keep]
 *
 * @module
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openSessionDB, type SessionDB } from "../src/index.js";
import { buildServer } from "../src/http-api/index.js";
import { ensureDataset, readQueries } from "./dataset.js";
import { fmtSeconds, log } from "./log.js";
import { nearestRank } from "./percentile.js";
import { runIngest } from "./phases/ingest.js";

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const KEY = "bench-admin-key-0123456789";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const size = argv[0];
  if (size === undefined || size.startsWith("-")) throw new Error("usage: npx tsx bench/web-api.ts <small|medium|large> [--db FILE] [--keep]");
  const dbArg = argv.indexOf("--db");
  const keep = argv.includes("--keep");
  const data = await ensureDataset(projectRoot, size);
  const file = dbArg >= 0 ? resolve(argv[dbArg + 1]!) : resolve(data.dir, "web-api.db");
  const fresh = !existsSync(file);
  // Loading uses synchronous NORMAL to save time; the measured reads do not depend on it.
  const db = await openSessionDB(file, { synchronous: "NORMAL" });
  try {
    if (fresh) {
      const ingest = await runIngest(db, data.jsonlPath);
      log(`loaded ${ingest.messages} messages in ${fmtSeconds(ingest.seconds)}`);
    } else log(`reusing ${file}`);
    const report = await measure(db, data.queriesPath, data.meta.clock, size);
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await db.close();
    if (!keep && dbArg < 0) for (const suffix of ["", "-wal", "-shm"]) await rm(`${file}${suffix}`, { force: true });
  }
}

async function measure(db: SessionDB, queriesPath: string, clock: number, size: string): Promise<Record<string, unknown>> {
  // A 1,000-message session (the dataset's sessions are shorter): one appended turn of 1,000 messages.
  const longId = "bench-long-1000";
  if ((await db.getSession(longId)) === null) {
    await db.createSession({ id: longId, source: "cli", startedAt: clock - 3600 });
    await db.appendTurn(
      longId,
      Array.from({ length: 1000 }, (_, i) => ({
        role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: `message ${i} about the deployment`,
        timestamp: clock - 3600 + i,
      })),
    );
  }
  const app = await buildServer({ db, keys: [{ key: KEY }], listenHost: "127.0.0.1" });
  const timings = new Map<string, number[]>();
  let current = "";
  app.addHook("onResponse", async (_request, reply) => {
    if (current !== "") (timings.get(current) ?? timings.set(current, []).get(current)!).push(reply.elapsedTime);
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  const base = `http://127.0.0.1:${address.port}`;
  const get = async (name: string, path: string): Promise<any> => {
    current = name;
    const response = await fetch(`${base}${path}`, { headers: { "x-api-key": KEY } });
    const body = await response.json();
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
    return body;
  };
  try {
    for (let i = 0; i < 200; i++) await get("list_first_page", "/sessions?limit=50");
    for (let i = 0; i < 200; i++) await get("list_filtered", "/sessions?limit=50&source=telegram&titled=true");
    let hits = 0;
    for (const query of await readQueries(queriesPath)) hits += (await get("search", `/search?limit=20&query=${encodeURIComponent(query)}`)).items.length;
    for (let i = 0; i < 200; i++) await get("transcript_first_page", `/sessions/${longId}/messages?limit=100`);
    // The first call also reads the database sizes (a page walk, then reused for a minute): reported apart.
    await get("stats_usage_first_call", `/stats/usage?since=${clock - 30 * 86_400}`);
    for (let i = 0; i < 50; i++) await get("stats_usage", `/stats/usage?since=${clock - 30 * 86_400}`);
    const page = (await get("", "/sessions?limit=100&include_children=true&order=started")).items as Array<{ id: string }>;
    for (let i = 0; i < 200; i++) await get("lineage", `/sessions/${encodeURIComponent(page[i % page.length]!.id)}/lineage`);
    const out: Record<string, unknown> = { system: `threadline ${db.capabilities.backend} http`, dataset: size, searchHits: hits };
    for (const [name, values] of timings) {
      out[name] = { calls: values.length, p50_ms: round(nearestRank(values, 50)), p99_ms: round(nearestRank(values, 99)) };
    }
    return out;
  } finally {
    await app.close();
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
