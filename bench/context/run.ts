/**
 * `npm run bench:context [-- --turns N] [--window TOKENS] [--model NAME] [--turn-delay-ms MS]
 * [--summary-delay-ms MS] [--seed N] [--postgres [URL]] [--keep]`: one long conversation
 * through a real gateway against a fake model with a small context window (8,192 tokens).
 *
 * - The gateway: `startGateway` (what `threadline serve` runs) in this process, from the
 *   sources, with a config document as a user would write it (bench/context/gateway.ts): the
 *   api-server adapter on 127.0.0.1, the fake model as provider, a SQLite file in a temp dir
 *   (storage.synchronous FULL, the default), or with `--postgres` a fresh schema of
 *   postgres://127.0.0.1:5432/test (or the URL given), dropped afterwards unless `--keep`.
 * - The model: bench/context/fake-model.ts in its own process on 127.0.0.1, the fake OpenAI
 *   server of the tests with a context window: every request counted with
 *   `tokenCounterFor(model)`, an over-window request refused with OpenAI's 400
 *   `context_length_exceeded`; replies sized like a working session (workload.ts); a turn
 *   answered after `--turn-delay-ms` (5), a summary after `--summary-delay-ms` (50).
 * - The driver: bench/context/driver.ts in its own process (so work the gateway does on its
 *   event loop after a reply never delays reading it), one conversation (one session key),
 *   `--turns` turns (2,000) one after the other over loopback HTTP (`POST
 *   /v1/chat/completions`), each timed from the request to the last byte of the reply. After the last turn it waits (at most 60 s) until
 *   nothing runs: no model request in flight, no store call, no turn.
 *
 * Reports (one JSON object on stdout; a table on stderr): the largest request in tokens
 * against the window and the refusals; the compressions (sessions ended with reason
 * `compression`) and the summary calls; the latency of the turns that triggered a summary and
 * of the turns right after them against the other turns (p50/p99); whether turn 1's fact
 * still reaches the model at the end; the store's share of the wall time (every SessionDB
 * call timed, store-timer.ts).
 *
 * Speed is compared between builds with `npm run bench:compare -- <git-ref> context [options]`
 * (both checkouts must have bench/context), never by a timed assertion.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { parseMetrics } from "../gateway/gateway-child.js";
import { log } from "../log.js";
import { factFigures, latencyByKind, latencySpread, requestFigures, summariesByTurn, type TurnSample } from "./analysis.js";
import { startFakeModel, type FakeModelProcess } from "./fake-model-process.js";
import { startBenchGateway, type BenchGateway } from "./gateway.js";
import { StoreTimer } from "./store-timer.js";
import { formatTable, type ContextReport } from "./report.js";

const USAGE =
  "usage: npm run bench:context [-- --turns N] [--window TOKENS] [--model NAME] [--turn-delay-ms MS] [--summary-delay-ms MS] [--seed N] [--postgres [URL]] [--keep]";
const DEFAULT_POSTGRES = "postgres://127.0.0.1:5432/test";
const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DRIVER = fileURLToPath(new URL("./driver.ts", import.meta.url));
/** Per-turn ceiling: a turn that takes longer is counted as an error (status 0) and the run goes on. */
const TURN_TIMEOUT_MS = 120_000;
/** After the last turn: idle this long ends the run; never wait more than DRAIN_MAX_MS. */
const QUIET_MS = 500;
const DRAIN_MAX_MS = 60_000;

interface Args {
  turns: number;
  window: number;
  model: string;
  turnDelayMs: number;
  summaryDelayMs: number;
  seed: number;
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
  const args: Args = { turns: 2_000, window: 8_192, model: "gpt-4", turnDelayMs: 5, summaryDelayMs: 50, seed: 1, postgres: null, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--turns") args.turns = whole(arg, argv[++i], 1, 100_000);
    else if (arg === "--window") args.window = whole(arg, argv[++i], 512, 10_000_000);
    else if (arg === "--model") {
      const value = argv[++i];
      if (value === undefined || value.trim() === "") usageError("--model takes a model name");
      args.model = value;
    } else if (arg === "--turn-delay-ms") args.turnDelayMs = whole(arg, argv[++i], 0, 60_000);
    else if (arg === "--summary-delay-ms") args.summaryDelayMs = whole(arg, argv[++i], 0, 60_000);
    else if (arg === "--seed") args.seed = whole(arg, argv[++i], 0, 2 ** 31 - 1);
    else if (arg === "--postgres") {
      const next = argv[i + 1];
      if (next !== undefined && /^postgres(ql)?:\/\//iu.test(next)) {
        args.postgres = next;
        i++;
      } else args.postgres = DEFAULT_POSTGRES;
    } else if (arg === "--keep") args.keep = true;
    else if (arg === "--help" || arg === "-h") {
      process.stderr.write(`${USAGE}\n`);
      process.exit(0);
    } else usageError(`unknown argument ${arg}`);
  }
  return args;
}

/**
 * Runs the driver (driver.ts, its own process) and calls `onTurn` as each turn's line arrives;
 * resolves with every turn once the driver exits.
 */
async function runDriver(url: string, args: Args, onTurn: (sample: TurnSample) => void): Promise<TurnSample[]> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", DRIVER, JSON.stringify({ url, seed: args.seed, turns: args.turns, key: "bench-context", timeoutMs: TURN_TIMEOUT_MS })],
    {
      cwd: PROJECT_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const samples: TurnSample[] = [];
  const lines = createInterface({ input: child.stdout! });
  const closed = once(lines, "close");
  lines.on("line", (line) => {
    const sample = JSON.parse(line) as TurnSample;
    samples.push(sample);
    onTurn(sample);
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  await closed;
  if (code !== 0) throw new Error(`the driver exited with ${String(code)} after ${samples.length} turns`);
  return samples;
}

/**
 * Waits until nothing runs (no model request in flight, no store call, no turn) for QUIET_MS;
 * at most DRAIN_MAX_MS. `quietAt`: when the quiet began (the run's end).
 */
async function drain(bench: BenchGateway, model: FakeModelProcess, timer: StoreTimer): Promise<{ drained: boolean; quietAt: number }> {
  const until = performance.now() + DRAIN_MAX_MS;
  let quietSince = performance.now();
  while (performance.now() < until) {
    const stats = await model.stats();
    const busy = stats.inflight > 1 /* this request */ || timer.inProgress > 0 || bench.gateway.runner.activeTurns > 0;
    if (busy) quietSince = performance.now();
    else if (performance.now() - quietSince >= QUIET_MS) return { drained: true, quietAt: quietSince };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { drained: false, quietAt: performance.now() };
}

/**
 * The first and the last tenth of the turns: store ms per turn and latency p50, so a cost that
 * grows with the conversation shows.
 */
function tenths(samples: readonly TurnSample[], busyAfter: readonly number[]) {
  const n = Math.max(1, Math.floor(samples.length / 10));
  const busy = (from: number, to: number): number =>
    Math.round((((busyAfter[to - 1] ?? 0) - (from === 0 ? 0 : (busyAfter[from - 1] ?? 0))) / (to - from)) * 1000) / 1000;
  const p50 = (part: readonly TurnSample[]): number | null => latencySpread(part.filter((s) => s.status === 200).map((s) => s.ms)).p50_ms;
  return {
    first_tenth: { turns: n, busy_ms_per_turn: busy(0, n), latency_p50_ms: p50(samples.slice(0, n)) },
    last_tenth: { turns: n, busy_ms_per_turn: busy(samples.length - n, samples.length), latency_p50_ms: p50(samples.slice(-n)) },
  };
}

/** The session lineage of the conversation, read after the run. */
async function lineage(bench: BenchGateway) {
  const db = bench.gateway.db;
  const sessions: Array<{ id: string; title: string | null; endReason: string | null; parentSessionId: string | null; startedAt: number }> = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1_000; page++) {
    const result: Awaited<ReturnType<typeof db.listSessions>> = await db.listSessions({
      limit: 1_000,
      includeChildren: true,
      orderBy: "started",
      ...(cursor === null ? {} : { cursor }),
    });
    sessions.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === null) break;
  }
  sessions.sort((a, b) => a.startedAt - b.startedAt);
  let childrenWithSummary = 0;
  const children = sessions.filter((s) => s.parentSessionId !== null);
  for (const child of children) {
    const first = (await db.getMessages(child.id, { limit: 1 }))[0];
    if (first?.platformMessageId?.startsWith("summary:") === true) childrenWithSummary += 1;
  }
  return {
    sessions: sessions.length,
    compressions: sessions.filter((s) => s.endReason === "compression").length,
    end_reasons: sessions.reduce<Record<string, number>>((acc, s) => {
      const reason = s.endReason ?? "(open)";
      acc[reason] = (acc[reason] ?? 0) + 1;
      return acc;
    }, {}),
    children: children.length,
    children_starting_with_summary: childrenWithSummary,
    first_title: sessions[0]?.title ?? null,
    last_title: sessions.at(-1)?.title ?? null,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const loadBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  const model = await startFakeModel({ window: args.window, seed: args.seed, turnDelayMs: args.turnDelayMs, summaryDelayMs: args.summaryDelayMs });
  let bench: BenchGateway | null = null;
  try {
    bench = await startBenchGateway({ providerUrl: model.url, model: args.model, window: args.window, postgres: args.postgres, keep: args.keep });
    const gw = bench.gateway;
    log(
      `context: ${args.turns} turns, window ${args.window} (${bench.windowSetting}), model ${args.model}, ${gw.db.capabilities.backend} at ${bench.database}`,
    );
    const timer = new StoreTimer();
    timer.wrap(gw.db);
    const m0 = parseMetrics(await (await fetch(`${gw.url}/metrics`)).text());
    timer.start();
    const started = performance.now();
    /** Store busy ms as each turn's reply reached the driver (the growth over the conversation shows in it). */
    const busyAfter: number[] = [];
    let errors = 0;
    const samples = await runDriver(gw.url, args, (sample) => {
      busyAfter.push(timer.busyMs);
      if (sample.status !== 200) errors += 1;
      if (sample.turn % 200 === 0 || sample.turn === args.turns)
        log(`  turn ${sample.turn}: ${((performance.now() - started) / 1000).toFixed(1)} s, ${errors} error(s) so far`);
    });
    const turnsDone = performance.now();
    const { drained, quietAt } = await drain(bench, model, timer);
    timer.stop();
    // To the moment the last work ended (not the quiet waited for after it).
    const wallMs = Math.max(quietAt, turnsDone) - started;
    const m1 = parseMetrics(await (await fetch(`${gw.url}/metrics`)).text());
    const stats = await model.stats();
    const requests = stats.requests;
    const triggers = summariesByTurn(requests);
    const lineageFigures = await lineage(bench);
    const runnerTimed: Record<string, number> = {};
    for (const [op, seconds] of Object.entries(m1.storeSeconds))
      runnerTimed[op] = Math.round(((seconds - (m0.storeSeconds[op] ?? 0)) * 1e6) / args.turns) / 1e3;
    const methods = Object.fromEntries(
      timer
        .methods()
        .slice(0, 12)
        .map(([name, m]) => [name, { calls: m.calls, ms: Math.round(m.ms * 10) / 10 }]),
    );
    const statuses: Record<string, number> = {};
    for (const s of samples) if (s.status !== 200) statuses[String(s.status)] = (statuses[String(s.status)] ?? 0) + 1;
    const report: ContextReport = {
      bench: "context",
      system: `threadline ${gw.db.capabilities.backend}`,
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model ?? "unknown",
        memory_bytes: totalmem(),
        platform: `${platform()} ${release()}`,
        node: process.version,
        load_average_before: loadBefore,
        load_average_after: loadavg().map((l) => Math.round(l * 100) / 100),
      },
      setup: {
        turns: args.turns,
        window: args.window,
        model: args.model,
        seed: args.seed,
        turn_delay_ms: args.turnDelayMs,
        summary_delay_ms: args.summaryDelayMs,
        window_setting: bench.windowSetting,
        database: `${gw.db.capabilities.backend}: ${bench.database}`,
        gateway: `startGateway (what \`threadline serve\` runs) in this process from the sources; config: ${JSON.stringify(bench.config)}`,
        fake_model:
          "bench/context/fake-model.ts, own process, 127.0.0.1: the tests' fake OpenAI server with contextWindow (tokenCounterFor(model); 400 context_length_exceeded over the window)",
        driver:
          "bench/context/driver.ts, own process; one session key; turns one after the other over loopback HTTP; latency = request → last byte of the reply",
      },
      turns: {
        sent: samples.length,
        ok: samples.length - errors,
        errors,
        error_statuses: statuses,
        replies_answering_their_turn: samples.filter((s) => s.answered).length,
        seconds: Math.round((turnsDone - started) / 10) / 100,
        turns_per_sec: Math.round((samples.length / ((turnsDone - started) / 1000)) * 10) / 10,
        drained,
      },
      requests: requestFigures(requests, args.window),
      compression: {
        compressions: lineageFigures.compressions,
        summary_calls: requests.filter((r) => r.kind === "summary").length,
        summary_calls_refused: requests.filter((r) => r.kind === "summary" && r.refused).length,
        turns_with_a_summary: triggers.size,
        lineage: lineageFigures,
      },
      latency: latencyByKind(samples, triggers),
      early_fact: factFigures(requests, args.turns),
      store: {
        busy_ms: Math.round(timer.busyMs),
        wall_ms: Math.round(wallMs),
        share: Math.round((timer.busyMs / wallMs) * 1000) / 1000,
        busy_ms_per_turn: Math.round((timer.busyMs / args.turns) * 1000) / 1000,
        ...tenths(samples, busyAfter),
        methods,
        runner_timed_ms_per_turn: runnerTimed,
      },
      gateway_log: {
        counts: Object.fromEntries([...bench.log.counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)),
        warnings: bench.log.samples,
        context_lines: bench.log.context,
      },
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.stderr.write(`\n${formatTable(report)}\n`);
  } finally {
    await bench?.stop();
    await model.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:context failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
