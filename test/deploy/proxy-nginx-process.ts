/**
 * Runs the shipped nginx site (`deploy/nginx/threadline.conf`) for real, as a child process
 * on loopback ports, with a self-signed certificate for its server name, and talks to it over
 * HTTPS with that name as SNI and Host.
 *
 * The site file is used as shipped except for a documented, minimal substitution
 * ({@link renderNginxSite}): the `listen` ports (80 and 443 become free loopback ports; the
 * IPv6 `listen [::]:…` lines are dropped), the certificate paths, and the upstream port.
 * Each substitution must match exactly as often as the shipped file has it, so a changed
 * file fails here instead of being tested half-substituted. The site is included in a
 * minimal main config ({@link nginxMainConfig}) whose only settings are those a non-packaged
 * nginx needs: temp paths in the temp directory and, as root, workers as `nobody`.
 *
 * nginx itself is the Debian package (`/usr/sbin/nginx`): missing, it is an error, never a
 * skip (`.ci/run` installs it).
 *
 * @module
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "../serve/gateway-process.js";
import { DeadlineError, waitFor, withDeadline } from "../support/wait-for.js";

const run = promisify(execFile);

/** The shipped site file. */
export const NGINX_SITE = fileURLToPath(new URL("../../deploy/nginx/threadline.conf", import.meta.url));
/** The shipped config snippet paired with it. */
export const NGINX_GATEWAY_CONFIG = fileURLToPath(new URL("../../deploy/nginx/config.yaml", import.meta.url));
/** The public name the shipped files use (example.com is reserved: it is nobody's real host). */
export const PUBLIC_NAME = "gateway.example.com";

/** The nginx binary: `/usr/sbin/nginx` or `nginx` on PATH; throws saying how to install it. */
export function nginxBinary(): string {
  const candidates = ["/usr/sbin/nginx", ...(process.env["PATH"] ?? "").split(delimiter).map((dir) => join(dir, "nginx"))];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not this one
    }
  }
  throw new Error(
    "nginx is not installed, so the proxy example (deploy/nginx/threadline.conf) cannot be tested: install it with `apt-get install nginx` (.ci/run does) and run the test again.",
  );
}

/** Where the rendered site listens and what it forwards to. */
export interface SitePorts {
  /** Replaces `listen 80`. */
  http: number;
  /** Replaces `listen 443`. */
  https: number;
  /** Replaces the upstream's `127.0.0.1:8787`. */
  upstream: number;
}

/** The certificate files that replace the Let's Encrypt paths. */
export interface CertificateFiles {
  cert: string;
  key: string;
}

/** Replaces `pattern` in `text`, requiring exactly `count` matches. */
function substitute(text: string, pattern: RegExp, replacement: string, count: number, what: string): string {
  const found = text.match(pattern)?.length ?? 0;
  if (found !== count)
    throw new Error(`deploy/nginx/threadline.conf: expected ${count} ${what}, found ${found}: update the test's substitution with the file.`);
  return text.replace(pattern, replacement);
}

/**
 * The shipped site with only ports, certificate paths and the upstream port replaced (see the
 * module comment): `listen 80` → `listen 127.0.0.1:<http>`, `listen 443 …` → `listen
 * 127.0.0.1:<https> …`, `listen [::]:…` lines dropped, the two `/etc/letsencrypt/…` paths →
 * the temp certificate, `server 127.0.0.1:8787` → `server 127.0.0.1:<upstream>`.
 */
export function renderNginxSite(source: string, ports: SitePorts, cert: CertificateFiles): string {
  let text = source;
  text = substitute(text, /^[ \t]*listen \[::\]:(?:80|443)\b[^;\n]*;\n/gmu, "", 3, "IPv6 listen lines");
  text = substitute(text, /^([ \t]*)listen 80;/gmu, `$1listen 127.0.0.1:${ports.http};`, 1, "`listen 80;`");
  text = substitute(text, /^([ \t]*)listen 443 /gmu, `$1listen 127.0.0.1:${ports.https} `, 2, "`listen 443 …;`");
  text = substitute(text, /\bssl_certificate \/etc\/letsencrypt\/live\/[^;\s]+;/gu, `ssl_certificate ${cert.cert};`, 1, "ssl_certificate paths");
  text = substitute(text, /\bssl_certificate_key \/etc\/letsencrypt\/live\/[^;\s]+;/gu, `ssl_certificate_key ${cert.key};`, 1, "ssl_certificate_key paths");
  text = substitute(text, /\bserver 127\.0\.0\.1:8787;/gu, `server 127.0.0.1:${ports.upstream};`, 1, "upstream `server 127.0.0.1:8787;`");
  return text;
}

/** A main config that includes `site`: temp paths under `dir`, and `user nobody nogroup` when running as root. */
export function nginxMainConfig(dir: string, sitePath: string): string {
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  return [
    ...(asRoot ? ["user nobody nogroup;"] : []),
    "worker_processes 1;",
    "events { worker_connections 128; }",
    "http {",
    `    access_log ${join(dir, "access.log")};`,
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `    ${kind}_temp_path ${join(dir, `${kind}_temp`)};`),
    `    include ${sitePath};`,
    "}",
    "",
  ].join("\n");
}

/** A self-signed certificate for `name` (EC P-256, one day) in `dir`, made with `openssl`. */
export async function selfSignedCertificate(dir: string, name: string): Promise<CertificateFiles & { pem: string }> {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
    "-addext",
    `subjectAltName=DNS:${name}`,
    "-keyout",
    key,
    "-out",
    cert,
  ]);
  return { cert, key, pem: await readFile(cert, "utf8") };
}

/** An HTTPS response read whole. */
export interface HttpsResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A response being read ({@link NginxProcess.stream}). */
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

/** Options of {@link NginxProcess.request}. */
export interface ProxyRequest {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The TLS server name (default the public name; `null`: none, as a client that connects by IP). */
  servername?: string | null;
  /** The Host header (default the public name). */
  host?: string;
}

/** A running nginx serving the rendered site. */
export class NginxProcess {
  readonly child: ChildProcess;
  readonly dir: string;
  readonly ports: SitePorts;
  /** The self-signed certificate (PEM), the only CA the test clients trust. */
  readonly ca: string;
  #output = "";
  readonly exited: Promise<void>;
  #running = true;

  constructor(child: ChildProcess, dir: string, ports: SitePorts, ca: string) {
    this.child = child;
    this.dir = dir;
    this.ports = ports;
    this.ca = ca;
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

  /** What nginx wrote to stderr/stdout (its error log). */
  output(): string {
    return this.#output;
  }

  get running(): boolean {
    return this.#running;
  }

  /** One HTTPS request to the proxy (127.0.0.1, trusting only the test certificate). */
  async request(options: ProxyRequest): Promise<HttpsResponse> {
    const streamed = await this.stream(options);
    await withDeadline(streamed.done, { timeoutMs: 20_000, what: `the body of ${options.method ?? "GET"} ${options.path} through nginx` });
    return { status: streamed.status, headers: streamed.headers, body: streamed.text() };
  }

  /**
   * One HTTPS request whose response is read as it arrives: resolves on the response head;
   * `text()` is what came so far, `done` settles at the end.
   */
  stream(options: ProxyRequest): Promise<StreamedResponse> {
    return new Promise((resolve, reject) => {
      const servername = options.servername === undefined ? PUBLIC_NAME : options.servername;
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port: this.ports.https,
          path: options.path,
          method: options.method ?? "GET",
          headers: { host: options.host ?? PUBLIC_NAME, ...options.headers },
          ca: this.ca,
          ...(servername === null ? {} : { servername }),
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
          // Handled here too: a stream the test closes (or nginx stopping) is not an unhandled rejection.
          done.catch(() => {});
          // Reading the body has no deadline of its own here: the caller bounds it (withDeadline).
          req.setTimeout(0);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: () => body, ended: () => ended, done, close: () => req.destroy() });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer from nginx to ${options.method ?? "GET"} ${options.path} within 20 s`)));
      req.on("error", reject);
      req.end(options.body);
    });
  }

  /** Stops nginx (SIGTERM to the master, up to 10 s; then SIGKILL to its process group) and removes the temp directory. */
  async stop(): Promise<void> {
    if (this.#running && this.child.pid !== undefined) {
      this.child.kill("SIGTERM");
      try {
        await withDeadline(this.exited, { timeoutMs: 10_000, what: `nginx (pid ${this.child.pid}) to exit after SIGTERM` });
      } catch (error) {
        if (!(error instanceof DeadlineError)) throw error;
        // The master and its workers share the group this test started (detached).
        process.kill(-this.child.pid, "SIGKILL");
        await this.exited;
      }
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Renders the shipped site for an upstream on `upstreamPort`, starts nginx on free loopback
 * ports (`daemon off`, error log on stderr) and resolves once it answers over HTTPS.
 */
export async function startNginx(upstreamPort: number): Promise<NginxProcess> {
  const binary = nginxBinary();
  const dir = await mkdtemp(join(tmpdir(), "threadline-nginx-"));
  // Workers run as nobody when the test runs as root: they must reach the temp paths.
  await chmod(dir, 0o755);
  const cert = await selfSignedCertificate(dir, PUBLIC_NAME);
  const ports: SitePorts = { http: await freePort(), https: await freePort(), upstream: upstreamPort };
  const sitePath = join(dir, "threadline.conf");
  await writeFile(sitePath, renderNginxSite(await readFile(NGINX_SITE, "utf8"), ports, cert), "utf8");
  const confPath = join(dir, "nginx.conf");
  await writeFile(confPath, nginxMainConfig(dir, sitePath), "utf8");
  const child = spawn(binary, ["-p", dir, "-e", "stderr", "-c", confPath, "-g", `daemon off; error_log stderr; pid ${join(dir, "nginx.pid")};`], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const nginx = new NginxProcess(child, dir, ports, cert.pem);
  try {
    await waitFor(
      async () => {
        if (!nginx.running) throw new Error(`nginx exited before it answered; its output:\n${nginx.output()}`);
        const response = await nginx.request({ path: "/nothing-here" });
        return response.status === 404;
      },
      { what: `nginx to answer on https://127.0.0.1:${ports.https}`, timeoutMs: 15_000, intervalMs: 50, describe: () => nginx.output() },
    );
  } catch (error) {
    await nginx.stop();
    throw error;
  }
  return nginx;
}
