/**
 * A TLS proxy (nginx or Caddy) running one of the shipped examples as a child process on
 * loopback ports, and HTTPS requests to it with the public name as SNI and Host, trusting
 * only the test's certificate authority. The proxy-specific parts (rendering the shipped
 * file, the command line) are in `proxy-nginx-process.ts` and `proxy-caddy-process.ts`.
 *
 * @module
 */
import type { ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { rm } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { delimiter, join } from "node:path";
import { DeadlineError, waitFor, withDeadline } from "../support/wait-for.js";

/** The public name the shipped files use (example.com is reserved: it is nobody's real host). */
export const PUBLIC_NAME = "gateway.example.com";

/** Where a rendered example listens and what it forwards to. */
export interface SitePorts {
  /** Replaces port 80. */
  http: number;
  /** Replaces port 443. */
  https: number;
  /** Replaces the upstream's 127.0.0.1:8787. */
  upstream: number;
}

/** `name` in /usr/sbin, /usr/bin or on PATH; throws with `install` (how to get it) when it is nowhere. */
export function findBinary(name: string, install: string): string {
  const dirs = ["/usr/sbin", "/usr/bin", ...(process.env["PATH"] ?? "").split(delimiter)];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`${name} is not installed, so the proxy example cannot be tested: ${install}`);
}

/** Replaces `pattern` in `text`, requiring exactly `count` matches (a changed file fails here instead of being tested half-substituted). */
export function substitute(file: string, text: string, pattern: RegExp, replacement: string, count: number, what: string): string {
  const found = text.match(pattern)?.length ?? 0;
  if (found !== count) throw new Error(`${file}: expected ${count} ${what}, found ${found}: update the test's substitution with the file.`);
  return text.replace(pattern, replacement);
}

/** An HTTPS response read whole. */
export interface HttpsResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A response being read ({@link ProxyProcess.stream}). */
export interface StreamedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body received so far. */
  text(): string;
  /** Whether the body has ended. */
  ended(): boolean;
  /** Settles when the body has ended. */
  done: Promise<void>;
  /** Closes the connection (a stream that does not end by itself). */
  close(): void;
}

/** Options of {@link ProxyProcess.request}. */
export interface ProxyRequest {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** A running proxy. */
export class ProxyProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Its temp directory (removed by {@link stop}). */
  readonly dir: string;
  readonly ports: SitePorts;
  /** The PEM of the certificate authority the test clients trust (set once the proxy has one). */
  ca = "";
  readonly exited: Promise<void>;
  #output = "";
  #running = true;

  constructor(name: string, child: ChildProcess, dir: string, ports: SitePorts) {
    this.name = name;
    this.child = child;
    this.dir = dir;
    this.ports = ports;
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => (this.#output += chunk));
    child.stderr?.on("data", (chunk: string) => (this.#output += chunk));
    this.exited = new Promise((resolve) =>
      child.once("exit", () => {
        this.#running = false;
        resolve();
      }),
    );
  }

  /** What the proxy wrote to stdout and stderr (its log). */
  output(): string {
    return this.#output;
  }

  get running(): boolean {
    return this.#running;
  }

  /** One HTTPS request (body read whole, at most 20 s). */
  async request(options: ProxyRequest): Promise<HttpsResponse> {
    const streamed = await this.stream(options);
    await withDeadline(streamed.done, { timeoutMs: 20_000, what: `the body of ${options.method ?? "GET"} ${options.path} through ${this.name}` });
    return { status: streamed.status, headers: streamed.headers, body: streamed.text() };
  }

  /**
   * One HTTPS request to 127.0.0.1 with the public name as SNI and Host, whose response is read
   * as it arrives: resolves on the response head (at most 20 s); `text()` is what came so far.
   */
  stream(options: ProxyRequest): Promise<StreamedResponse> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port: this.ports.https,
          path: options.path,
          method: options.method ?? "GET",
          headers: { host: PUBLIC_NAME, ...options.headers },
          servername: PUBLIC_NAME,
          ca: this.ca,
          agent: false,
          timeout: 20_000,
        },
        (res) => {
          let body = "";
          let ended = false;
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          const done = new Promise<void>((resolveDone, rejectDone) => {
            res.on("end", () => {
              ended = true;
              resolveDone();
            });
            res.on("error", rejectDone);
          });
          // Handled here too: a stream the test closes (or a proxy stopping) is not an unhandled rejection.
          done.catch(() => {});
          // Reading the body has no deadline of its own here: the caller bounds it (withDeadline).
          req.setTimeout(0);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: () => body, ended: () => ended, done, close: () => req.destroy() });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer from ${this.name} to ${options.method ?? "GET"} ${options.path} within 20 s`)));
      req.on("error", reject);
      req.end(options.body);
    });
  }

  /** Waits until the proxy answers a request over HTTPS, whatever the status (at most 15 s); fails fast if it exits. */
  async ready(): Promise<void> {
    await waitFor(
      async () => {
        if (!this.running) throw new Error(`${this.name} exited before it answered; its output:\n${this.output()}`);
        if (this.ca === "") return false;
        return (await this.request({ path: "/nothing-here" })).status > 0;
      },
      { what: `${this.name} to answer on https://127.0.0.1:${this.ports.https}`, timeoutMs: 15_000, intervalMs: 50, describe: () => this.output() },
    );
  }

  /** Stops the proxy (SIGTERM, up to 10 s; then SIGKILL to the process group it was started in) and removes its temp directory. */
  async stop(): Promise<void> {
    if (this.#running && this.child.pid !== undefined) {
      this.child.kill("SIGTERM");
      try {
        await withDeadline(this.exited, { timeoutMs: 10_000, what: `${this.name} (pid ${this.child.pid}) to exit after SIGTERM` });
      } catch (error) {
        if (!(error instanceof DeadlineError)) throw error;
        // The proxy and its workers share the group this test started it in (detached).
        process.kill(-this.child.pid, "SIGKILL");
        await this.exited;
      }
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
