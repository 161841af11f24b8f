/**
 * The gateway under test: `node dist/cli/main.js serve --port 0` as a child process with
 * its own THREADLINE_HOME (SQLite `state.db` in a temp dir), no model provider (so the
 * built-in echo agent), the api-server adapter on loopback (or, with `telegram`, only the
 * Telegram adapter polling the driver's fake Bot API), and probe.mjs preloaded.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { log } from "../log.js";
import type { ProbeCommand, ProbeReply } from "./protocol.js";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const GATEWAY_BIN = join(PROJECT_ROOT, "dist", "cli", "main.js");
const PROBE = new URL("./probe.mjs", import.meta.url).href;

/** Environment variables that would make the gateway use something other than echo + a temp SQLite file. */
const SCRUBBED = ["OPENAI_BASE_URL", "OPENAI_API_KEY", "THREADLINE_MODEL", "THREADLINE_DB", "THREADLINE_CONFIG", "NODE_OPTIONS", "TELEGRAM_BOT_TOKEN"];

/** Telegram instead of the api-server adapter: the Bot API root (the driver's fake on 127.0.0.1) and its token. */
export interface TelegramTarget {
  apiRoot: string;
  token: string;
}

type ProbeRequest = { cmd: "record"; on: boolean } | { cmd: "collect" } | { cmd: "gc" };
type ReplyTo<C extends ProbeCommand["cmd"]> = Extract<ProbeReply, { cmd: C }>;

/** A running gateway child. */
export interface GatewayChild {
  pid: number;
  url: string;
  home: string;
  dbPath: string;
  /** The agent the gateway announced (`echo` is required). */
  agent: string;
  /** Sends a command to the probe and waits for its answer. */
  probe(request: { cmd: "record"; on: boolean }): Promise<ReplyTo<"record">>;
  probe(request: { cmd: "collect" }): Promise<ReplyTo<"collect">>;
  probe(request: { cmd: "gc" }): Promise<ReplyTo<"gc">>;
  /** VmRSS of the gateway process from /proc/<pid>/status, bytes. */
  rssBytes(): number;
  /** GET /metrics. */
  metrics(): Promise<string>;
  /** SIGTERM (graceful drain), then waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** Removes the temp dir. */
  cleanUp(): Promise<void>;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux). */
const USER_HZ = 100;

export function readVmRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB/mu.exec(status);
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** CPU time of a process so far, from /proc/<pid>/stat (10 ms resolution). */
export interface CpuTimes {
  userMs: number;
  systemMs: number;
}

export function readCpuTimes(pid: number): CpuTimes {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After "pid (comm) ", state is field 3, so utime (14) and stime (15) are at 11 and 12.
  return { userMs: (Number(fields[11]) * 1000) / USER_HZ, systemMs: (Number(fields[12]) * 1000) / USER_HZ };
}

/** What {@link waitUntilIdle} saw: how long it waited and the CPU the process used meanwhile. */
export interface IdleWait {
  waitedMs: number;
  cpuMs: number;
  /** `false` when the process was still busy at the cap. */
  idle: boolean;
}

/**
 * Waits until a process is idle: at most one clock tick (10 ms) of CPU over `windowMs`,
 * polled every 100 ms, for at most `maxMs`. A gateway that just started still does
 * background work of its start-up after it answers (it builds the HTTP route schemas
 * after /healthz answers, ~150 ms of CPU): waiting keeps that out of a phase's CPU per turn.
 */
export async function waitUntilIdle(pid: number, windowMs = 300, maxMs = 10_000): Promise<IdleWait> {
  const total = (): number => {
    const t = readCpuTimes(pid);
    return t.userMs + t.systemMs;
  };
  const start = performance.now();
  const first = total();
  const samples: Array<{ at: number; cpu: number }> = [{ at: start, cpu: first }];
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const at = performance.now();
    const cpu = total();
    samples.push({ at, cpu });
    while (samples.length > 1 && at - samples[1]!.at >= windowMs) samples.shift();
    const idle = at - samples[0]!.at >= windowMs && cpu - samples[0]!.cpu <= 1000 / USER_HZ;
    if (idle || at - start >= maxMs) return { waitedMs: Math.round(at - start), cpuMs: cpu - first, idle };
  }
}

/** VmRSS and its parts (anonymous, file-backed, shared memory), bytes. */
export interface RssBreakdown {
  rss: number;
  anon: number;
  file: number;
  shmem: number;
}

export function readRss(pid: number): RssBreakdown {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, "mu").exec(status);
    if (match === null) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile"), shmem: kb("RssShmem") };
}

/** Starts a gateway in a fresh temp dir and waits until it listens. */
export async function startGatewayChild(
  label: string,
  nodeArgs: readonly string[] = [],
  synchronous: "FULL" | "NORMAL" = "FULL",
  /** A model provider (the streaming phase: its environment and extra config lines), or the Telegram fake to poll. */
  extra: {
    env?: Record<string, string>;
    config?: string;
    telegram?: TelegramTarget | null;
    /** A database target passed as `serve --db` (a postgres:// URL: the replicas mode); default the temp dir's SQLite file. */
    db?: string;
  } = {},
): Promise<GatewayChild> {
  const telegram = extra.telegram ?? null;
  const expectedBackend = extra.db !== undefined && /^postgres(ql)?:\/\//iu.test(extra.db) ? "postgres" : "sqlite";
  const home = await mkdtemp(join(tmpdir(), `threadline-bench-gw-${label}-`));
  const adapters = telegram === null ? "" : `adapters:\n  apiServer:\n    enabled: false\n  telegram:\n    apiRoot: ${JSON.stringify(telegram.apiRoot)}\n`;
  await writeFile(join(home, "config.yaml"), `storage:\n  synchronous: ${synchronous}\n${adapters}${extra.config ?? ""}`);
  const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home };
  for (const name of SCRUBBED) delete env[name];
  Object.assign(env, extra.env ?? {});
  // The token goes by environment, as users are told to pass it (not into the config file).
  if (telegram !== null) env["TELEGRAM_BOT_TOKEN"] = telegram.token;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--expose-gc",
      ...nodeArgs,
      "--import",
      PROBE,
      GATEWAY_BIN,
      "serve",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      ...(extra.db === undefined ? [] : ["--db", extra.db]),
    ],
    { cwd: home, env, stdio: ["ignore", "pipe", "pipe", "ipc"] },
  );
  const output: string[] = [];
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code, signal) => {
      exitCode = code ?? (signal === null ? null : -1);
      resolve(exitCode);
    });
  });

  let seq = 0;
  const waiting = new Map<number, (reply: ProbeReply) => void>();
  child.on("message", (raw) => {
    const reply = raw as ProbeReply;
    const done = waiting.get(reply.seq);
    if (done !== undefined) {
      waiting.delete(reply.seq);
      done(reply);
    }
  });

  const ready = new Promise<{ url: string; agent: string; db: string }>((resolve, reject) => {
    let buffered = "";
    let agent = "";
    let db = "";
    let telegramUp = false;
    const onLine = (line: string): void => {
      output.push(line);
      if (output.length > 200) output.shift();
      let record: { msg?: string; url?: string; database?: string; backend?: string; level?: number };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        return;
      }
      if (record.msg === "store open") {
        db = record.database ?? "";
        if (record.backend !== expectedBackend) reject(new Error(`the gateway opened a ${record.backend} store, expected ${expectedBackend}`));
      }
      if (typeof record.msg === "string" && record.msg.includes("using the built-in echo agent")) agent = "echo";
      if (record.msg === "model provider configured") agent = "provider";
      if (typeof record.msg === "string" && record.msg.startsWith("telegram adapter connected")) telegramUp = true;
      if (typeof record.msg === "string" && record.msg.startsWith("gateway listening on") && typeof record.url === "string") {
        if (telegram !== null && !telegramUp)
          reject(new Error(`the gateway listened before its Telegram adapter connected to the fake:\n${output.join("\n")}`));
        resolve({ url: record.url, agent, db });
      }
      if (record.level !== undefined && record.level >= 50) log(`gateway ${label}: ${line}`);
    };
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      output.push(chunk);
      process.stderr.write(`[gateway ${label}] ${chunk}`);
    });
    void exited.then((code) => reject(new Error(`the gateway exited (${code}) before listening:\n${output.join("\n")}`)));
    setTimeout(() => reject(new Error(`the gateway did not listen within 30 s:\n${output.join("\n")}`)), 30_000).unref();
  });

  let started: { url: string; agent: string; db: string };
  try {
    started = await ready;
  } catch (error) {
    child.kill("SIGKILL");
    await rm(home, { recursive: true, force: true });
    throw error;
  }
  const pid = child.pid!;
  const url = started.url;
  log(`gateway ${label}: pid ${pid}, ${url}, agent ${started.agent || "?"}, db ${started.db}`);

  const probe = (request: ProbeRequest): Promise<ProbeReply> => {
    const n = ++seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(n);
        reject(new Error(`the gateway probe did not answer "${request.cmd}" within 60 s`));
      }, 60_000);
      waiting.set(n, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      child.send({ ...request, seq: n } satisfies ProbeCommand);
    });
  };

  return {
    pid,
    url,
    home,
    dbPath: started.db,
    agent: started.agent,
    probe: probe as GatewayChild["probe"],
    rssBytes: () => readVmRssBytes(pid),
    async metrics(): Promise<string> {
      const response = await fetch(`${url}/metrics`);
      if (!response.ok) throw new Error(`GET /metrics: ${response.status}`);
      return response.text();
    },
    async stop(): Promise<number | null> {
      if (exitCode !== undefined) return exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async cleanUp(): Promise<void> {
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The sums and counts of the gateway's turn and store histograms. */
export interface MetricsSnapshot {
  turnSecondsSum: number;
  turnCount: number;
  /** Store seconds by operation. */
  storeSeconds: Record<string, number>;
  storeCalls: Record<string, number>;
}

export function parseMetrics(text: string): MetricsSnapshot {
  const snapshot: MetricsSnapshot = { turnSecondsSum: 0, turnCount: 0, storeSeconds: {}, storeCalls: {} };
  for (const line of text.split("\n")) {
    let m = /^threadline_turn_seconds_(sum|count) (\S+)$/u.exec(line);
    if (m !== null) {
      if (m[1] === "sum") snapshot.turnSecondsSum = Number(m[2]);
      else snapshot.turnCount = Number(m[2]);
      continue;
    }
    m = /^threadline_store_seconds_(sum|count)\{operation="([^"]+)"\} (\S+)$/u.exec(line);
    if (m !== null) {
      const bucket = m[1] === "sum" ? snapshot.storeSeconds : snapshot.storeCalls;
      bucket[m[2]!] = Number(m[3]);
    }
  }
  return snapshot;
}
