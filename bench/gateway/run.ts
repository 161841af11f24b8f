/**
 * `npm run bench:gateway [-- --quick] [--keep] [--platform api-server|telegram]`: the running gateway under load.
 *
 * Starts `node dist/cli/main.js serve` (api-server adapter, echo agent, SQLite in a temp
 * dir) as a child process and drives it from a second child process (driver.ts) over
 * loopback keep-alive HTTP:
 *
 * 1. C = 1, 10, 100 concurrent conversations of 20 turns each (closed loop): turns/s and
 *    the gateway's own overhead per turn, p50/p99 = request in → reply out inside the
 *    gateway minus the agent's time, both measured in the gateway by probe.mjs;
 * 2. bursts of 5 messages into one busy session: every reply answers its own message and
 *    the transcript holds them in send order;
 * 3. on a fresh gateway: VmRSS before and after 10,000 distinct sessions each send one
 *    message (concurrency 50);
 * 4. streaming (ttft.ts): a gateway in front of a fake provider that streams word by word:
 *    time to first token through the gateway (`stream: true`) against the provider's own.
 *
 * `--platform telegram`: phase 1 only, through the Telegram adapter: the gateway polls the
 * fake Bot API of the tests (test/fakes/telegram), which runs inside the driver; a turn is
 * an update pushed into the fake → the bot's sendMessage for it reaching the fake. The
 * overhead is then the driver's view minus the agent's time (no "after read").
 *
 * `--model-delay-ms MS` (model-delay.ts), alone: the gateway in front of a fake provider that
 * answers after MS ms, C concurrent conversations (`--conversations`, 1,000 by default) of
 * `--turns` turns (3), no new turn after `--max-seconds` (120): turns/s, latency minus the
 * delay, CPU per turn, peak RSS, open connections, queue depth and running turns.
 *
 * `--statements` (statements.ts), alone: the SQLite statements and transactions of each of
 * `--turns` turns (3) of a gateway started in this process, by table and store call.
 *
 * `--db postgres://… --replicas 1,2` (replicas.ts), alone: N `threadline serve` replicas on one
 * PostgreSQL database (a fresh schema per run), C conversations (`--conversations`, 100 by
 * default) of `--turns` turns (20) shared out over them (`--spread sticky`, the default, or
 * `round-robin` per turn), the echo agent or `--model-delay-ms`: turns/s, latency, CPU per turn
 * per replica and of PostgreSQL, commits, WAL flushes and wait events per turn.
 * `--during-prune` (during-prune.ts), alone: per `--conversations` level (10 by default), a gateway
 * whose file holds prunable history; C conversations for `--window-ms` (5,000) alone, then the same
 * while `threadline sessions prune` (dist/, its own process) runs on the file: latency p50/p99 of
 * both, and of the turns in flight while the prune ran.
 *
 * `--quick`: C = 1, 10 and 1,000 sessions. Prints one JSON object on stdout; progress
 * and a summary table go to stderr. Needs `npm run build` first (it drives dist/).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { log } from "../log.js";
import { startDriver, type DriverHandle } from "./driver-child.js";
import { GATEWAY_BIN, PROJECT_ROOT, startGatewayChild, waitUntilIdle, type GatewayChild, type TelegramTarget } from "./gateway-child.js";
import { checkBursts, runConversations, runSessionsRss, sendBursts, type BurstReport, type ConversationsReport, type SessionsRssReport } from "./phases.js";
import type { BenchPlatform } from "./protocol.js";
import { mb } from "./stats.js";
import { PROVIDER_KEEP_ALIVE_MS, runModelDelay, SAMPLE_EVERY_MS, type ModelDelayReport } from "./model-delay.js";
import type { ReplicaSpread } from "./protocol.js";
import { formatReplicas, runReplicas, WAIT_SAMPLE_MS, type ReplicasReport } from "./replicas.js";
import { countTurnStatements, formatStatements } from "./statements.js";
import { DEFAULT_HISTORY, formatDuringPrune, runDuringPrune, type DuringPruneReport } from "./during-prune.js";
import { runStreaming, startProviderChild, type ProviderChild, type ProviderPacing, type StreamingReport } from "./ttft.js";

const USAGE =
  "usage: npm run bench:gateway [-- --quick] [--streaming-only] [--keep] [--cpu-prof DIR] [--synchronous FULL|NORMAL] [--platform api-server|telegram]\n" +
  "       npm run bench:gateway -- --conversations-only [--turns T] [--cpu-prof DIR] [--synchronous FULL|NORMAL] [--platform api-server|telegram]\n" +
  "       npm run bench:gateway -- --model-delay-ms MS [--conversations C[,C…]] [--turns T] [--max-seconds S] [--provider-keep-alive-ms MS] [--synchronous FULL|NORMAL] [--keep]\n" +
  "       npm run bench:gateway -- --statements [--turns T] [--synchronous FULL|NORMAL] [--db postgres://…]\n" +
  "       npm run bench:gateway -- --db postgres://… --replicas N[,N…] [--conversations C[,C…]] [--turns T] [--spread sticky|round-robin] [--model-delay-ms MS] [--max-seconds S] [--keep]\n" +
  "       npm run bench:gateway -- --during-prune [--conversations C[,C…]] [--window-ms MS] [--synchronous FULL|NORMAL] [--keep]";
/** The replicas mode's defaults: 100 conversations × 20 turns. */
const REPLICA_CONVERSATIONS = [100];
const REPLICA_TURNS = 20;
/** The model-delay phase's defaults: 1,000 conversations × 3 turns, at most 120 s of new turns. */
const DELAY_CONVERSATIONS = [1_000];
const DELAY_TURNS = 3;
const DELAY_MAX_SECONDS = 120;
const TURNS = 20;
/** The during-prune mode's defaults: C = 10, runs of 5 s. */
const PRUNE_CONVERSATIONS = [10];
const PRUNE_WINDOW_MS = 5_000;
const BURSTS = 10;
const BURST_SIZE = 5;
const BURST_GAP_MS = 1;
const SESSIONS_CONCURRENCY = 50;
const OVERHEAD_P99_TARGET_MS = 5;
const RSS_GROWTH_TARGET_BYTES = 50e6;
const FULL_SESSIONS = 10_000;
/** The streaming phase's provider: first word after 100 ms, then 32 words 10 ms apart. */
const PACING: ProviderPacing = { firstTokenMs: 100, tokenGapMs: 10, words: 32 };

interface Args {
  quick: boolean;
  /** SQLite durability of the gateway's database (storage.synchronous). */
  synchronous: "FULL" | "NORMAL";
  keep: boolean;
  /** Write a V8 CPU profile of the load gateway (conversations and bursts) into this directory. */
  cpuProf: string | null;
  /** Run only the streaming phase (time to first token). */
  streamingOnly: boolean;
  /** The adapter the conversations go through (telegram: conversations only). */
  platform: BenchPlatform;
  /** Run only the model-delay phase, with a provider that answers after this many ms. */
  modelDelayMs: number | null;
  /** Model-delay phase: one run per concurrency, in order. */
  conversations: number[];
  /** Model-delay phase and statement count: turns per conversation (null: the mode's default). */
  turns: number | null;
  /** Model-delay phase: no new turn starts after this many seconds. */
  maxSeconds: number;
  /** Model-delay phase: the fake provider's keep-alive timeout (null: PROVIDER_KEEP_ALIVE_MS). */
  providerKeepAliveMs: number | null;
  /** Run only the statement count (in this process, against a temp SQLite file). */
  statements: boolean;
  /** Run only the conversations phase (C = 1, 10, 100; `--turns` turns each, 20 by default). */
  conversationsOnly: boolean;
  /** Replicas mode: the postgres:// database (`--db`). */
  db: string | null;
  /** Replicas mode: one run per replica count (`--replicas 1,2`); null: not this mode. */
  replicas: number[] | null;
  /** Replicas mode: how conversations are shared out over the replicas. */
  spread: ReplicaSpread;
  /** Run only the during-prune mode (during-prune.ts), at `--conversations` (10 by default). */
  duringPrune: boolean;
  /** During-prune mode: the length of each run, ms. */
  windowMs: number;
  /** `--conversations` was given (the modes have different defaults). */
  conversationsGiven: boolean;
}

function usageError(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function wholeNumber(option: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min || n > max)
    usageError(`${option} takes a whole number from ${min} to ${max} (got ${value ?? "nothing"})`);
  return n;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    quick: false,
    keep: false,
    cpuProf: null,
    synchronous: "FULL",
    streamingOnly: false,
    platform: "api-server",
    modelDelayMs: null,
    conversations: DELAY_CONVERSATIONS,
    turns: null,
    maxSeconds: DELAY_MAX_SECONDS,
    providerKeepAliveMs: null,
    statements: false,
    conversationsOnly: false,
    db: null,
    replicas: null,
    spread: "sticky",
    duringPrune: false,
    windowMs: PRUNE_WINDOW_MS,
    conversationsGiven: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--quick") args.quick = true;
    else if (arg === "--streaming-only") args.streamingOnly = true;
    else if (arg === "--synchronous") {
      const value = argv[++i];
      if (value !== "FULL" && value !== "NORMAL") throw new Error(`--synchronous takes FULL or NORMAL\n${USAGE}`);
      args.synchronous = value;
    } else if (arg === "--platform") {
      const value = argv[++i];
      if (value !== "api-server" && value !== "telegram") {
        process.stderr.write(`--platform takes api-server or telegram\n${USAGE}\n`);
        process.exit(2);
      }
      args.platform = value;
    } else if (arg === "--cpu-prof") {
      const dir = argv[++i];
      if (dir === undefined || dir === "") {
        process.stderr.write(`--cpu-prof needs a directory\n${USAGE}\n`);
        process.exit(2);
      }
      args.cpuProf = resolve(dir);
    } else if (arg === "--model-delay-ms") args.modelDelayMs = wholeNumber(arg, argv[++i], 0, 600_000);
    else if (arg === "--conversations") {
      const value = argv[++i];
      args.conversations = (value ?? "").split(",").map((c) => wholeNumber(arg, c, 1, 10_000));
      args.conversationsGiven = true;
    } else if (arg === "--db") {
      const value = argv[++i];
      if (value === undefined || !/^postgres(ql)?:\/\//iu.test(value)) usageError(`--db takes a postgres:// URL (got ${value ?? "nothing"})`);
      args.db = value;
    } else if (arg === "--replicas") {
      const value = argv[++i];
      args.replicas = (value ?? "").split(",").map((n) => wholeNumber(arg, n, 1, 16));
    } else if (arg === "--spread") {
      const value = argv[++i];
      if (value !== "sticky" && value !== "round-robin") usageError(`--spread takes sticky or round-robin (got ${value ?? "nothing"})`);
      args.spread = value;
    } else if (arg === "--during-prune") args.duringPrune = true;
    else if (arg === "--window-ms") args.windowMs = wholeNumber(arg, argv[++i], 100, 600_000);
    else if (arg === "--turns") args.turns = wholeNumber(arg, argv[++i], 1, 1_000);
    else if (arg === "--max-seconds") args.maxSeconds = wholeNumber(arg, argv[++i], 1, 3_600);
    else if (arg === "--provider-keep-alive-ms") args.providerKeepAliveMs = wholeNumber(arg, argv[++i], 1, 3_600_000);
    else if (arg === "--statements") args.statements = true;
    else if (arg === "--conversations-only") args.conversationsOnly = true;
    else if (arg === "--keep") args.keep = true;
    else if (arg === "--help" || arg === "-h") {
      process.stderr.write(`${USAGE}\n`);
      process.exit(0);
    } else {
      process.stderr.write(`unknown argument ${arg}\n${USAGE}\n`);
      process.exit(2);
    }
  }
  if ((args.db === null) !== (args.replicas === null) && !args.statements) usageError("--db goes with --replicas (the replicas mode) or --statements");
  if (args.replicas !== null) {
    if (
      args.streamingOnly ||
      args.statements ||
      args.conversationsOnly ||
      args.platform !== "api-server" ||
      args.quick ||
      args.cpuProf !== null ||
      args.synchronous !== "FULL"
    ) {
      usageError("--replicas runs alone: it takes --db, --conversations, --turns, --spread, --model-delay-ms, --max-seconds and --keep");
    }
    return args;
  }
  if (args.modelDelayMs !== null && (args.streamingOnly || args.statements || args.platform !== "api-server" || args.quick || args.cpuProf !== null)) {
    usageError("--model-delay-ms runs alone: it takes --conversations, --turns, --max-seconds, --synchronous and --keep");
  }
  if (args.statements && (args.streamingOnly || args.platform !== "api-server" || args.quick || args.cpuProf !== null)) {
    usageError("--statements runs alone: it takes --turns and --synchronous");
  }
  if (
    args.duringPrune &&
    (args.streamingOnly ||
      args.statements ||
      args.modelDelayMs !== null ||
      args.quick ||
      args.conversationsOnly ||
      args.platform !== "api-server" ||
      args.cpuProf !== null)
  ) {
    usageError("--during-prune runs alone: it takes --conversations, --window-ms, --synchronous and --keep");
  }
  if (args.conversationsOnly && (args.streamingOnly || args.statements || args.modelDelayMs !== null || args.quick)) {
    usageError("--conversations-only runs alone: it takes --turns, --cpu-prof, --synchronous and --platform");
  }
  return args;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    newest = Math.max(newest, stat.isDirectory() ? newestMtime(path) : stat.mtimeMs);
  }
  return newest;
}

function checkBuild(): void {
  if (!existsSync(GATEWAY_BIN)) throw new Error(`${GATEWAY_BIN} is missing: run \`npm run build\` first (the benchmark drives dist/)`);
  const src = join(PROJECT_ROOT, "src");
  if (existsSync(src) && newestMtime(src) > statSync(join(PROJECT_ROOT, "dist", "index.js")).mtimeMs) {
    log("warning: src/ has files newer than dist/: the benchmark measures dist/ (run `npm run build` to include them)");
  }
}

interface Target {
  name: string;
  target: string;
  value: number | boolean | null;
  unit: string;
  pass: boolean | null;
  note?: string;
}

/** The database API from the build (the gateway's own code), typed by the sources. */
async function openBuiltDb(path: string): Promise<import("../../src/index.js").SessionDB> {
  const mod = (await import(pathToFileURL(join(PROJECT_ROOT, "dist", "index.js")).href)) as typeof import("../../src/index.js");
  return mod.openSessionDB(path);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  checkBuild();
  const levels = args.quick ? [1, 10] : [1, 10, 100];
  const sessions = args.quick ? 1_000 : FULL_SESSIONS;
  const warmupSessions = args.quick ? 100 : 200;
  if (args.replicas !== null && args.db !== null) {
    await replicasMode(args, args.db, args.replicas);
    return;
  }
  if (args.modelDelayMs !== null) {
    await modelDelayMode(args, args.modelDelayMs);
    return;
  }
  if (args.duringPrune) {
    await duringPruneMode(args);
    return;
  }
  if (args.statements) {
    const report = await countTurnStatements({ turns: args.turns ?? 3, synchronous: args.synchronous, db: args.db });
    process.stdout.write(`${JSON.stringify({ bench: "gateway", phase: "statements", machine: machineInfo(), statements: report })}\n`);
    process.stderr.write(`\n${formatStatements(report)}\n`);
    return;
  }
  if (args.streamingOnly) {
    const gateways: GatewayChild[] = [];
    try {
      const streaming = await streamingPhase(args, gateways);
      process.stdout.write(
        `${JSON.stringify({ bench: "gateway", mode: args.quick ? "quick" : "full", phase: "streaming", machine: machineInfo(), streaming })}\n`,
      );
    } finally {
      for (const g of gateways) {
        await g.stop();
        if (!args.keep) await g.cleanUp();
      }
    }
    return;
  }
  const telegram = args.platform === "telegram";
  const turnsEach = args.conversationsOnly ? (args.turns ?? TURNS) : TURNS;
  const driver: DriverHandle = startDriver();
  const gateways: GatewayChild[] = [];
  try {
    // --- conversations and bursts: one gateway ---------------------------------------
    let target: TelegramTarget | null = null;
    if (telegram) {
      const fake = await driver.run({ kind: "telegram-fake", action: "start" });
      if (fake.kind !== "telegram-fake") throw new Error("driver answered the wrong job");
      target = { apiRoot: fake.apiRoot, token: fake.token };
      log(`platform telegram: the fake Bot API listens on ${fake.apiRoot} inside the driver`);
    }
    const gw = await startGatewayChild("load", args.cpuProf === null ? [] : ["--cpu-prof", "--cpu-prof-dir", args.cpuProf], args.synchronous, {
      telegram: target,
    });
    if (args.cpuProf !== null)
      log(`--cpu-prof: the load gateway writes its profile to ${args.cpuProf} on exit (profiling slows it: these numbers are not the benchmark's)`);
    gateways.push(gw);
    if (gw.agent !== "echo") throw new Error("the gateway did not announce the built-in echo agent");
    log(`driver pid ${driver.pid}; warm-up: one conversation of ${TURNS} turns (not timed)`);
    const warm = await driver.run({ kind: "conversations", platform: args.platform, url: gw.url, concurrency: 1, turns: TURNS, tag: "warmup" });
    if (warm.kind === "conversations" && warm.errors > 0) log(`warm-up: ${warm.errors} errors, e.g. ${warm.errorExamples[0]}`);
    // The start-up's background work (route schemas built after /healthz) is not a turn's.
    const settled = await waitUntilIdle(gw.pid);
    log(`gateway ${settled.idle ? "idle" : "still busy"} after ${settled.waitedMs} ms (${settled.cpuMs} ms CPU meanwhile)`);
    const conversations: ConversationsReport[] = [];
    for (const c of levels) {
      log(`conversations (${args.platform}): C = ${c} × ${turnsEach} turns`);
      const r = await runConversations(gw, driver, c, turnsEach, args.platform);
      const afterRead = r.overhead_after_read === null ? "" : ` (after read: ${r.overhead_after_read.p50_ms} / ${r.overhead_after_read.p99_ms})`;
      log(
        `  ${r.turns_per_sec} turns/s; overhead p50 ${r.overhead.p50_ms} / p99 ${r.overhead.p99_ms} ms${afterRead}; ` +
          `gateway CPU ${r.gateway_cpu_ms_per_turn.total} ms/turn; errors ${r.errors}`,
      );
      if (r.errors > 0) log(`  e.g. ${r.error_examples.join("; ")}`);
      conversations.push(r);
    }
    if (telegram || args.conversationsOnly) {
      const loadExit = await gw.stop();
      if (loadExit !== 0) log(`warning: the gateway exited with ${loadExit} after SIGTERM`);
      if (telegram) {
        const fake = await driver.run({ kind: "telegram-fake", action: "stop" });
        if (fake.kind === "telegram-fake") log(`the fake answered ${fake.getUpdatesCalls} getUpdates calls`);
        log("platform telegram: the burst and RSS phases run on api-server only (not measured)");
      }
      const report = buildReport(args, conversations, null, null, null);
      process.stdout.write(`${JSON.stringify(report)}\n`);
      printTable(report.targets, conversations, null, null);
      return;
    }
    log(`bursts: ${BURSTS} × ${BURST_SIZE} messages into one session each`);
    const sent = await sendBursts(gw, driver, BURSTS, BURST_SIZE, BURST_GAP_MS);
    const loadExit = await gw.stop();
    if (loadExit !== 0) log(`warning: the gateway exited with ${loadExit} after SIGTERM`);
    const db = await openBuiltDb(gw.dbPath);
    let burst: BurstReport;
    try {
      burst = await checkBursts(db, sent.records, sent.seen, BURST_GAP_MS);
    } finally {
      await db.close();
    }
    log(
      `  preserved: ${burst.preserved} (${burst.transcripts_in_send_order}/${burst.bursts} transcripts; ${burst.arrived_while_busy}/${burst.followers} followers arrived while the session was busy)`,
    );

    // --- RSS: a fresh gateway --------------------------------------------------------
    const gw2 = await startGatewayChild("rss", [], args.synchronous);
    gateways.push(gw2);
    log(`sessions: ${warmupSessions} warm-up sessions, then ${sessions} distinct sessions × 1 message, ${SESSIONS_CONCURRENCY} in flight`);
    const rss = await runSessionsRss(gw2, driver, sessions, SESSIONS_CONCURRENCY, warmupSessions);
    await gw2.stop();
    const db2 = await openBuiltDb(gw2.dbPath);
    let storedSessions: number;
    try {
      storedSessions = (await db2.getStats()).totalSessions;
    } finally {
      await db2.close();
    }
    log(
      `  RSS ${mb(rss.rss_before_bytes)} → ${mb(rss.rss_after_bytes)} MB (+${mb(rss.rss_growth_bytes)}), after GC ${mb(rss.rss_after_gc_bytes)} MB; ${storedSessions} sessions stored`,
    );

    const streaming = await streamingPhase(args, gateways);

    const report = { ...buildReport(args, conversations, burst, rss, storedSessions), streaming };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    printTable(report.targets, conversations, burst, rss);
  } finally {
    await driver.stop();
    for (const g of gateways) {
      await g.stop();
      if (args.keep) log(`kept ${g.home}`);
      else await g.cleanUp();
    }
  }
}

/** `--db postgres://… --replicas N,…`: one run per replica count (and C), each on a fresh schema. */
async function replicasMode(args: Args, db: string, replicas: number[]): Promise<void> {
  const driver = startDriver();
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  const turns = args.turns ?? REPLICA_TURNS;
  const conversations = args.conversationsGiven ? args.conversations : REPLICA_CONVERSATIONS;
  let report: ReplicasReport;
  try {
    report = await runReplicas(driver, {
      db,
      replicas,
      conversations,
      turns,
      spread: args.spread,
      modelDelayMs: args.modelDelayMs,
      maxSeconds: args.maxSeconds,
      keep: args.keep,
    });
  } finally {
    await driver.stop();
  }
  const redacted = db.replace(/:\/\/([^:/@]+):[^@]*@/u, "://$1@");
  process.stdout.write(
    `${JSON.stringify({
      bench: "gateway",
      phase: "replicas",
      machine: { ...machineInfo(), load_average_before: loadBefore, load_average_after: loadavg().map((l) => Math.round(l * 100) / 100) },
      setup: {
        gateway:
          "N × node dist/cli/main.js serve --port 0 --db <url>?schema=<run's schema>&application_name=tlbench_r<i> (child processes; THREADLINE_HOME = a temp dir each; gateway.replicaId r<i>; gateway.leases auto = on for PostgreSQL)",
        agent:
          args.modelDelayMs === null
            ? "built-in echo"
            : `the fake OpenAI-compatible provider (echo mode) answering after ${args.modelDelayMs} ms; titles.enabled false, provider.tools off`,
        database: `${redacted}: a fresh schema per run, dropped afterwards${args.keep ? " (kept: --keep)" : ""}`,
        driver: `closed-loop conversations over loopback keep-alive HTTP, its own process; spread ${args.spread} (sticky: conversation c on replica c mod N; round-robin: turn t of conversation c on replica (c + t) mod N)`,
        pg_samplers: `pg_stat_activity every ${WAIT_SAMPLE_MS} ms (the replicas' backends by application_name); pg_stat_database, pg_stat_wal (server-wide: other users count) and the schema's pg_stat_user_tables before and after; PostgreSQL process CPU from /proc`,
        warmup: "one conversation of 5 turns per replica before each run (not counted)",
      },
      ...report,
    })}\n`,
  );
  process.stderr.write(
    `\n${formatReplicas(report, cpus().length)}\nload average now ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}\n`,
  );
}

/** `--during-prune`: per `--conversations` level, the gateway's latency alone and while a prune runs on its file. */
async function duringPruneMode(args: Args): Promise<void> {
  const driver = startDriver();
  const reports: DuringPruneReport[] = [];
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  try {
    for (const conversations of args.conversationsGiven ? args.conversations : PRUNE_CONVERSATIONS) {
      log(`during prune: C = ${conversations}`);
      const r = await runDuringPrune(driver, {
        conversations,
        windowMs: args.windowMs,
        history: DEFAULT_HISTORY,
        synchronous: args.synchronous,
        keep: args.keep,
      });
      reports.push(r);
    }
  } finally {
    await driver.stop();
  }
  process.stdout.write(
    `${JSON.stringify({
      bench: "gateway",
      phase: "during-prune",
      machine: { ...machineInfo(), load_average_before: loadBefore, load_average_after: loadavg().map((l) => Math.round(l * 100) / 100) },
      setup: {
        gateway: "node dist/cli/main.js serve --port 0 (child process; THREADLINE_HOME = a temp dir, default config; echo agent; api-server adapter)",
        history:
          "ended sessions, last active 90 days ago, imported into the gateway's state.db through a second connection (importSessions from dist/) and indexed for search before the runs",
        prune:
          "node dist/cli/main.js sessions prune --older-than 60 --yes --json --db <the gateway's file>, its own process, THREADLINE_HOME = the gateway's (same config), spawned at the start of the second run",
        driver: "C closed-loop conversations over loopback keep-alive HTTP, its own process; both runs last --window-ms (no new turn after it)",
        database: `SQLite state.db (storage.synchronous = ${args.synchronous})`,
      },
      runs: reports,
    })}\n`,
  );
  process.stderr.write(`\n${formatDuringPrune(reports)}\n`);
}

/** `--model-delay-ms`: one run of the model-delay phase per `--conversations` level, on a fresh provider and gateway each. */
async function modelDelayMode(args: Args, delayMs: number): Promise<void> {
  const driver = startDriver();
  const runs: ModelDelayReport[] = [];
  const turns = args.turns ?? DELAY_TURNS;
  // The machine is shared: the 1/5/15-minute load averages before and after say how much.
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  try {
    for (const conversations of args.conversations) {
      log(`model delay ${delayMs} ms: C = ${conversations} conversations × ${turns} turns (no new turn after ${args.maxSeconds} s)`);
      const r = await runModelDelay(
        driver,
        {
          delayMs,
          conversations,
          turns,
          maxSeconds: args.maxSeconds,
          synchronous: args.synchronous,
          ...(args.providerKeepAliveMs === null ? {} : { providerKeepAliveMs: args.providerKeepAliveMs }),
        },
        args.keep,
      );
      log(
        `  ${r.run.turns_per_sec} turns/s; e2e p50 ${r.run.client_latency.p50_ms} / p99 ${r.run.client_latency.p99_ms} ms ` +
          `(minus the delay: ${r.e2e_minus_delay.p50_ms} / ${r.e2e_minus_delay.p99_ms}); errors ${r.run.errors}`,
      );
      if (r.run.errors > 0) log(`  e.g. ${r.run.error_examples.join("; ")}`);
      runs.push(r);
    }
  } finally {
    await driver.stop();
  }
  process.stdout.write(
    `${JSON.stringify({
      bench: "gateway",
      phase: "model-delay",
      machine: { ...machineInfo(), load_average_before: loadBefore, load_average_after: loadavg().map((l) => Math.round(l * 100) / 100) },
      setup: {
        gateway: "node dist/cli/main.js serve --port 0 (child process; THREADLINE_HOME = a temp dir; titles.enabled false, provider.tools off)",
        provider: `the fake OpenAI-compatible server of the tests in its own process on 127.0.0.1 (bench/gateway/provider-child.ts, echo mode): every reply is "Echo: <last user message>", whole after ${delayMs} ms; HTTP keep-alive timeout ${args.providerKeepAliveMs ?? PROVIDER_KEEP_ALIVE_MS} ms`,
        driver: "closed-loop conversations over loopback keep-alive HTTP (one socket per conversation), its own process",
        database: `SQLite state.db in the temp dir (storage.synchronous = ${args.synchronous})`,
        sampler: `every ${SAMPLE_EVERY_MS} ms: gateway VmRSS, established connections in /proc/net/tcp, /metrics gauges`,
      },
      runs,
    })}\n`,
  );
  process.stderr.write(`\n${formatModelDelay(runs)}\n`);
}

function formatModelDelay(runs: readonly ModelDelayReport[]): string {
  const lines = [
    `model delay: ${runs[0]?.model_delay_ms ?? "?"} ms; load average now ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  ];
  for (const r of runs) {
    const p = r.peaks;
    lines.push(
      `C = ${r.conversations}: ${r.run.turns} turns${r.run.cut_short ? " (cut short by --max-seconds)" : ""} in ${r.run.seconds} s = ${r.run.turns_per_sec} turns/s; errors ${r.run.errors}\n` +
        `  e2e p50 / p99 ${r.run.client_latency.p50_ms} / ${r.run.client_latency.p99_ms} ms; minus the delay ${r.e2e_minus_delay.p50_ms} / ${r.e2e_minus_delay.p99_ms} ms; ` +
        `minus the model call measured in the gateway ${r.run.overhead.p50_ms} / ${r.run.overhead.p99_ms} ms (model call ${r.run.agent_time.p50_ms} / ${r.run.agent_time.p99_ms})\n` +
        `  CPU ms/turn: gateway ${r.run.gateway_cpu_ms_per_turn.total} (event loop busy ${Math.round(r.run.gateway_event_loop_utilization * 100)} %), driver ${r.run.driver_cpu_ms_per_turn.total}, provider ${r.provider_cpu_ms_per_turn.total}; ` +
        `store ${r.run.store_ms_per_turn["total"] ?? "?"} ms/turn\n` +
        `  gateway RSS ${mb(r.rss_before_bytes)} → peak ${mb(p.rss_bytes)} MB; peak connections in ${p.open_connections_in}, to the provider ${p.open_connections_to_provider}; ` +
        `peak queue depth ${p.queue_depth}, running turns ${p.active_turns}, live agents ${p.active_sessions} (${p.samples} samples)`,
    );
  }
  return lines.join("\n");
}

/** Phase 4: a gateway in front of a streaming fake provider; TTFT through it against the provider's own. */
async function streamingPhase(args: Args, gateways: GatewayChild[]): Promise<StreamingReport> {
  const provider: ProviderChild = await startProviderChild(PACING);
  try {
    const gw = await startGatewayChild("stream", [], args.synchronous, {
      env: { OPENAI_BASE_URL: provider.url, OPENAI_API_KEY: "bench-key", THREADLINE_MODEL: "bench-model" },
      config: "titles:\n  enabled: false\nprovider:\n  tools: off\n",
    });
    gateways.push(gw);
    if (gw.agent !== "provider") throw new Error("the streaming gateway did not announce the model provider");
    const requests = args.quick ? 20 : 100;
    log(
      `streaming: ${requests} rounds of provider direct / gateway stream / gateway no-stream ` +
        `(first word after ${PACING.firstTokenMs} ms, ${PACING.words} words ${PACING.tokenGapMs} ms apart)`,
    );
    return await runStreaming(provider.url, gw.url, PACING, requests, 5);
  } finally {
    await provider.stop();
  }
}

function machineInfo() {
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? "unknown",
    memory_bytes: totalmem(),
    platform: `${platform()} ${release()}`,
    node: process.version,
  };
}

/** burst, rss and storedSessions are null with `--platform telegram` (those phases run on api-server only). */
function buildReport(
  args: Args,
  conversations: ConversationsReport[],
  burst: BurstReport | null,
  rss: SessionsRssReport | null,
  storedSessions: number | null,
) {
  const c100 = conversations.find((c) => c.concurrency === 100);
  const fullRss = rss?.sessions === FULL_SESSIONS;
  const telegram = args.platform === "telegram";
  const notMeasured = "not measured with --platform telegram (api-server only)";
  const targets: Target[] = [
    {
      name: "overhead_p99_at_c100",
      target: `≤ ${OVERHEAD_P99_TARGET_MS} ms`,
      value: c100?.overhead.p99_ms ?? null,
      unit: "ms",
      pass: c100 === undefined ? null : c100.errors === 0 && c100.overhead.p99_ms <= OVERHEAD_P99_TARGET_MS,
      ...(c100 === undefined ? { note: "quick run: C = 100 not measured" } : {}),
    },
    {
      name: "rss_growth_10k_sessions",
      target: `≤ ${RSS_GROWTH_TARGET_BYTES / 1e6} MB (10^6 bytes) for ${FULL_SESSIONS} sessions`,
      value: rss?.rss_growth_bytes ?? null,
      unit: "bytes",
      pass: rss !== null && fullRss ? rss.errors === 0 && rss.rss_growth_bytes <= RSS_GROWTH_TARGET_BYTES : null,
      ...(rss === null ? { note: notMeasured } : fullRss ? {} : { note: `quick run: ${rss.sessions} sessions, target not evaluated` }),
    },
    {
      name: "burst_order_preserved",
      target: "every burst in send order",
      value: burst?.preserved ?? null,
      unit: "bool",
      pass: burst?.preserved ?? null,
      ...(burst === null ? { note: notMeasured } : {}),
    },
  ];
  const verdicts = targets.map((t) => t.pass);
  const pass = verdicts.includes(false) ? false : verdicts.includes(null) ? null : true;
  return {
    bench: "gateway",
    system: "threadline sqlite",
    mode: args.quick ? "quick" : "full",
    platform: args.platform,
    ...(args.cpuProf === null ? {} : { cpu_profile: args.cpuProf }),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? "unknown",
      memory_bytes: totalmem(),
      platform: `${platform()} ${release()}`,
      node: process.version,
    },
    setup: {
      gateway: telegram
        ? "node dist/cli/main.js serve --port 0 (child process; THREADLINE_HOME = a temp dir; config: adapters.apiServer.enabled false, adapters.telegram.apiRoot = the fake; TELEGRAM_BOT_TOKEN = the fake's token)"
        : "node dist/cli/main.js serve --port 0 (child process; THREADLINE_HOME = a temp dir, default config)",
      adapter: telegram
        ? "telegram (grammY long polling, getUpdates timeout 30 s) against the fake Bot API of the tests (test/fakes/telegram), which runs inside the driver process on 127.0.0.1; each conversation is its own DM chat"
        : "api-server (POST /v1/chat/completions, X-Threadline-Session-Key)",
      agent: "built-in echo (no model provider)",
      database: `SQLite state.db in the temp dir (storage.synchronous = ${args.synchronous})`,
      transport: telegram
        ? "loopback HTTP/1.1: the gateway's grammY client long-polls and calls sendMessage / sendChatAction on the fake; the driver pushes updates into the fake in its own process"
        : "loopback HTTP/1.1, keep-alive (node:http Agent), driver in its own process",
      cores_shared: "gateway and driver share the machine's cores",
      warmup: `one conversation of ${TURNS} turns before the timed phases (not counted), then a wait until the gateway is idle (≤ 10 ms CPU in 300 ms, at most 10 s: the start-up's background work is not a turn's)${rss === null ? "" : `; ${rss.warmup_sessions} sessions before the RSS baseline`}`,
    },
    method: {
      ...(telegram
        ? {
            turn_telegram:
              "one turn = the driver pushes a private-chat update (text `bench:<id> …`) into the fake, which answers the gateway's pending getUpdates long poll; the turn ends when the bot's sendMessage replying to that message (reply_parameters.message_id) reaches the fake. The next message of the conversation is pushed only then (closed loop). turns/s therefore includes the long-poll round trip (grammY receives the batch, confirms it with the next getUpdates offset), grammY's sequential update handling, the Telegram HTML conversion, sendChatAction (typing) and the outbound sendMessage call",
            overhead_telegram:
              "per turn: update pushed → sendMessage received at the fake, minus the agent's time (probe.mjs, as for api-server); there is no inbound HTTP request to time inside the gateway, so overhead_after_read and gateway_time are null",
          }
        : {}),
      overhead:
        "per turn: request in → reply out minus the agent's time. In/out are taken by the driver (request written to the loopback socket → last byte of the reply read), so a request waiting in the socket for the gateway's busy event loop counts (loopback TCP and the client's parse add ~0.1–0.5 ms: slightly pessimistic). The agent's time is measured inside the gateway: bench/gateway/probe.mjs (preloaded with --import) wraps EchoAgent.runTurn with two performance.now() calls; for echo it is ~0, so overhead ≈ latency",
      overhead_after_read:
        "the same from inside the gateway: http.server.request.start (headers parsed) → http.server.response.finish (diagnostics channels, probe.mjs) minus the agent's time; misses the wait before the gateway reads the request",
      percentiles: "nearest rank over every timed turn",
      cpu: "/proc/<pid>/stat utime + stime deltas over the phase, divided by its turns (10 ms ticks)",
      rss: "VmRSS of the gateway from /proc/<pid>/status; baseline after the warm-up and a forced GC (gateway started with --expose-gc); growth = after the last reply (no GC) − baseline",
    },
    conversations,
    burst,
    sessions_rss: rss === null ? null : { ...rss, sessions_stored: storedSessions },
    targets,
    pass,
  };
}

function printTable(targets: Target[], conversations: ConversationsReport[], burst: BurstReport | null, rss: SessionsRssReport | null): void {
  const rows: string[][] = [["C", "turns/s", "overhead p50/p99 ms", "after read p50/p99 ms", "agent p99 ms", "gw CPU ms/turn", "store ms/turn", "errors"]];
  for (const c of conversations) {
    rows.push([
      String(c.concurrency),
      String(c.turns_per_sec),
      `${c.overhead.p50_ms} / ${c.overhead.p99_ms}`,
      c.overhead_after_read === null ? "n/a" : `${c.overhead_after_read.p50_ms} / ${c.overhead_after_read.p99_ms}`,
      String(c.agent_time.p99_ms),
      String(c.gateway_cpu_ms_per_turn.total),
      String(c.store_ms_per_turn["total"]),
      String(c.errors),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padStart(widths[i]!)).join("  "));
  if (burst !== null) {
    lines.push(
      `burst: ${burst.bursts} × ${burst.messages_per_burst}: own replies ${burst.replies_answer_own_message}/${burst.bursts * burst.messages_per_burst}, ` +
        `transcripts in send order ${burst.transcripts_in_send_order}/${burst.bursts}, followers that found the session busy ${burst.arrived_while_busy}/${burst.followers}`,
    );
  }
  if (rss !== null) {
    lines.push(
      `sessions: ${rss.sessions} × 1 message at ${rss.sessions_per_sec}/s; RSS ${mb(rss.rss_before_bytes)} → ${mb(rss.rss_after_bytes)} MB ` +
        `(+${mb(rss.rss_growth_bytes)} MB; peak ${mb(rss.rss_peak_bytes)}; after GC ${mb(rss.rss_after_gc_bytes)}); errors ${rss.errors}`,
    );
  }
  for (const t of targets) {
    const verdict = t.pass === null ? "n/a" : t.pass ? "PASS" : "FAIL";
    const value = t.unit === "bytes" && typeof t.value === "number" ? `${mb(t.value)} MB` : `${String(t.value)}${t.unit === "ms" ? " ms" : ""}`;
    lines.push(`target ${t.name} ${t.target}: ${value} ${verdict}${t.note ? ` (${t.note})` : ""}`);
  }
  process.stderr.write(`\n${lines.join("\n")}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:gateway failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
