/**
 * `--during-prune`: the gateway's turn latency while `threadline sessions prune` runs on its
 * database file in another process.
 *
 * Per concurrency C: a fresh gateway (api-server, echo agent, SQLite), one warm-up
 * conversation, then prunable history imported into its file through a second connection
 * (ended sessions whose last activity is 90 days old, with messages of about medium's size,
 * indexed for search as the gateway's own would be). Then two runs of C closed-loop
 * conversations for the same window: one alone, one with `node dist/cli/main.js sessions prune
 * --older-than 60 --yes` started at the window's start (the real CLI, its own process, the
 * gateway's config and file). Each run reports its latency over the window and over the turns
 * in flight while the prune ran.
 *
 * @module
 */
import { spawn } from "node:child_process";
import Database from "better-sqlite3";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { log } from "../log.js";
import type { DriverHandle } from "./driver-child.js";
import { GATEWAY_BIN, PROJECT_ROOT, startGatewayChild } from "./gateway-child.js";
import { runConversations, type ConversationsReport, type Interval } from "./phases.js";
import { round3 } from "./stats.js";

/** The prunable history: about medium's prune (807 sessions, 37,145 messages of ~770 characters). */
export interface PrunableHistory {
  sessions: number;
  messagesEach: number;
  /** Characters of text per message (about). */
  chars: number;
}

export const DEFAULT_HISTORY: PrunableHistory = { sessions: 800, messagesEach: 46, chars: 770 };

const DAY_MS = 86_400_000;
/** The history's age and the prune's cutoff, in days. */
const HISTORY_AGE_DAYS = 90;
const PRUNE_OLDER_THAN_DAYS = 60;

export interface DuringPruneOptions {
  conversations: number;
  /** Both runs last this long (no new turn after it). */
  windowMs: number;
  history: PrunableHistory;
  synchronous: "FULL" | "NORMAL";
  keep: boolean;
}

export interface PruneRun {
  /** The prune's process: spawned → exited. */
  seconds: number;
  exit_code: number | null;
  /** Sessions it reported deleted (its --json output). */
  pruned: number | null;
  stderr_tail: string;
}

export interface DuringPruneReport {
  conversations: number;
  window_ms: number;
  history: PrunableHistory & { messages: number; load_seconds: number };
  /** C conversations alone. */
  alone: ConversationsReport;
  /** The same while the prune ran; `during_window` holds the turns in flight during the prune. */
  during_prune: ConversationsReport;
  prune: PruneRun;
}

/** A small deterministic text generator (the same history every run). */
function words(seed: number): () => string {
  const vocabulary = (
    "session gateway message model reply tool search index prune batch commit write lock reader page cache " +
    "latency thread queue lease route title lineage export import vacuum merge segment token usage cost " +
    "weather river garden window kitchen morning evening mountain station library coffee bicycle harbour"
  ).split(" ");
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return vocabulary[(state >>> 0) % vocabulary.length]!;
  };
}

/** Imports the prunable history into the gateway's file through a second connection of the build. */
export async function loadHistory(dbPath: string, history: PrunableHistory): Promise<number> {
  const mod = (await import(pathToFileURL(join(PROJECT_ROOT, "dist", "index.js")).href)) as typeof import("../../src/index.js");
  const db = await mod.openSessionDB(dbPath);
  const started = performance.now();
  try {
    const base = (Date.now() - HISTORY_AGE_DAYS * DAY_MS) / 1000;
    const next = words(17);
    const lines = function* (): Generator<string> {
      for (let s = 0; s < history.sessions; s++) {
        const startedAt = base - history.sessions * 60 + s * 60;
        const messages = Array.from({ length: history.messagesEach }, (_, m) => {
          let text = "";
          while (text.length < history.chars) text += `${next()} `;
          return {
            role: m % 2 === 0 ? "user" : "assistant",
            content: text.trimEnd(),
            toolCalls: null,
            toolCallId: null,
            toolName: null,
            tokenCount: null,
            finishReason: null,
            reasoning: null,
            reasoningDetails: null,
            platformMessageId: null,
            timestamp: startedAt + m,
            rewoundAt: null,
          };
        });
        yield JSON.stringify({
          format: "threadline.session",
          version: 1,
          session: { id: `old-${s}`, source: "cli", startedAt, endedAt: startedAt + history.messagesEach, endReason: "user_exit", title: null },
          messages,
        });
      }
    };
    const report = await db.importSessions(lines());
    if (report.imported !== history.sessions)
      throw new Error(`imported ${report.imported} of ${history.sessions} prunable sessions: ${JSON.stringify(report.errors.slice(0, 3))}`);
  } finally {
    await db.close(); // indexes what it imported, as the gateway's own appends are
  }
  // Settle the file before the runs: the import left FTS5 segments to merge and a WAL to copy back,
  // work the gateway's next commits would otherwise do inside the first run.
  const raw = new Database(dbPath, { timeout: 5_000 });
  try {
    raw.exec("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')");
    raw.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    raw.close();
  }
  return (performance.now() - started) / 1000;
}

/** Runs `threadline sessions prune` from dist/ on the gateway's home; resolves when it exits. */
function runPruneCli(
  home: string,
  dbPath: string,
): { started: number; done: Promise<{ ended: number; code: number | null; pruned: number | null; stderr: string }> } {
  const started = performance.timeOrigin + performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home };
  for (const name of ["THREADLINE_DB", "THREADLINE_CONFIG", "NODE_OPTIONS"]) delete env[name];
  const child = spawn(process.execPath, [GATEWAY_BIN, "sessions", "prune", "--older-than", String(PRUNE_OLDER_THAN_DAYS), "--yes", "--json", "--db", dbPath], {
    cwd: home,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<{ ended: number; code: number | null; pruned: number | null; stderr: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const ended = performance.timeOrigin + performance.now();
      let pruned: number | null = null;
      try {
        const parsed = JSON.parse(stdout) as { pruned?: unknown };
        pruned = typeof parsed.pruned === "number" ? parsed.pruned : null;
      } catch {
        pruned = null;
      }
      resolve({ ended, code, pruned, stderr: stderr.slice(-500) });
    });
  });
  return { started, done };
}

/** One concurrency level: a fresh gateway, the history, then the run alone and the run during a prune. */
export async function runDuringPrune(driver: DriverHandle, options: DuringPruneOptions): Promise<DuringPruneReport> {
  const gw = await startGatewayChild(`prune-c${options.conversations}`, [], options.synchronous);
  try {
    if (gw.agent !== "echo") throw new Error("the gateway did not announce the built-in echo agent");
    await driver.run({ kind: "conversations", platform: "api-server", url: gw.url, concurrency: 1, turns: 20, tag: "warmup" });
    const { history } = options;
    log(`  loading ${history.sessions} prunable sessions × ${history.messagesEach} messages into ${gw.dbPath}`);
    const loadSeconds = await loadHistory(gw.dbPath, history);
    log(`  loaded in ${loadSeconds.toFixed(1)} s`);
    // A turn count no window reaches: the deadline ends both runs.
    const turns = 1_000_000;
    const c = options.conversations;
    log(`  C = ${c}, ${options.windowMs} ms alone`);
    const alone = await runConversations(gw, driver, c, turns, "api-server", options.windowMs);
    log(`  C = ${c}, ${options.windowMs} ms while \`threadline sessions prune --older-than ${PRUNE_OLDER_THAN_DAYS} --yes\` runs`);
    const prune = runPruneCli(gw.home, gw.dbPath);
    const window: Promise<Interval> = prune.done.then((p) => ({ fromMs: prune.started, toMs: p.ended }));
    const [duringPrune, finished] = await Promise.all([runConversations(gw, driver, c, turns, "api-server", options.windowMs, window), prune.done]);
    if (finished.code !== 0) log(`  warning: the prune exited with ${finished.code}: ${finished.stderr}`);
    return {
      conversations: c,
      window_ms: options.windowMs,
      history: { ...history, messages: history.sessions * history.messagesEach, load_seconds: round3(loadSeconds) },
      alone,
      during_prune: duringPrune,
      prune: {
        seconds: round3((finished.ended - prune.started) / 1000),
        exit_code: finished.code,
        pruned: finished.pruned,
        stderr_tail: finished.stderr,
      },
    };
  } finally {
    await gw.stop();
    if (options.keep) log(`kept ${gw.home}`);
    else await gw.cleanUp();
  }
}

/** The summary table (stderr). */
export function formatDuringPrune(reports: readonly DuringPruneReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    const w = r.during_prune.during_window;
    lines.push(
      `C = ${r.conversations}, window ${r.window_ms} ms; history ${r.history.sessions} sessions / ${r.history.messages} messages; ` +
        `prune ${r.prune.seconds} s, ${r.prune.pruned ?? "?"} sessions, exit ${r.prune.exit_code}\n` +
        `  alone:        ${r.alone.turns_per_sec} turns/s; latency p50 / p99 / max ${r.alone.client_latency.p50_ms} / ${r.alone.client_latency.p99_ms} / ${r.alone.client_latency.max_ms} ms; errors ${r.alone.errors}\n` +
        `  during prune: ${r.during_prune.turns_per_sec} turns/s over the window; latency p50 / p99 / max ${r.during_prune.client_latency.p50_ms} / ${r.during_prune.client_latency.p99_ms} / ${r.during_prune.client_latency.max_ms} ms; errors ${r.during_prune.errors}\n` +
        (w === undefined
          ? ""
          : `  in flight while the prune ran (${w.window_ms} ms, ${w.turns} turns): latency p50 / p99 / max ${w.client_latency.p50_ms} / ${w.client_latency.p99_ms} / ${w.client_latency.max_ms} ms; errors ${w.errors}`),
    );
  }
  return lines.join("\n");
}
