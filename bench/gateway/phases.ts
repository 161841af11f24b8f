/** The gateway benchmark's phases, run by run.ts against a started gateway child. */
import { setTimeout as sleep } from "node:timers/promises";
import type { SessionDB } from "../../src/index.js";
import { log } from "../log.js";
import type { DriverHandle } from "./driver-child.js";
import {
  parseMetrics,
  readCpuTimes,
  readRss,
  readVmRssBytes,
  type CpuTimes,
  type GatewayChild,
  type MetricsSnapshot,
  type RssBreakdown,
} from "./gateway-child.js";
import type { BenchPlatform, BurstRecord, ProbeMemory, ProbeSample } from "./protocol.js";
import { mean, round1, round3, spread, type Spread } from "./stats.js";

export interface CpuPerTurn {
  user: number;
  system: number;
  total: number;
}

function cpuPerTurn(before: CpuTimes, after: CpuTimes, turns: number): CpuPerTurn {
  const user = (after.userMs - before.userMs) / turns;
  const system = (after.systemMs - before.systemMs) / turns;
  return { user: round3(user), system: round3(system), total: round3(user + system) };
}

/** One concurrency level of the conversations phase. */
export interface ConversationsReport {
  /** The adapter the turns went through. */
  platform: BenchPlatform;
  concurrency: number;
  turns_per_conversation: number;
  /** Turns sent (concurrency × turns_per_conversation unless the deadline cut the run short). */
  turns: number;
  /** The deadline stopped conversations before their last turn. */
  cut_short: boolean;
  seconds: number;
  turns_per_sec: number;
  errors: number;
  error_examples: string[];
  /**
   * The target's figure, per turn: request in → reply out minus the agent's time. "In" is
   * when the driver wrote the request to the loopback socket, "out" when it read the last
   * byte, so it includes the time a request waits in the socket for the gateway's busy
   * event loop (and, slightly pessimistically, loopback TCP and the client's parse).
   * Telegram: "in" is when the driver pushed the update into the fake Bot API (which
   * answers the gateway's pending getUpdates long poll), "out" when the bot's sendMessage
   * replying to it reached the fake, so it includes the long-poll round trip, grammY, the
   * Telegram HTML conversion and the outbound Bot API call.
   */
  overhead: Spread;
  /** The same, but starting when the gateway parsed the request headers (diagnostics channel): misses the wait in the socket. Null for telegram (the gateway is the HTTP client there). */
  overhead_after_read: Spread | null;
  /** Headers parsed → reply handed to the socket, inside the gateway, agent included. Null for telegram. */
  gateway_time: Spread | null;
  /** The agent's runTurn (EchoAgent, or the provider agent: the model call included), measured inside the gateway. */
  agent_time: Spread;
  /** What the driver saw: issue → last byte read. */
  client_latency: Spread & { mean_ms: number };
  /** C / throughput: the mean latency closed-loop queueing alone predicts (Little's law). */
  littles_law_mean_ms: number;
  /** Gateway process CPU per turn (/proc/<pid>/stat, 10 ms ticks): user, system, total. */
  gateway_cpu_ms_per_turn: CpuPerTurn;
  /** Share of the phase's time the gateway's event loop was busy (performance.eventLoopUtilization; synchronous SQLite calls count as busy). */
  gateway_event_loop_utilization: number;
  /** The driver process's CPU per turn (it shares the machine). */
  driver_cpu_ms_per_turn: CpuPerTurn;
  /** threadline_turn_seconds (message picked up → reply committed) mean, from /metrics. */
  turn_metric_mean_ms: number;
  /** threadline_store_seconds per turn, by operation and total, from /metrics. */
  store_ms_per_turn: Record<string, number>;
  /** Turns with both a server-side and an agent timing (should equal turns). */
  matched: number;
  /** With a window (e.g. while a prune ran): the turns in flight during it, as the driver saw them. */
  during_window?: WindowReport;
}

/** An interval of wall-clock time, epoch milliseconds. */
export interface Interval {
  fromMs: number;
  toMs: number;
}

/** The turns of a run that were in flight during an interval (issued before it ended, answered after it began). */
export interface WindowReport {
  window_ms: number;
  turns: number;
  client_latency: Spread;
  /** The same minus the agent's time (as `overhead`). */
  overhead: Spread;
  errors: number;
}

function diffMetrics(before: MetricsSnapshot, after: MetricsSnapshot, turns: number): { turnMeanMs: number; store: Record<string, number> } {
  const dTurns = after.turnCount - before.turnCount;
  const store: Record<string, number> = {};
  let total = 0;
  for (const [op, seconds] of Object.entries(after.storeSeconds)) {
    const ms = (seconds - (before.storeSeconds[op] ?? 0)) * 1000;
    store[op] = round3(ms / turns);
    total += ms;
  }
  store["total"] = round3(total / turns);
  return { turnMeanMs: round3(dTurns > 0 ? ((after.turnSecondsSum - before.turnSecondsSum) * 1000) / dTurns : Number.NaN), store };
}

/**
 * C conversations of `turns` turns each, closed loop. `deadlineMs`: no new turn starts after
 * that long (the figures are then per turn actually sent).
 */
export async function runConversations(
  gw: GatewayChild,
  driver: DriverHandle,
  concurrency: number,
  turns: number,
  platform: BenchPlatform = "api-server",
  deadlineMs?: number,
  window?: Promise<Interval>,
): Promise<ConversationsReport> {
  const m0 = parseMetrics(await gw.metrics());
  await gw.probe({ cmd: "record", on: true });
  const cpu0 = readCpuTimes(gw.pid);
  const dcpu0 = readCpuTimes(driver.pid);
  const result = await driver.run({
    kind: "conversations",
    platform,
    url: gw.url,
    concurrency,
    turns,
    tag: `c${concurrency}`,
    ...(deadlineMs === undefined ? {} : { deadlineMs }),
  });
  if (result.kind !== "conversations") throw new Error("driver answered the wrong job");
  const cpu1 = readCpuTimes(gw.pid);
  const dcpu1 = readCpuTimes(driver.pid);
  const { samples, eventLoopUtilization } = await gw.probe({ cmd: "collect" });
  const m1 = parseMetrics(await gw.metrics());
  const total = result.attempted;
  const byId = new Map<string, ProbeSample>(samples.map((s) => [s.id, s]));
  const overhead: number[] = [];
  const afterRead: number[] = [];
  const gatewayTime: number[] = [];
  const agentTime: number[] = [];
  const client: number[] = [];
  for (const sample of result.samples) {
    client.push(sample.clientMs);
    const seen = byId.get(sample.id);
    if (!sample.ok || seen === undefined || seen.agentMs === null) continue;
    if (platform === "telegram") {
      // No HTTP request into the gateway to time from inside: only the driver's view.
      agentTime.push(seen.agentMs);
      overhead.push(sample.clientMs - seen.agentMs);
      continue;
    }
    if (seen.endMs === null || Number.isNaN(seen.startMs)) continue;
    const gwMs = seen.endMs - seen.startMs;
    gatewayTime.push(gwMs);
    agentTime.push(seen.agentMs);
    afterRead.push(gwMs - seen.agentMs);
    overhead.push(sample.clientMs - seen.agentMs);
  }
  const metrics = diffMetrics(m0, m1, total);
  const perSec = total / result.seconds;
  let duringWindow: WindowReport | undefined;
  if (window !== undefined) {
    const { fromMs, toMs } = await window;
    const inFlight = result.samples.filter((s) => s.issuedAtMs < toMs && s.issuedAtMs + s.clientMs > fromMs);
    duringWindow = {
      window_ms: round3(toMs - fromMs),
      turns: inFlight.length,
      client_latency: spread(inFlight.map((s) => s.clientMs)),
      overhead: spread(inFlight.map((s) => s.clientMs - (byId.get(s.id)?.agentMs ?? 0))),
      errors: inFlight.filter((s) => !s.ok).length,
    };
  }
  return {
    platform,
    concurrency,
    turns_per_conversation: turns,
    turns: total,
    cut_short: result.cutShort,
    seconds: round3(result.seconds),
    turns_per_sec: round1(perSec),
    errors: result.errors,
    error_examples: result.errorExamples,
    overhead: spread(overhead),
    overhead_after_read: platform === "telegram" ? null : spread(afterRead),
    gateway_time: platform === "telegram" ? null : spread(gatewayTime),
    agent_time: spread(agentTime),
    client_latency: { ...spread(client), mean_ms: round3(mean(client)) },
    littles_law_mean_ms: round3((concurrency / perSec) * 1000),
    gateway_cpu_ms_per_turn: cpuPerTurn(cpu0, cpu1, total),
    gateway_event_loop_utilization: round3(eventLoopUtilization),
    driver_cpu_ms_per_turn: cpuPerTurn(dcpu0, dcpu1, total),
    turn_metric_mean_ms: metrics.turnMeanMs,
    store_ms_per_turn: metrics.store,
    matched: overhead.length,
    ...(duringWindow === undefined ? {} : { during_window: duringWindow }),
  };
}

/** What the burst phase found. */
export interface BurstReport {
  bursts: number;
  messages_per_burst: number;
  gap_ms: number;
  /** Requests whose HTTP reply is the echo of their own message. */
  replies_answer_own_message: number;
  /** Bursts whose five replies all name the same session. */
  one_session: number;
  /** Bursts whose transcript is u1 a1 u2 a2 … in send order, each a_k answering u_k. */
  transcripts_in_send_order: number;
  /** Bursts whose messages reached the gateway (request start) in send order. */
  arrived_in_send_order: number;
  /** Messages 2..n that arrived while an earlier message of their burst was still unanswered (session busy). */
  arrived_while_busy: number;
  followers: number;
  preserved: boolean;
  problems: string[];
}

/** Sends the bursts; returns the records and the gateway's view, checked later against the transcripts. */
export async function sendBursts(
  gw: GatewayChild,
  driver: DriverHandle,
  bursts: number,
  size: number,
  gapMs: number,
): Promise<{ records: BurstRecord[]; seen: Map<string, ProbeSample> }> {
  await gw.probe({ cmd: "record", on: true });
  const result = await driver.run({ kind: "burst", url: gw.url, bursts, size, gapMs, tag: "burst" });
  if (result.kind !== "burst") throw new Error("driver answered the wrong job");
  const { samples } = await gw.probe({ cmd: "collect" });
  return { records: result.bursts, seen: new Map(samples.map((s) => [s.id, s])) };
}

const contentText = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content));

/** Checks replies, arrival and the stored transcripts (db: the gateway's database, opened after it stopped). */
export async function checkBursts(db: SessionDB, records: BurstRecord[], seen: Map<string, ProbeSample>, gapMs: number): Promise<BurstReport> {
  const problems: string[] = [];
  let own = 0;
  let oneSession = 0;
  let inOrder = 0;
  let arrivedInOrder = 0;
  let busy = 0;
  let followers = 0;
  const size = records[0]?.ids.length ?? 0;
  for (const r of records) {
    r.replies.forEach((reply, k) => {
      if (reply === `Echo: ${r.texts[k]}`) own++;
      else problems.push(`${r.key} #${k + 1}: reply ${JSON.stringify(reply)}`);
    });
    const sid = r.sessionIds[0] ?? null;
    if (sid !== null && r.sessionIds.every((s) => s === sid)) oneSession++;
    else problems.push(`${r.key}: replies name sessions ${JSON.stringify(r.sessionIds)}`);
    if (sid !== null) {
      const transcript = (await db.getMessages(sid)).map((m) => `${m.role}: ${contentText(m.content)}`);
      const expected = r.texts.flatMap((t) => [`user: ${t}`, `assistant: Echo: ${t}`]);
      if (JSON.stringify(transcript) === JSON.stringify(expected)) inOrder++;
      else problems.push(`${r.key}: transcript ${JSON.stringify(transcript)}`);
    }
    const starts = r.ids.map((id) => seen.get(id)?.startMs ?? Number.NaN);
    const ends = r.ids.map((id) => seen.get(id)?.endMs ?? Number.NaN);
    if (starts.every((s, k) => k === 0 || s > starts[k - 1]!)) arrivedInOrder++;
    for (let k = 1; k < starts.length; k++) {
      followers++;
      if (starts[k]! < Math.max(...ends.slice(0, k))) busy++;
    }
  }
  return {
    bursts: records.length,
    messages_per_burst: size,
    gap_ms: gapMs,
    replies_answer_own_message: own,
    one_session: oneSession,
    transcripts_in_send_order: inOrder,
    arrived_in_send_order: arrivedInOrder,
    arrived_while_busy: busy,
    followers,
    preserved: records.length > 0 && own === records.length * size && oneSession === records.length && inOrder === records.length,
    problems: problems.slice(0, 10),
  };
}

/** RSS of the gateway around `sessions` distinct session keys sending one message each. */
export interface SessionsRssReport {
  sessions: number;
  concurrency: number;
  warmup_sessions: number;
  seconds: number;
  sessions_per_sec: number;
  errors: number;
  error_examples: string[];
  /** VmRSS after the warm-up and a full GC. */
  rss_before_bytes: number;
  /** VmRSS right after the last reply, no GC. */
  rss_after_bytes: number;
  /** The target's figure: rss_after_bytes − rss_before_bytes. */
  rss_growth_bytes: number;
  /** Highest VmRSS sampled every 100 ms during the phase. */
  rss_peak_bytes: number;
  /** VmRSS after a full GC at the end (what stays). */
  rss_after_gc_bytes: number;
  rss_retained_growth_bytes: number;
  /** RssAnon / RssFile / RssShmem before, after and after the final GC. */
  breakdown: { before: RssBreakdown; after: RssBreakdown; after_gc: RssBreakdown };
  /** process.memoryUsage() in the gateway after the GC before and the GC after. */
  memory_before_gc: ProbeMemory;
  memory_after_gc: ProbeMemory;
  /** VmRSS after each tenth of the sessions (no GC): flat = bounded, a steady climb = per-session memory. */
  rss_curve: { sessions: number; rss_bytes: number; anon_bytes: number }[];
}

export async function runSessionsRss(
  gw: GatewayChild,
  driver: DriverHandle,
  sessions: number,
  concurrency: number,
  warmup: number,
): Promise<SessionsRssReport> {
  const warm = await driver.run({ kind: "sessions", url: gw.url, sessions: warmup, concurrency, tag: "warm" });
  if (warm.kind !== "sessions") throw new Error("driver answered the wrong job");
  if (warm.errors > 0) log(`warm-up: ${warm.errors} errors, e.g. ${warm.errorExamples[0]}`);
  await sleep(500);
  const gcBefore = await gw.probe({ cmd: "gc" });
  if (!gcBefore.exposed) log("warning: gc() is not exposed in the gateway; RSS figures are without a forced GC");
  await sleep(200);
  const before = readRss(gw.pid);
  let peak = before.rss;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, readVmRssBytes(gw.pid));
    } catch {
      // the process is gone; the phase fails on its own
    }
  }, 100);
  const curve: SessionsRssReport["rss_curve"] = [];
  const chunks = 10;
  let seconds = 0;
  let errors = 0;
  const errorExamples: string[] = [];
  try {
    for (let k = 0; k < chunks; k++) {
      const count = Math.floor(((k + 1) * sessions) / chunks) - Math.floor((k * sessions) / chunks);
      const result = await driver.run({ kind: "sessions", url: gw.url, sessions: count, concurrency, tag: `rss${k}` });
      if (result.kind !== "sessions") throw new Error("driver answered the wrong job");
      seconds += result.seconds;
      errors += result.errors;
      errorExamples.push(...result.errorExamples.slice(0, 5 - errorExamples.length));
      const now = readRss(gw.pid);
      curve.push({ sessions: Math.floor(((k + 1) * sessions) / chunks), rss_bytes: now.rss, anon_bytes: now.anon });
    }
  } finally {
    clearInterval(sampler);
  }
  const after = readRss(gw.pid);
  peak = Math.max(peak, after.rss);
  const gcAfter = await gw.probe({ cmd: "gc" });
  await sleep(200);
  const afterGc = readRss(gw.pid);
  return {
    sessions,
    concurrency,
    warmup_sessions: warmup,
    seconds: round3(seconds),
    sessions_per_sec: round1(sessions / seconds),
    errors,
    error_examples: errorExamples,
    rss_before_bytes: before.rss,
    rss_after_bytes: after.rss,
    rss_growth_bytes: after.rss - before.rss,
    rss_peak_bytes: peak,
    rss_after_gc_bytes: afterGc.rss,
    rss_retained_growth_bytes: afterGc.rss - before.rss,
    breakdown: { before, after, after_gc: afterGc },
    memory_before_gc: gcBefore.memory,
    memory_after_gc: gcAfter.memory,
    rss_curve: curve,
  };
}
