/**
 * Where a gateway turn's SQLite time goes under concurrency: starts a real gateway in this
 * process (`startGateway` from `dist/`, default config: echo agent, SQLite file in a temp dir,
 * `storage.synchronous` FULL), wraps better-sqlite3's `Statement.run/get/all/iterate` to time
 * every statement, runs C closed-loop conversations of T turns over loopback HTTP once untimed
 * (warm-up, new sessions) and once timed (a second set of conversations), and prints the time per
 * turn by statement and the distribution of `COMMIT` times (a checkpoint or flush on the event
 * loop shows as a slow `COMMIT`).
 *
 *     npm run build && npx tsx bench/gateway/statement-times.ts [C=100] [T=10]
 *
 * Bench only: nothing of this runs in `serve`.
 *
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const conversations = Number(process.argv[2] ?? 100);
const turnsEach = Number(process.argv[3] ?? 10);
if (!Number.isInteger(conversations) || conversations < 1 || !Number.isInteger(turnsEach) || turnsEach < 1) {
  process.stderr.write("usage: npx tsx bench/gateway/statement-times.ts [conversations ≥ 1] [turns ≥ 1]\n");
  process.exit(2);
}

/** Per statement text: how many ran and their total microseconds; and every COMMIT's time. */
const bySql = new Map<string, { count: number; micros: number }>();
const commits: number[] = [];
let timing = false;

const require = createRequire(join(PROJECT_ROOT, "package.json"));
const Database = require("better-sqlite3") as new (path: string) => { prepare(sql: string): object; close(): void };
const scratch = new Database(":memory:");
const Statement = scratch.prepare("SELECT 1").constructor as { prototype: Record<string, unknown> };
scratch.close();
for (const method of ["run", "get", "all", "iterate"]) {
  const original = Statement.prototype[method] as (...a: unknown[]) => unknown;
  Statement.prototype[method] = function (this: { source: string }, ...a: unknown[]) {
    if (!timing) return original.apply(this, a);
    const start = process.hrtime.bigint();
    try {
      return original.apply(this, a);
    } finally {
      const micros = Number(process.hrtime.bigint() - start) / 1000;
      const sql = this.source.replace(/\s+/g, " ").trim().slice(0, 100);
      const entry = bySql.get(sql) ?? { count: 0, micros: 0 };
      entry.count++;
      entry.micros += micros;
      bySql.set(sql, entry);
      if (sql === "COMMIT") commits.push(micros);
    }
  };
}

const serve = (await import(pathToFileURL(join(PROJECT_ROOT, "dist/serve/index.js")).href)) as typeof import("../../src/serve/index.js");
const { pino } = await import("pino");
const home = await mkdtemp(join(tmpdir(), "threadline-bench-statement-times-"));
const doc = { gateway: { host: "127.0.0.1", port: 0 }, storage: { synchronous: "FULL" } };
const env: NodeJS.ProcessEnv = { THREADLINE_HOME: home, PATH: process.env["PATH"] ?? "" };
const gateway = await serve.startGateway({
  config: serve.parseServeConfig(doc, { env }),
  database: join(home, "state.db"),
  logger: pino({ level: "silent" }),
  env,
});

async function conversation(name: string): Promise<void> {
  for (let k = 0; k < turnsEach; k++) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-threadline-session-key": name },
      body: JSON.stringify({ model: "threadline", messages: [{ role: "user", content: `turn ${k} of ${name}: please repeat this line` }] }),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${name} turn ${k}: HTTP ${response.status} ${text.slice(0, 200)}`);
  }
}

try {
  await Promise.all(Array.from({ length: conversations }, (_, i) => conversation(`warm-${i}`)));
  timing = true;
  const start = performance.now();
  await Promise.all(Array.from({ length: conversations }, (_, i) => conversation(`timed-${i}`)));
  timing = false;
  const seconds = (performance.now() - start) / 1000;
  const turns = conversations * turnsEach;
  let total = 0;
  for (const { micros } of bySql.values()) total += micros;
  commits.sort((a, b) => a - b);
  const q = (f: number): string => (commits[Math.floor(f * (commits.length - 1))] ?? 0).toFixed(0);
  const slow = commits.filter((c) => c > 1000);
  const out = process.stdout;
  out.write(`${turns} turns (C = ${conversations} × ${turnsEach}) in ${seconds.toFixed(2)} s; SQLite statements ${(total / turns).toFixed(0)} µs per turn\n`);
  out.write(
    `COMMIT: ${(commits.length / turns).toFixed(2)} per turn, p50 ${q(0.5)} / p90 ${q(0.9)} / p99 ${q(0.99)} / max ${q(1)} µs; ` +
      `${slow.length} over 1 ms, ${(slow.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} ms in all\n`,
  );
  out.write("µs per turn   runs per turn   µs each   statement\n");
  for (const [sql, { count, micros }] of [...bySql].sort((a, b) => b[1].micros - a[1].micros).slice(0, 20)) {
    out.write(
      `${(micros / turns).toFixed(1).padStart(11)}   ${(count / turns).toFixed(2).padStart(13)}   ${(micros / count).toFixed(1).padStart(7)}   ${sql}\n`,
    );
  }
} finally {
  await gateway.stop();
  await rm(home, { recursive: true, force: true });
}
