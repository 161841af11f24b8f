/**
 * `npm run bench:media [-- --messages N] [--size BYTES] [--per-session N] [--postgres URL | --no-postgres] [--keep]`:
 * issue 30's media benchmark. Not a timed test.
 *
 * On SQLite (a fresh file in a temp dir, `synchronous` FULL, the default) and on PostgreSQL (a
 * fresh schema of postgres://127.0.0.1:5432/test or the URL given, dropped afterwards unless
 * `--keep`; skipped with a message when the server does not answer):
 * - **ingest**: `--messages` (1,000) image messages of `--size` bytes (204,800), each stored as
 *   the gateway stores it: `putMedia`, then `appendTurn` with the user message (caption +
 *   attachment part) and the reply; 20 messages a session. Bytes: a real JPEG/PNG header and
 *   incompressible keystream. Figures: MB/s of image bytes over the store calls' time, and
 *   putMedia's share;
 * - **size** on disk against the raw image bytes (SQLite: main file + WAL; PostgreSQL:
 *   `pg_total_relation_size` of `media` + `media_chunks`, and of `message_attachments`);
 * - **context with 4 images**: the newest session's context built with its 4 newest images as
 *   data URLs, 50 times (p50/p99 ms): through `attachmentsForModel` when this build has the
 *   model branch's context builder, else the 4 blobs read and turned into data URLs (the report
 *   says which);
 * - **export**: every session with its media inline as `threadline sessions export` writes it,
 *   in a child process (its own peak memory: `maxRSS`), MB/s of the file written; also
 *   `--media-dir` (the sidecar folder) on SQLite.
 *
 * And the alternative the issue asks about, on SQLite only: the same blobs as files under a
 * folder with only the hash in a table (bench/media/files-store.ts), against the store's table
 * of chunks, `putMedia` alone on both: throughput, size on disk, reading 4 blobs.
 *
 * One JSON object on stdout; a table on stderr.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";
import { log } from "../log.js";
import { nearestRank } from "../percentile.js";
import { FilesMediaStore } from "./files-store.js";
import { buildContext, imageBytes, ingestImages, loadContextBuilder } from "./workload.js";

const USAGE = "usage: npm run bench:media [-- --messages N] [--size BYTES] [--per-session N] [--postgres URL | --no-postgres] [--keep]";
const DEFAULT_POSTGRES = "postgres://127.0.0.1:5432/test";
const EXPORT_CHILD = fileURLToPath(new URL("./export-child.ts", import.meta.url));
const CONTEXT_RUNS = 50;
const MB = 1_000_000;

interface Args {
  messages: number;
  size: number;
  perSession: number;
  postgres: string | null;
  keep: boolean;
}

function usageError(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function whole(option: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min || n > max)
    usageError(`${option} takes a whole number from ${min} to ${max} (got ${value ?? "nothing"})`);
  return n;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { messages: 1000, size: 204_800, perSession: 20, postgres: DEFAULT_POSTGRES, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--messages") args.messages = whole(arg, argv[++i], 1, 1_000_000);
    else if (arg === "--size") args.size = whole(arg, argv[++i], 64, 20_971_520);
    else if (arg === "--per-session") args.perSession = whole(arg, argv[++i], 1, 100_000);
    else if (arg === "--postgres") {
      const url = argv[++i];
      if (url === undefined || !/^postgres(ql)?:\/\//u.test(url)) usageError("--postgres takes a postgres:// URL");
      args.postgres = url;
    } else if (arg === "--no-postgres") args.postgres = null;
    else if (arg === "--keep") args.keep = true;
    else usageError(`unknown argument ${arg}`);
  }
  return args;
}

const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Runs the export child; its JSON line. */
async function exportInChild(target: string, out: string, mode: string): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ["--import", "tsx", EXPORT_CHILD, target, out, mode], { stdio: ["ignore", "pipe", "inherit"] });
  let text = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    text += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`the export child exited ${code}`);
  const r = JSON.parse(text.trim()) as Record<string, number>;
  return {
    seconds: round(r["seconds"]!, 3),
    bytes: r["bytes"]!,
    lines: r["lines"]!,
    mb_per_sec: round(r["bytes"]! / MB / r["seconds"]!),
    rss_open_mb: round(r["rss_open_bytes"]! / MB),
    max_rss_mb: round(r["max_rss_bytes"]! / MB),
  };
}

/** Context builds with 4 images: p50/p99 ms. */
async function timeContext(db: SessionDB, newest: Awaited<ReturnType<typeof ingestImages>>["newest"]) {
  const builder = await loadContextBuilder();
  const ms: number[] = [];
  let chars = 0;
  for (let i = 0; i < CONTEXT_RUNS; i++) {
    const t0 = performance.now();
    chars = await buildContext(db, builder, newest);
    ms.push(performance.now() - t0);
  }
  return {
    how:
      builder === null
        ? "4 blobs read (readMedia) + base64 data URLs: this build has no context builder (src/context/model-attachments.ts)"
        : "getConversation + attachmentsForModel (maxImages 4)",
    runs: CONTEXT_RUNS,
    p50_ms: round(nearestRank(ms, 50), 2),
    p99_ms: round(nearestRank(ms, 99), 2),
    data_url_chars: chars,
  };
}

function ingestFigures(r: Awaited<ReturnType<typeof ingestImages>>) {
  return {
    messages: r.messages,
    sessions: r.sessions,
    raw_mb: round(r.rawBytes / MB),
    store_seconds: round(r.storeSeconds, 3),
    mb_per_sec: round(r.rawBytes / MB / r.storeSeconds),
    messages_per_sec: round(r.messages / r.storeSeconds),
    put_media_share: round(r.putSeconds / r.storeSeconds, 2),
  };
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

async function sqliteRun(args: Args, dir: string) {
  const path = join(dir, "media.db");
  const db = await openSessionDB(path);
  let ingest: Awaited<ReturnType<typeof ingestImages>>;
  let context: Awaited<ReturnType<typeof timeContext>>;
  try {
    log(`sqlite: ingesting ${args.messages} image messages of ${args.size} bytes`);
    ingest = await ingestImages(db, args);
    context = await timeContext(db, ingest.newest);
  } finally {
    await db.close();
  }
  const disk = fileBytes(path) + fileBytes(`${path}-wal`);
  log("sqlite: export (inline, then --media-dir) in a child process");
  const inline = await exportInChild(path, join(dir, "inline.jsonl"), "inline");
  const sidecar = await exportInChild(path, join(dir, "sidecar.jsonl"), `dir:${join(dir, "sidecar")}`);
  return {
    ingest: ingestFigures(ingest),
    size: { database_mb: round(disk / MB), raw_mb: round(ingest.rawBytes / MB), ratio: round(disk / ingest.rawBytes, 3) },
    context,
    export: { inline, media_dir: sidecar },
  };
}

/** The alternative: putMedia alone into the store's table against files + a hash table. */
async function alternativeRun(args: Args, dir: string) {
  const n = args.messages;
  const tablePath = join(dir, "table-only.db");
  const db = await openSessionDB(tablePath);
  let tableSeconds = 0;
  const hashes: string[] = [];
  let readTable: number[] = [];
  try {
    log(`sqlite alternative: ${n} putMedia into the table`);
    for (let i = 0; i < n; i++) {
      const { bytes, mimeType } = imageBytes(i, args.size);
      const t0 = performance.now();
      hashes.push((await db.putMedia({ bytes }, { mimeType })).sha256);
      tableSeconds += (performance.now() - t0) / 1000;
    }
    readTable = await timeReads((sha) => db.readMedia(sha), hashes);
  } finally {
    await db.close();
  }
  const filesDb = join(dir, "files-only.db");
  const store = new FilesMediaStore(filesDb, join(dir, "files"));
  let filesSeconds = 0;
  let readFiles: number[] = [];
  let disk: { files: number; database: number };
  try {
    log(`sqlite alternative: ${n} blobs as files + hash rows`);
    for (let i = 0; i < n; i++) {
      const { bytes, mimeType } = imageBytes(i, args.size);
      const t0 = performance.now();
      store.put(bytes, mimeType);
      filesSeconds += (performance.now() - t0) / 1000;
    }
    readFiles = await timeReads(async (sha) => store.read(sha), hashes);
    disk = store.diskBytes(filesDb);
  } finally {
    store.close();
  }
  const raw = n * args.size;
  const tableDisk = fileBytes(tablePath) + fileBytes(`${tablePath}-wal`);
  return {
    blobs: n,
    table: {
      mb_per_sec: round(raw / MB / tableSeconds),
      disk_mb: round(tableDisk / MB),
      ratio: round(tableDisk / raw, 3),
      read4_p50_ms: round(nearestRank(readTable, 50), 2),
      read4_p99_ms: round(nearestRank(readTable, 99), 2),
    },
    files: {
      mb_per_sec: round(raw / MB / filesSeconds),
      disk_mb: round((disk.files + disk.database) / MB),
      ratio: round((disk.files + disk.database) / raw, 3),
      read4_p50_ms: round(nearestRank(readFiles, 50), 2),
      read4_p99_ms: round(nearestRank(readFiles, 99), 2),
    },
  };
}

/** Reads of the 4 newest blobs (as a context build would), 50 times: ms each. */
async function timeReads(read: (sha256: string) => Promise<Uint8Array | null>, hashes: string[]): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < CONTEXT_RUNS; i++) {
    const t0 = performance.now();
    for (const sha of hashes.slice(-4)) if ((await read(sha)) === null) throw new Error(`${sha} not stored`);
    ms.push(performance.now() - t0);
  }
  return ms;
}

async function postgresRun(args: Args, dir: string) {
  const url = args.postgres!;
  const admin = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    return {
      skipped: `PostgreSQL at ${url.replace(/:[^:@/]*@/u, ":***@")} did not answer (${(error as Error).message}); pass --postgres URL or --no-postgres`,
    };
  }
  const schema = `bench_media_${process.pid}_${Date.now().toString(36)}`;
  const target = `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;
  try {
    const db = await openSessionDB(target);
    let ingest: Awaited<ReturnType<typeof ingestImages>>;
    let context: Awaited<ReturnType<typeof timeContext>>;
    try {
      log(`postgres: ingesting ${args.messages} image messages of ${args.size} bytes (schema ${schema})`);
      ingest = await ingestImages(db, args);
      context = await timeContext(db, ingest.newest);
    } finally {
      await db.close();
    }
    const sizeOf = async (table: string): Promise<number> =>
      Number(
        (await admin.query<{ bytes: string }>("SELECT coalesce(pg_total_relation_size(to_regclass($1)), 0)::bigint AS bytes", [`"${schema}".${table}`]))
          .rows[0]!.bytes,
      );
    const media = (await sizeOf("media")) + (await sizeOf("media_chunks"));
    const references = await sizeOf("message_attachments");
    log("postgres: export (inline) in a child process");
    const inline = await exportInChild(target, join(dir, "pg-inline.jsonl"), "inline");
    return {
      ingest: ingestFigures(ingest),
      size: {
        media_tables_mb: round(media / MB),
        message_attachments_mb: round(references / MB),
        raw_mb: round(ingest.rawBytes / MB),
        ratio: round(media / ingest.rawBytes, 3),
      },
      context,
      export: { inline },
    };
  } finally {
    if (!args.keep) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    else log(`kept schema ${schema}`);
    await admin.end();
  }
}

function table(report: Record<string, unknown>): string {
  const rows: string[] = [];
  const line = (label: string, value: string) => rows.push(`${label.padEnd(34)} ${value}`);
  for (const backend of ["sqlite", "postgres"] as const) {
    const r = report[backend] as Record<string, Record<string, unknown>> & { skipped?: string };
    if (r === undefined) continue;
    if (typeof r.skipped === "string") {
      line(`${backend}`, `skipped: ${r.skipped}`);
      continue;
    }
    line(
      `${backend} ingest`,
      `${r["ingest"]!["mb_per_sec"]} MB/s (${r["ingest"]!["messages_per_sec"]} msg/s, putMedia ${Math.round(Number(r["ingest"]!["put_media_share"]) * 100)} %)`,
    );
    line(`${backend} size / raw`, `${JSON.stringify(r["size"])}`);
    line(`${backend} context, 4 images`, `p50 ${r["context"]!["p50_ms"]} ms, p99 ${r["context"]!["p99_ms"]} ms`);
    for (const [mode, e] of Object.entries(r["export"]!) as Array<[string, Record<string, number>]>) {
      line(`${backend} export ${mode}`, `${e["mb_per_sec"]} MB/s, ${e["seconds"]} s, peak RSS ${e["max_rss_mb"]} MB (${e["rss_open_mb"]} MB after opening)`);
    }
  }
  const alt = report["sqlite_alternative"] as Record<string, Record<string, number>> | undefined;
  if (alt !== undefined) {
    for (const kind of ["table", "files"] as const) {
      const a = alt[kind]!;
      line(`sqlite putMedia, ${kind}`, `${a["mb_per_sec"]} MB/s, disk ${a["disk_mb"]} MB (x${a["ratio"]}), read 4 p50 ${a["read4_p50_ms"]} ms`);
    }
  }
  return rows.join("\n");
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), "threadline-bench-media-"));
  const loadBefore = loadavg().map((l) => round(l, 2));
  try {
    const sqlite = await sqliteRun(args, dir);
    const alternative = await alternativeRun(args, dir);
    const postgres = args.postgres === null ? { skipped: "--no-postgres" } : await postgresRun(args, dir);
    const report = {
      bench: "media",
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model ?? "unknown",
        memory_bytes: totalmem(),
        platform: `${platform()} ${release()}`,
        node: process.version,
        load_average_before: loadBefore,
        load_average_after: loadavg().map((l) => round(l, 2)),
      },
      setup: {
        messages: args.messages,
        size: args.size,
        per_session: args.perSession,
        postgres: args.postgres === null ? null : args.postgres.replace(/:[^:@/]*@/u, ":***@"),
      },
      sqlite,
      sqlite_alternative: alternative,
      postgres,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.stderr.write(`${table(report)}\n`);
  } finally {
    if (args.keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
