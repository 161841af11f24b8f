/**
 * Threat (issue 32, proxy): a proxy that forwards everything exposes what the gateway serves
 * only for the machine itself, or without a key: `/metrics` (no key), the HTTP API at the root
 * and any route added later. Both shipped proxy examples forward only the listed routes (the
 * webhooks with their methods, `/v1/`, `/ui`, `/healthz`): run for real in front of a recording
 * upstream, exactly those requests arrive, whatever path tricks the others use.
 */
import { describe, expect, it } from "vitest";
import { proxyBeforeRecorder, SHIPPED_PROXIES } from "../deploy/proxy-before-recorder.js";

/** Requests that must reach the gateway ([method, path]). */
const FORWARDED: Array<[string, string]> = [
  ["POST", "/telegram/webhook"],
  ["POST", "/slack/events"],
  ["GET", "/whatsapp/webhook?hub.mode=subscribe"],
  ["POST", "/whatsapp/webhook"],
  ["POST", "/webhook"],
  ["POST", "/v1/chat/completions"],
  ["GET", "/v1/models"],
  ["GET", "/ui"],
  ["GET", "/ui/"],
  ["GET", "/ui/api/sessions"],
  ["GET", "/ui/api/gateway/status"],
  ["GET", "/healthz"],
];

/** Requests that must not ([method, path]): routes only the machine should see, and tricks. */
const REFUSED: Array<[string, string]> = [
  ["GET", "/metrics"],
  ["GET", "/"],
  ["GET", "/sessions"],
  ["GET", "/export"],
  ["GET", "/openapi.json"],
  ["GET", "/gateway/status"],
  ["POST", "/pairing/approve"],
  ["GET", "/ui/../metrics"],
  ["GET", "/ui/%2e%2e/metrics"],
  ["GET", "/ui/..%2fmetrics/../../metrics"],
  ["GET", "/healthz/../metrics"],
  ["GET", "//metrics"],
  ["GET", "/METRICS"],
  ["GET", "/uix"],
  ["GET", "/v1"],
  ["GET", "/webhookx"],
  ["GET", "/webhook"],
  ["PUT", "/telegram/webhook"],
  ["DELETE", "/whatsapp/webhook"],
  ["POST", "/healthz"],
];

describe.each(SHIPPED_PROXIES)("%s (the shipped example) forwards only the listed routes", (_name, start) => {
  const site = proxyBeforeRecorder(start);

  it("the listed routes arrive; nothing else does", async () => {
    const tagged = (i: number, path: string): string => `${path}${path.includes("?") ? "&" : "?"}probe=${i}`;
    for (const [i, [method, path]] of REFUSED.entries()) {
      const response = await site.proxy.request({ method, path: tagged(i, path), body: method === "GET" ? undefined : "{}" });
      expect({ method, path, status: response.status, body: response.body }).not.toMatchObject({ body: "upstream" });
    }
    // Ordered after every refused request: once these arrived, any refused one would have too.
    for (const [i, [method, path]] of FORWARDED.entries()) {
      const response = await site.proxy.request({ method, path: tagged(100 + i, path), body: method === "GET" ? undefined : "{}" });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 200 });
    }
    const arrived = site.upstream.requests.map((r) => `${r.method} ${r.url.replace(/[?&]probe=\d+$/u, "")}`);
    expect(arrived).toEqual(FORWARDED.map(([method, path]) => `${method} ${path}`));
  });
});
