/**
 * Threat (issue 32, proxy): a proxy that forwards without naming the client makes every
 * internet client look local. The gateway treats a request from a loopback socket without
 * `Forwarded`/`X-Forwarded-For`/`X-Real-IP` as a local client (keyless mode lets it in), so a
 * bare `proxy_pass` (nginx adds no `X-Forwarded-For` by itself) would open a keyless web page
 * API and `/v1` to the internet; and a proxy that passes a client's own forwarding headers on
 * lets the client name itself. Both shipped proxy examples, run for real in front of a
 * recording upstream, must always tell the upstream the address they saw, and only that.
 */
import { describe, expect, it } from "vitest";
import { PUBLIC_NAME } from "../deploy/proxy-process.js";
import { proxyBeforeRecorder, SHIPPED_PROXIES } from "../deploy/proxy-before-recorder.js";

const SPOOFED = { "x-forwarded-for": "198.51.100.7", "x-real-ip": "198.51.100.7", forwarded: "for=198.51.100.7;proto=https" };

describe.each(SHIPPED_PROXIES)("%s (the shipped example) tells the gateway who the client is, and only what it saw", (_name, start) => {
  const site = proxyBeforeRecorder(start);

  it("a request without forwarding headers arrives with X-Forwarded-For naming the client, the public Host and https", async () => {
    const response = await site.proxy.request({ path: "/healthz?plain" });
    expect(response.status).toBe(200);
    const seen = site.upstream.requests.find((r) => r.url === "/healthz?plain");
    expect(seen?.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen?.headers["x-forwarded-proto"]).toBe("https");
    expect(seen?.headers.host).toBe(PUBLIC_NAME);
  });

  it("a client's own X-Forwarded-For, X-Real-IP and Forwarded are replaced or dropped, never passed on", async () => {
    const response = await site.proxy.request({ path: "/healthz?spoofed", headers: SPOOFED });
    expect(response.status).toBe(200);
    const seen = site.upstream.requests.find((r) => r.url === "/healthz?spoofed");
    expect(seen?.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect([undefined, "127.0.0.1"]).toContain(seen?.headers["x-real-ip"]);
    expect(seen?.headers.forwarded).toBeUndefined();
  });
});
