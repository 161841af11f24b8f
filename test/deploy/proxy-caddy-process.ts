/**
 * Runs the shipped `deploy/caddy/Caddyfile` for real: Debian's Caddy (`caddy` package, in
 * Debian 12's main repository; missing, it is an error, never a skip: `.ci/run` installs it)
 * on free loopback ports.
 *
 * The Caddyfile is used as shipped except for a documented, minimal substitution
 * ({@link renderCaddyfile}): test-only global options are added at the top of its global
 * block, and the upstream port is replaced. The global options replace what cannot happen
 * here: `local_certs` (Caddy's own local CA instead of Let's Encrypt, whose root the test
 * trusts; `skip_install_trust` keeps it out of the system store), `http_port`/`https_port`
 * and `default_bind 127.0.0.1` (free loopback ports instead of 80/443), `admin off`, and
 * `storage` in the temp directory.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../serve/gateway-process.js";
import { waitFor } from "../support/wait-for.js";
import { findBinary, ProxyProcess, substitute, type SitePorts } from "./proxy-process.js";

/** The shipped Caddyfile. */
export const CADDYFILE = fileURLToPath(new URL("../../deploy/caddy/Caddyfile", import.meta.url));

/** The Caddy binary; throws saying how to install it. */
export function caddyBinary(): string {
  return findBinary("caddy", "install it with `apt-get install caddy` (Debian 12 main; .ci/run does) and run the test again.");
}

/**
 * The shipped Caddyfile with test-only global options added to its global block (see the
 * module comment) and `reverse_proxy 127.0.0.1:8787` → `reverse_proxy 127.0.0.1:<upstream>`.
 */
export function renderCaddyfile(source: string, ports: SitePorts, storage: string): string {
  const file = "deploy/caddy/Caddyfile";
  const globals = [
    "admin off",
    `http_port ${ports.http}`,
    `https_port ${ports.https}`,
    "default_bind 127.0.0.1",
    "local_certs",
    "skip_install_trust",
    `storage file_system ${storage}`,
  ];
  let text = substitute(file, source, /^\{\n/gmu, `{\n${globals.map((line) => `\t${line}\n`).join("")}`, 1, "global options block");
  text = substitute(file, text, /\breverse_proxy 127\.0\.0\.1:8787\b/gu, `reverse_proxy 127.0.0.1:${ports.upstream}`, 1, "`reverse_proxy 127.0.0.1:8787`");
  return text;
}

/**
 * Renders the shipped Caddyfile for an upstream on `upstreamPort`, starts `caddy run` on free
 * loopback ports and resolves once it answers over HTTPS with a certificate of its local CA.
 */
export async function startCaddy(upstreamPort: number): Promise<ProxyProcess> {
  const binary = caddyBinary();
  const dir = await mkdtemp(join(tmpdir(), "threadline-caddy-"));
  const ports: SitePorts = { http: await freePort(), https: await freePort(), upstream: upstreamPort };
  const storage = join(dir, "data");
  const config = join(dir, "Caddyfile");
  await writeFile(config, renderCaddyfile(await readFile(CADDYFILE, "utf8"), ports, storage), "utf8");
  // Caddy's own files (autosaved config, anything else) stay in the temp directory.
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
  const child = spawn(binary, ["run", "--config", config, "--adapter", "caddyfile"], { stdio: ["ignore", "pipe", "pipe"], detached: true, env });
  const caddy = new ProxyProcess("caddy", child, dir, ports);
  try {
    caddy.ca = await waitFor(
      async () => {
        if (!caddy.running) throw new Error(`caddy exited before it made its local CA; its output:\n${caddy.output()}`);
        return await readFile(join(storage, "pki", "authorities", "local", "root.crt"), "utf8");
      },
      { what: "caddy's local CA root certificate", timeoutMs: 15_000, intervalMs: 50, describe: () => caddy.output() },
    );
    await caddy.ready();
  } catch (error) {
    await caddy.stop();
    throw error;
  }
  return caddy;
}
