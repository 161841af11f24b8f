/**
 * `serve_healthz`: the ms from spawning `node <root>/dist/cli/main.js serve` (no chat
 * platform configured: the api-server adapter and the built-in echo agent, SQLite in a temp
 * THREADLINE_HOME) to its first 200 from `GET /healthz` on loopback, polled every few ms;
 * then SIGTERM and the ms until it exits.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { get } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { childEnv } from "./timed-command.js";

/** How often /healthz is asked while serve starts. */
export const POLL_EVERY_MS = 5;
/** A start that has not answered by then fails the run. */
const START_TIMEOUT_MS = 60_000;
/** A SIGTERM that has not ended serve by then gets a SIGKILL (and fails the run). */
const STOP_TIMEOUT_MS = 30_000;

/** One start and stop of serve. */
export interface ServeTiming {
  /** Spawn → first 200 from /healthz, ms. */
  healthzMs: number;
  /** SIGTERM → exit, ms. */
  stopMs: number;
}

/** A temp THREADLINE_HOME for serve: a minimal config (no chat platform) and its own copy of the sessions database. */
export interface ServeHome {
  home: string;
  remove(): Promise<void>;
}

/**
 * Makes the home: `config.yaml` names no chat platform and no model provider (so the
 * api-server adapter and the echo agent); `state.db` is a copy of `databasePath`, so serve
 * starts on a database with history without touching the cached one.
 */
export async function makeServeHome(databasePath: string): Promise<ServeHome> {
  const home = await mkdtemp(join(tmpdir(), "threadline-bench-cli-serve-"));
  await writeFile(join(home, "config.yaml"), "# bench:cli: no chat platforms, no model provider (echo agent)\ngateway:\n  host: 127.0.0.1\n");
  await copyFile(databasePath, join(home, "state.db"));
  return { home, remove: () => rm(home, { recursive: true, force: true }) };
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The status of one `GET /healthz` (no keep-alive), or 0 when nothing answers. */
function healthzStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const request = get({ host: "127.0.0.1", port, path: "/healthz", agent: false, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once("timeout", () => request.destroy());
    request.once("error", () => resolve(0));
  });
}

/**
 * Starts serve from `root`'s dist in `home`, times it to the first 200 from /healthz, stops it.
 *
 * @throws when serve exits before answering, does not answer within 60 s, or does not stop within 30 s.
 */
export async function timeServe(root: string, home: string): Promise<ServeTiming> {
  const port = await freePort();
  let output = "";
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, "dist", "cli", "main.js"), "serve", "--host", "127.0.0.1", "--port", String(port)], {
    cwd: home,
    env: childEnv({ THREADLINE_HOME: home }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString("utf8")).slice(-4000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exit = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  try {
    let healthzMs: number | null = null;
    while (healthzMs === null) {
      if (exited !== null) throw new Error(`serve exited (${JSON.stringify(exited)}) before /healthz answered:\n${output}`);
      if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`serve did not answer /healthz within ${START_TIMEOUT_MS} ms:\n${output}`);
      if ((await healthzStatus(port)) === 200) healthzMs = performance.now() - started;
      else await sleep(POLL_EVERY_MS);
    }
    const stopping = performance.now();
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exit;
    clearTimeout(timer);
    const stopMs = performance.now() - stopping;
    const end = exited as { code: number | null; signal: NodeJS.Signals | null } | null;
    if (end?.signal === "SIGKILL") throw new Error(`serve did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM:\n${output}`);
    return { healthzMs, stopMs };
  } finally {
    if (exited === null) {
      child.kill("SIGKILL");
      await exit;
    }
  }
}
