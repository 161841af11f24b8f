/**
 * The Caddy example (`deploy/caddy/Caddyfile` + `deploy/caddy/config.yaml`) run for real:
 * Debian's Caddy on loopback ports with a certificate from its own local CA (`local_certs`,
 * standing in for Let's Encrypt), in front of the built `threadline serve`; and the shipped
 * file as is through `caddy validate`. The checks are in `proxy-checks.ts`; what is
 * substituted in the Caddyfile is in `proxy-caddy-process.ts`.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CADDYFILE, caddyBinary, startCaddy } from "./proxy-caddy-process.js";
import { describeProxyExample } from "./proxy-checks.js";

const run = promisify(execFile);

describe("deploy/caddy/Caddyfile as shipped", () => {
  it("is valid (caddy validate) and formatted as caddy fmt writes it", async () => {
    const validated = await run(caddyBinary(), ["validate", "--config", CADDYFILE, "--adapter", "caddyfile"]);
    expect(validated.stdout + validated.stderr).toContain("Valid configuration");
    const formatted = await run(caddyBinary(), ["fmt", CADDYFILE]);
    expect(formatted.stdout).toBe(await readFile(CADDYFILE, "utf8"));
  });
});

describeProxyExample({
  name: "caddy",
  configFile: fileURLToPath(new URL("../../deploy/caddy/config.yaml", import.meta.url)),
  start: startCaddy,
  wrongMethodStatus: 404,
  otherHostStatus: 421,
  redirectStatus: 308,
  bodyLimitOnHeaders: false,
});
