/**
 * Threat (issue 32, proxy): a proxy that forwards without naming the client makes every
 * internet client look local. The gateway treats a request from a loopback socket without
 * `Forwarded`/`X-Forwarded-For`/`X-Real-IP` as a local client (keyless mode lets it in), so a
 * bare `proxy_pass` (nginx adds no `X-Forwarded-For` by itself) would open a keyless web page
 * API and `/v1` to the internet; and a proxy that passes a client's own forwarding headers on
 * lets the client name itself. Both shipped proxy examples, run for real in front of a
 * recording upstream, must always tell the upstream the address they saw, and only that.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCaddy } from "../deploy/proxy-caddy-process.js";
import { startNginx } from "../deploy/proxy-nginx-process.js";
import { PUBLIC_NAME, type ProxyProcess } from "../deploy/proxy-process.js";
import { startRecordingUpstream, type RecordingUpstream } from "../deploy/proxy-recording-upstream.js";

const SPOOFED = { "x-forwarded-for": "198.51.100.7", "x-real-ip": "198.51.100.7", forwarded: "for=198.51.100.7;proto=https" };

describe.each([
  ["nginx", startNginx],
  ["caddy", startCaddy],
] as const)("%s (the shipped example) tells the gateway who the client is, and only what it saw", (_name, start) => {
  let upstream: RecordingUpstream;
  let proxy: ProxyProcess;

  beforeAll(async () => {
    upstream = await startRecordingUpstream();
    proxy = await start(upstream.port);
  });

  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
  });

  it("a request without forwarding headers arrives with X-Forwarded-For naming the client, the public Host and https", async () => {
    const response = await proxy.request({ path: "/healthz?plain" });
    expect(response.status).toBe(200);
    const seen = upstream.requests.find((r) => r.url === "/healthz?plain");
    expect(seen?.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen?.headers["x-forwarded-proto"]).toBe("https");
    expect(seen?.headers.host).toBe(PUBLIC_NAME);
  });

  it("a client's own X-Forwarded-For, X-Real-IP and Forwarded are replaced or dropped, never passed on", async () => {
    const response = await proxy.request({ path: "/healthz?spoofed", headers: SPOOFED });
    expect(response.status).toBe(200);
    const seen = upstream.requests.find((r) => r.url === "/healthz?spoofed");
    expect(seen?.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect([undefined, "127.0.0.1"]).toContain(seen?.headers["x-real-ip"]);
    expect(seen?.headers.forwarded).toBeUndefined();
  });
});
