/**
 * The nginx example (`deploy/nginx/threadline.conf` + `deploy/nginx/config.yaml`) run for
 * real: Debian's nginx on loopback ports with a self-signed certificate (made by `openssl`)
 * for the shipped name, in front of the built `threadline serve`. The checks are in
 * `proxy-checks.ts`; what is substituted in the site file is in `proxy-nginx-process.ts`.
 * The file as shipped (its own ports and IPv6 listeners) also passes `nginx -t`.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { describeProxyExample } from "./proxy-checks.js";
import { startNginx, testShippedSite } from "./proxy-nginx-process.js";

describe("deploy/nginx/threadline.conf as shipped", () => {
  it("passes nginx -t with only its certificate paths replaced (its own ports and IPv6 listeners included)", async () => {
    const result = await testShippedSite();
    expect(result.output).toContain("test is successful");
    expect(result.output).not.toMatch(/\[warn\]|\[emerg\]/u);
    expect(result.code).toBe(0);
  });
});

describeProxyExample({
  name: "nginx",
  configFile: fileURLToPath(new URL("../../deploy/nginx/config.yaml", import.meta.url)),
  start: startNginx,
  wrongMethodStatus: 403,
  otherHostStatus: null,
  redirectStatus: 301,
  bodyLimitOnHeaders: true,
});
