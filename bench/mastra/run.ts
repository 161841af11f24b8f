/**
 * Threadline's SQLite store against Mastra's `LibSQLStore` (`@mastra/libsql`), side by side in
 * one run on one machine:
 *
 *     npm run bench:mastra -- [--threads 100] [--messages 50] [--users 10] [--rounds 2]
 *     npm run bench:mastra -- --dataset medium [--rounds 2]
 *     (and --mastra-version X to pin another version than npm's `latest`)
 *
 * Installs `@mastra/libsql` (npm adds its peer `@mastra/core`) into a temp dir with
 * `npm install --prefix` — never a dependency of ours — and loads it from there. Both stores
 * run on local files in that dir with `synchronous=NORMAL` (Mastra sets it; ours is opened
 * with it), in turns: ours, theirs, ours, theirs, … Each side: ingest (one durable save call
 * per message, threads created as they come), transcript reads (200 whole threads picked
 * evenly) and listing by user (200 calls, the newest 20 threads of a user). Prints one JSON
 * object (medians per side, ratios ours/theirs, the targets) on stdout, progress on
 * stderr, and removes the temp dir. Exits 2 if the package cannot be installed.
 *
 * @module
 */
import { cpus, totalmem } from "node:os";
import { statSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { ensureDataset } from "../dataset.js";
import { log } from "../log.js";
import { percentiles } from "../percentile.js";
import { evenPositions, timed } from "../timing.js";
import { InstallError, installMastra } from "./install.js";
import type { MastraInstall } from "./install.js";
import { LIST_PAGE, openMastra, openThreadline } from "./stores.js";
import type { StoreUnderTest } from "./stores.js";
import { datasetWorkload, syntheticWorkload } from "./workload.js";
import type { Workload } from "./workload.js";

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const USAGE = "usage: npm run bench:mastra -- [--threads N] [--messages N] [--users N] [--dataset small|medium|large|N] [--rounds N] [--mastra-version V]";

class UsageError extends Error {}

interface Options {
  threads: number;
  messages: number;
  users: number;
  dataset: string | undefined;
  rounds: number;
  mastraVersion: string;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { threads: 100, messages: 50, users: 10, dataset: undefined, rounds: 2, mastraVersion: "latest" };
  const positive = (name: string, value: string | undefined): number => {
    if (value === undefined || !/^[1-9][0-9]*$/.test(value)) throw new UsageError(`${name} needs a positive integer`);
    return Number(value);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    if (name === "--threads") options.threads = positive(name, value());
    else if (name === "--messages") options.messages = positive(name, value());
    else if (name === "--users") options.users = positive(name, value());
    else if (name === "--rounds") options.rounds = positive(name, value());
    else if (name === "--dataset") {
      const size = value();
      if (size === undefined || !/^(small|medium|large|[1-9][0-9]*)$/.test(size))
        throw new UsageError("--dataset needs small, medium, large or a session count");
      options.dataset = size;
    } else if (name === "--mastra-version") {
      const version = value();
      if (version === undefined || !/^[A-Za-z0-9.+-]+$/.test(version)) throw new UsageError("--mastra-version needs a version or dist-tag");
      options.mastraVersion = version;
    } else throw new UsageError(`unknown argument ${arg}`);
  }
  return options;
}

/** One side's figures in one round. */
type Figures = Record<string, number>;

/** Ingest, transcript reads and listing by user on a freshly opened store; closes it. */
async function runSide(store: StoreUnderTest, work: Workload, label: string, dbPath: string): Promise<Figures> {
  try {
    const start = performance.now();
    for (const thread of work.threads) {
      await store.createThread(thread);
      for (let m = 0; m < thread.messages.length; m++) await store.saveMessage(thread, thread.messages[m]!, m);
    }
    const ingestSeconds = (performance.now() - start) / 1000;
    const sizeBytes = fileSize(dbPath) + fileSize(`${dbPath}-wal`);
    log(`${label}: ingest ${work.messages} messages in ${ingestSeconds.toFixed(2)} s (${(work.messages / ingestSeconds).toFixed(0)} msg/s)`);

    const transcript: number[] = [];
    for (const pos of evenPositions(work.threads.length)) {
      const thread = work.threads[pos]!;
      const { ms, value } = await timed(() => store.readTranscript(thread.id));
      transcript.push(ms);
      if (value !== thread.messages.length) {
        throw new Error(`${label}: the transcript of ${thread.id} has ${value} messages, expected ${thread.messages.length}`);
      }
    }
    const perUser = new Map<string, number>();
    for (const thread of work.threads) perUser.set(thread.userId, (perUser.get(thread.userId) ?? 0) + 1);
    const listing: number[] = [];
    for (const pos of evenPositions(work.users.length)) {
      const user = work.users[pos]!;
      const { ms, value } = await timed(() => store.listByUser(user));
      listing.push(ms);
      const expected = Math.min(LIST_PAGE, perUser.get(user) ?? 0);
      if (value !== expected) throw new Error(`${label}: listing ${user} gave ${value} threads, expected ${expected}`);
    }
    const t = percentiles(transcript);
    const l = percentiles(listing);
    log(`${label}: transcript p50 ${t.p50.toFixed(3)} / p99 ${t.p99.toFixed(3)} ms; list by user p50 ${l.p50.toFixed(3)} / p99 ${l.p99.toFixed(3)} ms`);
    return {
      ingest_seconds: round(ingestSeconds),
      ingest_msg_per_s: round(work.messages / ingestSeconds),
      transcript_p50_ms: round(t.p50),
      transcript_p99_ms: round(t.p99),
      list_by_user_p50_ms: round(l.p50),
      list_by_user_p99_ms: round(l.p99),
      size_bytes: sizeBytes,
    };
  } finally {
    await store.close();
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function removeDb(path: string): void {
  for (const p of [path, `${path}-wal`, `${path}-shm`]) rmSync(p, { force: true });
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function medians(runs: Figures[]): Figures {
  return Object.fromEntries(Object.keys(runs[0]!).map((key) => [key, round(median(runs.map((r) => r[key]!)))]));
}

async function loadWorkload(options: Options): Promise<Workload> {
  if (options.dataset === undefined) return syntheticWorkload(options.threads, options.messages, options.users);
  const data = await ensureDataset(projectRoot, options.dataset);
  return datasetWorkload(data.jsonlPath, options.dataset);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const work = await loadWorkload(options);
  log(`workload ${work.name}: ${work.threads.length} threads, ${work.messages} messages, ${work.users.length} users`);
  let mastra: MastraInstall;
  try {
    mastra = await installMastra(options.mastraVersion, log);
  } catch (error) {
    if (error instanceof InstallError) {
      process.stderr.write(
        `bench:mastra: could not install @mastra/libsql into a temp dir, so there is nothing to compare against.\n` +
          `${error.message}\nThe benchmark needs the npm registry (npm install --prefix <tmp>); check the network or npm's registry setting and run it again.\n`,
      );
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  try {
    log(
      `installed @mastra/libsql ${mastra.versions["@mastra/libsql"]}, @mastra/core ${mastra.versions["@mastra/core"]}, @libsql/client ${mastra.versions["@libsql/client"]}`,
    );
    const ours: Figures[] = [];
    const theirs: Figures[] = [];
    for (let r = 1; r <= options.rounds; r++) {
      const oursPath = join(mastra.dir, `threadline-${r}.db`);
      const theirsPath = join(mastra.dir, `mastra-${r}.db`);
      try {
        log(`round ${r}/${options.rounds}: threadline`);
        ours.push(await runSide(await openThreadline(oursPath), work, `threadline r${r}`, oursPath));
        log(`round ${r}/${options.rounds}: mastra`);
        theirs.push(await runSide(await openMastra(mastra.module, theirsPath), work, `mastra r${r}`, theirsPath));
      } finally {
        removeDb(oursPath);
        removeDb(theirsPath);
      }
    }
    const o = medians(ours);
    const t = medians(theirs);
    const ratio = Object.fromEntries(Object.keys(o).map((key) => [key, t[key] ? round(o[key]! / t[key]!) : null])) as Record<string, number | null>;
    const target = (name: string, value: number | null, pass: boolean): Record<string, unknown> => ({ target: name, ratio: value, pass });
    const report = {
      benchmark: "threadline vs @mastra/libsql LibSQLStore",
      workload: {
        name: work.name,
        threads: work.threads.length,
        messages: work.messages,
        users: work.users.length,
        list_page: LIST_PAGE,
        transcript_reads: 200,
        list_calls: 200,
      },
      synchronous: "NORMAL",
      rounds: options.rounds,
      order: "threadline, mastra, threadline, mastra, …",
      machine: {
        cpus: cpus().length,
        cpu: cpus()[0]?.model ?? "unknown",
        memory_gib: round(totalmem() / 2 ** 30),
        node: process.version,
        platform: process.platform,
      },
      versions: { threadline: (JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as { version: string }).version, ...mastra.versions },
      threadline: o,
      mastra: t,
      ratio,
      targets: {
        ingest: target("threadline ≥ 2× mastra msg/s", ratio["ingest_msg_per_s"] ?? null, (ratio["ingest_msg_per_s"] ?? 0) >= 2),
        transcript_p99: target("threadline ≤ 0.25× mastra", ratio["transcript_p99_ms"] ?? null, (ratio["transcript_p99_ms"] ?? Infinity) <= 0.25),
        list_by_user_p99: target("threadline ≤ 0.25× mastra", ratio["list_by_user_p99_ms"] ?? null, (ratio["list_by_user_p99_ms"] ?? Infinity) <= 0.25),
      },
      runs: { threadline: ours, mastra: theirs },
    };
    for (const key of Object.keys(o)) {
      process.stderr.write(
        `[bench:mastra] ${key.padEnd(22)} threadline ${String(o[key]).padStart(12)}  mastra ${String(t[key]).padStart(12)}  ×${ratio[key]}\n`,
      );
    }
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    mastra.remove();
    log(`removed ${mastra.dir}`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`bench:mastra: ${error.message}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`bench:mastra failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
