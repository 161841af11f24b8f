/**
 * Runs the shipped nginx site (`deploy/nginx/threadline.conf`) for real: Debian's nginx
 * (`/usr/sbin/nginx`; missing, it is an error, never a skip: `.ci/run` installs it) on free
 * loopback ports, with a self-signed certificate for the shipped name made by `openssl`.
 *
 * The site is used as shipped except for a documented, minimal substitution
 * ({@link renderNginxSite}): the `listen` ports (80 and 443 become free loopback ports; the
 * IPv6 `listen [::]:…` lines are dropped), the certificate paths, and the upstream port.
 * Each must match exactly as often as the shipped file has it. The site is included in a
 * minimal main config ({@link nginxMainConfig}) holding only what a non-packaged nginx needs:
 * temp paths in the temp directory and, as root, workers as `nobody`. {@link testShippedSite}
 * runs `nginx -t` on the file with only its certificate paths replaced.
 *
 * @module
 */
import { execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "../serve/gateway-process.js";
import { findBinary, ProxyProcess, PUBLIC_NAME, substitute, type SitePorts } from "./proxy-process.js";

const run = promisify(execFile);

/** The shipped site file. */
export const NGINX_SITE = fileURLToPath(new URL("../../deploy/nginx/threadline.conf", import.meta.url));

/** The certificate files that replace the Let's Encrypt paths. */
export interface CertificateFiles {
  cert: string;
  key: string;
}

/**
 * The shipped site with only ports, certificate paths and the upstream port replaced:
 * `listen 80;` → `listen 127.0.0.1:<http>;`, `listen 443 …` → `listen 127.0.0.1:<https> …`,
 * `listen [::]:…` lines dropped, the two `/etc/letsencrypt/…` paths → the temp certificate,
 * `server 127.0.0.1:8787;` → `server 127.0.0.1:<upstream>;`.
 */
export function renderNginxSite(source: string, ports: SitePorts, cert: CertificateFiles): string {
  const file = "deploy/nginx/threadline.conf";
  let text = withCertificate(source, cert);
  text = substitute(file, text, /^[ \t]*listen \[::\]:(?:80|443)\b[^;\n]*;\n/gmu, "", 3, "IPv6 listen lines");
  text = substitute(file, text, /^([ \t]*)listen 80;/gmu, `$1listen 127.0.0.1:${ports.http};`, 1, "`listen 80;`");
  text = substitute(file, text, /^([ \t]*)listen 443 /gmu, `$1listen 127.0.0.1:${ports.https} `, 2, "`listen 443 …;`");
  text = substitute(file, text, /\bserver 127\.0\.0\.1:8787;/gu, `server 127.0.0.1:${ports.upstream};`, 1, "upstream `server 127.0.0.1:8787;`");
  return text;
}

/** The shipped site with only its two `/etc/letsencrypt/…` paths replaced by `cert`'s. */
export function withCertificate(source: string, cert: CertificateFiles): string {
  const file = "deploy/nginx/threadline.conf";
  const certPath = /\bssl_certificate \/etc\/letsencrypt\/live\/[^;\s]+;/gu;
  const keyPath = /\bssl_certificate_key \/etc\/letsencrypt\/live\/[^;\s]+;/gu;
  const text = substitute(file, source, certPath, `ssl_certificate ${cert.cert};`, 1, "ssl_certificate paths");
  return substitute(file, text, keyPath, `ssl_certificate_key ${cert.key};`, 1, "ssl_certificate_key paths");
}

/**
 * `nginx -t` on the shipped site with nothing but its certificate paths replaced (its own
 * ports 80 and 443 and IPv6 listeners included: `-t` binds nothing). Resolves with the exit
 * code and what nginx said.
 */
export async function testShippedSite(): Promise<{ code: number; output: string }> {
  const binary = findBinary("nginx", "install it with `apt-get install nginx` (.ci/run does) and run the test again.");
  const dir = await mkdtemp(join(tmpdir(), "threadline-nginx-t-"));
  try {
    const cert = await selfSignedCertificate(dir, PUBLIC_NAME);
    const sitePath = join(dir, "threadline.conf");
    await writeFile(sitePath, withCertificate(await readFile(NGINX_SITE, "utf8"), cert), "utf8");
    const confPath = join(dir, "nginx.conf");
    await writeFile(confPath, nginxMainConfig(dir, sitePath), "utf8");
    try {
      const { stdout, stderr } = await run(binary, ["-t", "-p", dir, "-e", "stderr", "-c", confPath, "-g", `pid ${join(dir, "nginx.pid")};`]);
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof failed.code === "number" ? failed.code : 1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A main config that includes `sitePath`: temp paths under `dir`, and `user nobody nogroup` when running as root. */
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
  const args = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"];
  await run("openssl", [...args, "-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`, "-keyout", key, "-out", cert]);
  return { cert, key, pem: await readFile(cert, "utf8") };
}

/**
 * Renders the shipped site for an upstream on `upstreamPort`, starts nginx on free loopback
 * ports (`daemon off`, error log on stderr) and resolves once it answers over HTTPS.
 */
export async function startNginx(upstreamPort: number): Promise<ProxyProcess> {
  const binary = findBinary("nginx", "install it with `apt-get install nginx` (.ci/run does) and run the test again.");
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
  const nginx = new ProxyProcess("nginx", child, dir, ports);
  nginx.ca = cert.pem;
  try {
    await nginx.ready();
  } catch (error) {
    await nginx.stop();
    throw error;
  }
  return nginx;
}
