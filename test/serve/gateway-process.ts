/**
 * Helpers for the end-to-end tests of `threadline serve`: they run the BUILT bin
 * (`dist/cli/main.js`, built by `npm test` / `npm run build`) as a real child process
 * with its own temp `THREADLINE_HOME` and a free loopback port, and talk to it over HTTP.
 *
 * - {@link makeHome}: a temp data home, optionally with a `config.yaml`.
 * - {@link spawnGateway}: starts `serve`, waits for `GET /healthz`; {@link GatewayProcess}
 *   sends signals and waits for the exit.
 * - {@link runServe}: runs `serve` expecting it to exit by itself (config errors).
 * - {@link databaseOf}: a home's SQLite file; {@link withDatabase}: open it, use it, close it.
 * - {@link freePort}, {@link signBody}, {@link waitFor}, {@link postChat}, {@link postWebhook},
 *   {@link startCallbackServer} (records the gateway's signed webhook replies).
 * - {@link cleanupProcesses}: call in `afterEach`: kills every child still running,
 *   closes the callback servers and removes the temp homes.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { openSessionDB, type SessionDB } from "../../src/store/index.js";
import { DeadlineError, waitFor, withDeadline } from "../support/wait-for.js";

/** The built bin. */
export const BIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** Environment variables of the parent that must not leak into a gateway under test. */
const SCRUBBED_ENV = ["THREADLINE_HOME", "THREADLINE_DB", "THREADLINE_CONFIG", "OPENAI_BASE_URL", "OPENAI_API_KEY", "THREADLINE_MODEL"];

const children = new Set<GatewayProcess>();
const homes = new Set<string>();
const servers = new Set<{ close(): Promise<void> }>();

/** How a child process ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A port nobody listens on right now (bind to port 0 on loopback, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `sha256=<hex HMAC-SHA256(secret, body)>`: the generic webhook signs `"<timestamp>.<raw body>"` this way. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** The webhook headers of a body: `X-Threadline-Timestamp` (Unix seconds, default now) and the signature of `"<timestamp>.<body>"`. */
export function webhookHeaders(secret: string, body: string, timestampSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  return { "x-threadline-timestamp": String(timestampSeconds), "x-threadline-signature": signBody(secret, `${timestampSeconds}.${body}`) };
}

/** Whether a signature header matches `"<timestamp>.<body>"` (constant-time compare), with a timestamp within 5 minutes. */
export function signatureValid(secret: string, body: string, header: string | undefined, timestamp?: string): boolean {
  if (typeof header !== "string" || timestamp === undefined || Math.abs(Number(timestamp) - Date.now() / 1000) > 300) return false;
  const expected = Buffer.from(signBody(secret, `${timestamp}.${body}`));
  const given = Buffer.from(header.trim());
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Polling with a deadline lives in test/support/wait-for.ts; re-exported for the e2e tests. */
export { waitFor };

/** Creates a temp data home; with `config`, writes it as `config.yaml` (a string is written as is). */
export async function makeHome(config?: Record<string, unknown> | string): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), "threadline-serve-e2e-"));
  homes.add(home);
  if (config !== undefined) await writeConfig(home, config);
  return home;
}

/** (Re)writes `config.yaml` in a home. */
export async function writeConfig(home: string, config: Record<string, unknown> | string): Promise<string> {
  const path = join(home, "config.yaml");
  await writeFile(path, typeof config === "string" ? config : stringify(config), "utf8");
  return path;
}

/** The default SQLite database of a home. */
export function databaseOf(home: string): string {
  return join(home, "state.db");
}

/** Opens a home's database, runs `use`, closes it. */
export async function withDatabase<T>(home: string, use: (db: SessionDB) => Promise<T>): Promise<T> {
  return withDatabaseAt(databaseOf(home), use);
}

/** Opens a database (a SQLite path, or a PostgreSQL URL with its schema), runs `use`, closes it. */
export async function withDatabaseAt<T>(target: string, use: (db: SessionDB) => Promise<T>): Promise<T> {
  const db = await openSessionDB(target);
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

/** The environment of a child: the parent's minus Threadline/OpenAI settings, plus `env`. */
function childEnv(home: string, env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED_ENV) delete out[name];
  out["THREADLINE_HOME"] = home;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}

/** A running `threadline serve` child. */
export class GatewayProcess {
  readonly child: ChildProcess;
  readonly home: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Resolves when the child has exited. */
  readonly exited: Promise<ExitStatus>;
  #output = "";
  #exit: ExitStatus | null = null;

  constructor(child: ChildProcess, home: string, port: number) {
    this.child = child;
    this.home = home;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => (this.#output += chunk));
    child.stderr?.on("data", (chunk: string) => (this.#output += chunk));
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.#exit = { code, signal };
        children.delete(this);
        resolve(this.#exit);
      });
    });
  }

  /** Everything the child wrote to stdout and stderr so far (pino JSON lines, errors). */
  output(): string {
    return this.#output;
  }

  /** The parsed pino log lines so far. */
  logLines(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const line of this.#output.split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a partial line
      }
    }
    return out;
  }

  /** How it exited, or `null` while it runs. */
  get exitStatus(): ExitStatus | null {
    return this.#exit;
  }

  /** Sends a signal and waits for the exit (up to `timeoutMs`, default 20 s, then SIGKILL and throw). */
  async signal(signal: NodeJS.Signals, timeoutMs = 20_000): Promise<ExitStatus> {
    if (this.#exit !== null) return this.#exit;
    this.child.kill(signal);
    try {
      return await withDeadline(this.exited, { timeoutMs, what: `the gateway (pid ${this.child.pid}) to exit after ${signal}` });
    } catch (error) {
      if (!(error instanceof DeadlineError)) throw error;
      this.child.kill("SIGKILL");
      await this.exited;
      throw new Error(`gateway (pid ${this.child.pid}) did not exit within ${timeoutMs} ms of ${signal}; output:\n${this.#output}`);
    }
  }

  /** SIGTERM and wait: the graceful stop. */
  stop(timeoutMs?: number): Promise<ExitStatus> {
    return this.signal("SIGTERM", timeoutMs);
  }

  /** SIGKILL and wait: a crash. */
  kill(): Promise<ExitStatus> {
    return this.signal("SIGKILL");
  }
}

/** Options of {@link spawnGateway}. */
export interface SpawnGatewayOptions {
  home: string;
  /** Extra environment (e.g. OPENAI_BASE_URL); `undefined` values remove a variable. */
  env?: Record<string, string | undefined>;
  /** Extra arguments after `serve` (before `--port`). */
  args?: string[];
  /** The port (default: a free one, retried if another process took it first). */
  port?: number;
  /** How long to wait for a healthy `/healthz` (default 20 s). */
  timeoutMs?: number;
}

/** Starts `threadline serve` and resolves once `GET /healthz` answers 200 with every chat platform connected. */
export async function spawnGateway(options: SpawnGatewayOptions): Promise<GatewayProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawn(process.execPath, [BIN, "serve", ...(options.args ?? []), "--port", String(port)], {
      env: childEnv(options.home, options.env ?? {}),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const gateway = new GatewayProcess(child, options.home, port);
    children.add(gateway);
    try {
      await waitForHealth(gateway, options.timeoutMs ?? 20_000);
      return gateway;
    } catch (error) {
      if (gateway.exitStatus === null) await gateway.kill();
      // Another process grabbed the port between freePort() and listen(): try another one.
      if (options.port === undefined && attempt < 3 && gateway.output().includes("EADDRINUSE")) continue;
      throw error;
    }
  }
}

/**
 * Waits for `GET /healthz` to answer 200 `{status:"ok"}` with no chat platform still connecting
 * (`connecting: []`: they connect after the gateway listens); fails fast when the child exits.
 */
export async function waitForHealth(gateway: GatewayProcess, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    async () => {
      const exit = gateway.exitStatus;
      if (exit !== null) {
        throw new Error(`gateway exited before it was healthy (code ${exit.code}, signal ${exit.signal}); output:\n${gateway.output()}`);
      }
      try {
        const response = await fetch(`${gateway.url}/healthz`, { signal: AbortSignal.timeout(2_000) });
        if (response.status !== 200) return false;
        const body = (await response.json()) as { status?: string; connecting?: string[] };
        return body.status === "ok" && body.connecting?.length === 0;
      } catch {
        return false;
      }
    },
    { what: `GET ${gateway.url}/healthz`, timeoutMs, intervalMs: 50, describe: () => gateway.output() },
  ).catch((error: unknown) => {
    // A child that exited is reported as such rather than as a timeout.
    const exit = gateway.exitStatus;
    if (exit !== null && !String(error).includes("exited before")) {
      throw new Error(`gateway exited before it was healthy (code ${exit.code}, signal ${exit.signal}); output:\n${gateway.output()}`);
    }
    throw error;
  });
}

/** Runs `threadline serve` expecting it to exit by itself (e.g. a config error). */
export async function runServe(options: {
  home: string;
  args?: string[];
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  // A free port unless the test names one: chat platforms connect (and may refuse the start) after the gateway listens.
  const args = options.args ?? [];
  const child = spawn(process.execPath, [BIN, "serve", ...args, ...(args.includes("--port") ? [] : ["--port", "0"])], {
    env: childEnv(options.home, options.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const gateway = new GatewayProcess(child, options.home, 0);
  children.add(gateway);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.on("data", (chunk: string) => (stderr += chunk));
  let result: ExitStatus;
  try {
    result = await withDeadline(gateway.exited, { timeoutMs: options.timeoutMs ?? 15_000, what: "threadline serve to exit by itself" });
  } catch (error) {
    if (!(error instanceof DeadlineError)) throw error;
    await gateway.kill();
    throw new Error(`threadline serve did not exit by itself; output:\n${gateway.output()}`);
  }
  return { ...result, stdout, stderr };
}

/** An OpenAI-style chat completion response as the api-server returns it. */
export interface ChatCompletionBody {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{ index: number; message: { role: string; content: string }; finish_reason: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  error?: { message: string; type: string; code: number };
}

/** A response of the gateway: status, headers and the parsed JSON body. */
export interface JsonResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * `POST /v1/chat/completions` with one user message. The session comes from
 * `sessionKey` (the `X-Threadline-Session-Key` header) or `user`.
 */
export async function postChat(
  url: string,
  text: string,
  options: { sessionKey?: string; user?: string; token?: string; authorization?: string; timeoutMs?: number } = {},
): Promise<JsonResponse<ChatCompletionBody>> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.sessionKey !== undefined) headers["x-threadline-session-key"] = options.sessionKey;
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`;
  if (options.authorization !== undefined) headers["authorization"] = options.authorization;
  const body: Record<string, unknown> = { model: "threadline", messages: [{ role: "user", content: text }] };
  if (options.user !== undefined) body["user"] = options.user;
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 45_000),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ChatCompletionBody };
}

/** The text of a chat completion (throws with the body when the request failed). */
export function completionText(response: JsonResponse<ChatCompletionBody>): string {
  if (response.status !== 200) throw new Error(`chat completion failed with ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.choices[0]!.message.content;
}

/** An inbound webhook message. */
export interface WebhookMessage {
  chatId: string;
  userId: string;
  text: string;
  messageId?: string;
  threadId?: string;
  userName?: string;
  chatName?: string;
  chatType?: "dm" | "group" | "channel" | "thread";
}

/**
 * POSTs a webhook message signed with `secret` and a timestamp (`timestamp`, default now;
 * `signature` replaces the signature, `null`: no signature header). Resolves with the status
 * and the parsed body.
 */
export async function postWebhook(
  url: string,
  secret: string,
  message: WebhookMessage | Record<string, unknown>,
  options: { path?: string; signature?: string | null; timestamp?: number; headers?: Record<string, string> } = {},
): Promise<JsonResponse<Record<string, unknown>>> {
  const raw = JSON.stringify(message);
  const signed = webhookHeaders(secret, raw, options.timestamp);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-threadline-timestamp": signed["x-threadline-timestamp"]!,
    ...options.headers,
  };
  const signature = options.signature === undefined ? signed["x-threadline-signature"]! : options.signature;
  if (signature !== null) headers["x-threadline-signature"] = signature;
  const response = await fetch(`${url}${options.path ?? "/webhook"}`, {
    method: "POST",
    headers,
    body: raw,
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: response.status, headers: response.headers, body };
}

/** A reply the gateway POSTed to the callback URL. */
export interface CallbackDelivery {
  /** The parsed payload: `{ chatId, userId, threadId, text, kind, inReplyTo, sessionId }`. */
  body: {
    chatId: string | null;
    userId: string | null;
    threadId: string | null;
    text: string;
    kind: "reply" | "notice" | "error";
    inReplyTo: string[];
    sessionId: string | null;
  };
  raw: string;
  signature: string | undefined;
  /** Whether the `X-Threadline-Signature` header matched `"<X-Threadline-Timestamp>.<raw body>"` and the secret, with a current timestamp. */
  signatureValid: boolean;
}

/** The HTTP server the webhook adapter POSTs replies to. */
export interface CallbackServer {
  /** The callback URL to configure. */
  url: string;
  /** Every delivery so far, in arrival order (a live array). */
  deliveries: CallbackDelivery[];
  /** Waits for a delivery matching `match` (and returns it). */
  waitFor(match: (delivery: CallbackDelivery) => boolean, what: string, timeoutMs?: number): Promise<CallbackDelivery>;
  /** Waits for the delivery answering the inbound message `messageId`. */
  replyTo(messageId: string, timeoutMs?: number): Promise<CallbackDelivery>;
  close(): Promise<void>;
}

/** Starts a callback server on loopback that records the gateway's signed replies (answers 200). */
export async function startCallbackServer(secret: string): Promise<CallbackServer> {
  const deliveries: CallbackDelivery[] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const header = req.headers["x-threadline-signature"];
      const signature = Array.isArray(header) ? header[0] : header;
      const stamp = req.headers["x-threadline-timestamp"];
      const timestamp = Array.isArray(stamp) ? stamp[0] : stamp;
      let body: CallbackDelivery["body"];
      try {
        body = JSON.parse(raw) as CallbackDelivery["body"];
      } catch {
        res.writeHead(400).end();
        return;
      }
      deliveries.push({ body, raw, signature, signatureValid: signatureValid(secret, raw, signature, timestamp) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | null = null;
  const callback: CallbackServer = {
    url: `http://127.0.0.1:${port}/replies`,
    deliveries,
    waitFor: (match, what, timeoutMs) =>
      waitFor(() => deliveries.find(match), {
        what,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        describe: () =>
          `deliveries so far: ${JSON.stringify(
            deliveries.map((d) => d.body),
            null,
            1,
          )}`,
      }),
    replyTo: (messageId, timeoutMs) => callback.waitFor((d) => d.body.inReplyTo.includes(messageId), `the callback answering ${messageId}`, timeoutMs),
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
  servers.add(callback);
  return callback;
}

/** Reads one Prometheus sample (no labels) from `GET /metrics`. */
export async function metricValue(url: string, name: string): Promise<number | null> {
  const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  const text = await response.text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
}

/** Kills every gateway child still running, closes callback servers and removes temp homes. */
export async function cleanupProcesses(): Promise<void> {
  await Promise.all([...children].map((gateway) => gateway.kill().catch(() => {})));
  await Promise.all([...servers].map((server) => server.close().catch(() => {})));
  servers.clear();
  await Promise.all([...homes].map((home) => rm(home, { recursive: true, force: true }).catch(() => {})));
  homes.clear();
}
