/**
 * The model-delay phase of `bench:gateway` (`--model-delay-ms`): the gateway in front of a
 * fake OpenAI-compatible provider (provider-child.ts, its own process, on 127.0.0.1) that
 * answers every chat request `Echo: <last user message>` after a fixed delay, driven by C
 * concurrent closed-loop conversations (1,000 by default) so that, as with a real model,
 * most turns are waiting on the model at any moment.
 *
 * Reported per run: turns/s, end-to-end latency and the same minus the model delay (the
 * gateway's share, plus the provider process's own time on this shared machine), the same
 * minus the model call measured inside the gateway (probe.mjs), gateway / driver / provider
 * CPU per turn, the gateway's peak VmRSS, and, sampled every {@link SAMPLE_EVERY_MS} ms, the
 * peak of the gateway's open connections (inbound from the driver, outbound to the
 * provider; counted in /proc/net/tcp), queued messages (`threadline_queue_depth`), running
 * turns (`threadline_active_turns`) and live agents (`threadline_active_sessions`) from its
 * /metrics.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { Agent, request } from "node:http";
import { log } from "../log.js";
import type { DriverHandle } from "./driver-child.js";
import { readCpuTimes, readVmRssBytes, startGatewayChild, type CpuTimes, type GatewayChild } from "./gateway-child.js";
import { runConversations, type ConversationsReport, type CpuPerTurn } from "./phases.js";
import { round3, type Spread } from "./stats.js";
import { startProviderChild } from "./ttft.js";

/**
 * The fake provider's keep-alive timeout in this phase. With Node's default (5 s) a loaded
 * gateway reuses pooled provider connections the provider has just closed: in 1,000-
 * conversation runs hundreds of 5,000 turns failed with HTTP 502 ("closed the connection before
 * replying", UND_ERR_SOCKET; the model call is not retried). This phase measures the
 * gateway's overhead, not that race, so the fake keeps idle connections 120 s.
 * (Measured 2026-11-25: 665 and 460 errors of 5,000 turns with 5 s, none with 120 s.)
 */
export const PROVIDER_KEEP_ALIVE_MS = 120_000;

/** How often the sampler reads the gateway's RSS, connections and gauges. */
export const SAMPLE_EVERY_MS = 250;

/** One run of the phase. */
export interface ModelDelayOptions {
  /** The provider's delay before it answers, ms. */
  delayMs: number;
  /** Concurrent conversations. */
  conversations: number;
  /** Turns per conversation. */
  turns: number;
  /** No conversation starts a new turn after this many seconds. */
  maxSeconds: number;
  synchronous: "FULL" | "NORMAL";
  /** The fake provider's keep-alive timeout, ms (default {@link PROVIDER_KEEP_ALIVE_MS}). */
  providerKeepAliveMs?: number;
}

/** Peaks seen by the sampler during the run. */
export interface ModelDelayPeaks {
  /** Highest VmRSS of the gateway, bytes. */
  rss_bytes: number;
  /** Established TCP connections into the gateway's port (the benchmark's own /metrics connections left out). */
  open_connections_in: number;
  /** Established TCP connections from the gateway to the provider. */
  open_connections_to_provider: number;
  /** `threadline_queue_depth`: messages waiting in session queues. */
  queue_depth: number;
  /** `threadline_active_turns`: turns running (most of them waiting on the model). */
  active_turns: number;
  /** `threadline_active_sessions`: sessions with a live agent in the cache. */
  active_sessions: number;
  /** Samples taken (a /metrics scrape can be slow on a busy gateway: fewer samples). */
  samples: number;
}

/** What one run measured. */
export interface ModelDelayReport {
  model_delay_ms: number;
  conversations: number;
  max_seconds: number;
  /** The conversations phase's figures; `overhead` is e2e minus the model call measured inside the gateway. */
  run: ConversationsReport;
  /** End-to-end (driver) latency minus the model delay: the gateway's share plus the fake provider's own time. */
  e2e_minus_delay: { p50_ms: number; p99_ms: number };
  /** The fake provider process's CPU per turn (it shares the machine). */
  provider_cpu_ms_per_turn: CpuPerTurn;
  rss_before_bytes: number;
  rss_after_bytes: number;
  peaks: ModelDelayPeaks;
}

/** One row of /proc/net/tcp: local and remote port, state (hex, `01` = established), socket inode. */
interface TcpRow {
  local: number;
  remote: number;
  state: string;
  inode: string;
}

function tcpRows(table: string): TcpRow[] {
  const rows: TcpRow[] = [];
  const lines = table.split("\n");
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i]!.trim().split(/\s+/u);
    if (f.length < 10) continue;
    rows.push({
      local: Number.parseInt(f[1]!.slice(f[1]!.indexOf(":") + 1), 16),
      remote: Number.parseInt(f[2]!.slice(f[2]!.indexOf(":") + 1), 16),
      state: f[3]!,
      inode: f[9]!,
    });
  }
  return rows;
}

/** Socket inodes this process holds (its own /metrics connections are not the load's). */
function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/u.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m !== null) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/**
 * Established connections in a /proc/net/tcp table: into `port` (the gateway's side), leaving
 * out those whose client end is one of `ownInodes` (this process's), and to `remotePort` (the
 * gateway's client sockets to the provider; only the gateway connects to it).
 */
export function countConnections(table: string, port: number, remotePort: number, ownInodes: ReadonlySet<string>): { into: number; to: number } {
  const rows = tcpRows(table).filter((r) => r.state === "01");
  const ownPorts = new Set(rows.filter((r) => r.remote === port && ownInodes.has(r.inode)).map((r) => r.local));
  let into = 0;
  let to = 0;
  for (const r of rows) {
    if (r.local === port && !ownPorts.has(r.remote)) into++;
    else if (r.remote === remotePort && r.local !== remotePort) to++;
  }
  return { into, to };
}

/** A gauge's value from a Prometheus text exposition (NaN when absent). */
export function gauge(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\S+)$`, "mu").exec(text);
  return match === null ? Number.NaN : Number(match[1]);
}

/** Samples the gateway every SAMPLE_EVERY_MS until stopped. */
function startSampler(gw: GatewayChild, providerPort: number): { stop(): Promise<ModelDelayPeaks> } {
  const gwPort = Number(new URL(gw.url).port);
  const scraper = new Agent({ keepAlive: true, maxSockets: 1 });
  const peaks: ModelDelayPeaks = {
    rss_bytes: 0,
    open_connections_in: 0,
    open_connections_to_provider: 0,
    queue_depth: 0,
    active_turns: 0,
    active_sessions: 0,
    samples: 0,
  };
  const scrape = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = request({ agent: scraper, host: "127.0.0.1", port: gwPort, path: "/metrics" }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve(body));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  let busy: Promise<void> = Promise.resolve();
  let inFlight = false;
  const tick = (): void => {
    if (inFlight) return;
    inFlight = true;
    busy = (async () => {
      try {
        peaks.rss_bytes = Math.max(peaks.rss_bytes, readVmRssBytes(gw.pid));
        const tcp = countConnections(readFileSync("/proc/net/tcp", "utf8"), gwPort, providerPort, ownSocketInodes());
        peaks.open_connections_in = Math.max(peaks.open_connections_in, tcp.into);
        peaks.open_connections_to_provider = Math.max(peaks.open_connections_to_provider, tcp.to);
        const text = await scrape();
        peaks.queue_depth = Math.max(peaks.queue_depth, gauge(text, "threadline_queue_depth"));
        peaks.active_turns = Math.max(peaks.active_turns, gauge(text, "threadline_active_turns"));
        peaks.active_sessions = Math.max(peaks.active_sessions, gauge(text, "threadline_active_sessions"));
        peaks.samples++;
      } catch (error) {
        log(`sampler: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        inFlight = false;
      }
    })();
  };
  const timer = setInterval(tick, SAMPLE_EVERY_MS);
  tick();
  return {
    async stop(): Promise<ModelDelayPeaks> {
      clearInterval(timer);
      await busy;
      scraper.destroy();
      return peaks;
    },
  };
}

function cpuPerTurn(before: CpuTimes, after: CpuTimes, turns: number): CpuPerTurn {
  const user = (after.userMs - before.userMs) / turns;
  const system = (after.systemMs - before.systemMs) / turns;
  return { user: round3(user), system: round3(system), total: round3(user + system) };
}

const minus = (s: Spread, ms: number): { p50_ms: number; p99_ms: number } => ({ p50_ms: round3(s.p50_ms - ms), p99_ms: round3(s.p99_ms - ms) });

/**
 * One run: a fresh provider and gateway (titles off, tools off, like the streaming phase),
 * one warm-up conversation, then the measured conversations. Both children are stopped
 * before it returns; the gateway's temp dir is removed unless `keep`.
 */
export async function runModelDelay(driver: DriverHandle, options: ModelDelayOptions, keep: boolean): Promise<ModelDelayReport> {
  const provider = await startProviderChild({
    firstTokenMs: options.delayMs,
    tokenGapMs: 0,
    words: 1,
    reply: "echo",
    keepAliveMs: options.providerKeepAliveMs ?? PROVIDER_KEEP_ALIVE_MS,
  });
  let gw: GatewayChild | null = null;
  try {
    gw = await startGatewayChild(`delay${options.conversations}`, [], options.synchronous, {
      env: { OPENAI_BASE_URL: provider.url, OPENAI_API_KEY: "bench-key", THREADLINE_MODEL: "bench-model" },
      config: "titles:\n  enabled: false\nprovider:\n  tools: off\n",
    });
    if (gw.agent !== "provider") throw new Error("the model-delay gateway did not announce the model provider");
    const warm = await driver.run({ kind: "conversations", url: gw.url, concurrency: 1, turns: 3, tag: "warmup" });
    if (warm.kind === "conversations" && warm.errors > 0) log(`warm-up: ${warm.errors} errors, e.g. ${warm.errorExamples[0]}`);
    const rssBefore = readVmRssBytes(gw.pid);
    const p0 = readCpuTimes(provider.pid);
    const sampler = startSampler(gw, Number(new URL(provider.url).port));
    let run: ConversationsReport;
    let peaks: ModelDelayPeaks;
    try {
      run = await runConversations(gw, driver, options.conversations, options.turns, "api-server", options.maxSeconds * 1000);
    } finally {
      peaks = await sampler.stop();
    }
    const p1 = readCpuTimes(provider.pid);
    const rssAfter = readVmRssBytes(gw.pid);
    peaks.rss_bytes = Math.max(peaks.rss_bytes, rssAfter);
    return {
      model_delay_ms: options.delayMs,
      conversations: options.conversations,
      max_seconds: options.maxSeconds,
      run,
      e2e_minus_delay: minus(run.client_latency, options.delayMs),
      provider_cpu_ms_per_turn: cpuPerTurn(p0, p1, Math.max(1, run.turns)),
      rss_before_bytes: rssBefore,
      rss_after_bytes: rssAfter,
      peaks,
    };
  } finally {
    if (gw !== null) {
      const code = await gw.stop();
      if (code !== 0) log(`warning: the model-delay gateway exited with ${code} after SIGTERM`);
      if (keep) log(`kept ${gw.home}`);
      else await gw.cleanUp();
    }
    await provider.stop();
  }
}
