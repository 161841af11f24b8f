/**
 * Threat: a reverse proxy on the same host makes every internet client look like loopback
 * (issue 27, point 4). `curl -H 'X-Forwarded-For: 203.0.113.9' http://127.0.0.1:8787/ui/api/export`
 * returned the whole database. A request that carries `Forwarded`, `X-Forwarded-For` or
 * `X-Real-IP` is never a local client, unless it comes from an address in
 * `gateway.trustProxy` and the client the header names is a loopback address: keyless mode
 * answers it 401.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseServeConfig } from "../../src/serve/index.js";
import { cleanupProcesses, makeHome, postChat, spawnGateway } from "../serve/gateway-process.js";
import { rawRequest } from "./raw-http.js";

const TEST_TIMEOUT = 60_000;

afterEach(async () => {
  await cleanupProcesses();
});

const PROXIED: Array<Record<string, string>> = [
  { "x-forwarded-for": "203.0.113.9" },
  { forwarded: "for=203.0.113.9;proto=https" },
  { "x-real-ip": "203.0.113.9" },
  // A proxy that forwards a loopback client is still a proxy, unless it is trusted.
  { "x-forwarded-for": "127.0.0.1" },
  { forwarded: 'for="[::1]:4711"' },
];

describe("proxy headers are never loopback", () => {
  it(
    "keyless mode: /ui/api/export and /v1 with X-Forwarded-For, Forwarded or X-Real-IP → 401; without them → 200",
    async () => {
      const home = await makeHome({ titles: { enabled: false } });
      const gateway = await spawnGateway({ home });
      expect((await postChat(gateway.url, "the database holds this secret: kiwi", { sessionKey: "victim" })).status).toBe(200);
      for (const headers of PROXIED) {
        const exported = await rawRequest(`${gateway.url}/ui/api/export`, { headers });
        expect(exported.status, JSON.stringify(headers)).toBe(401);
        expect(exported.text).not.toContain("kiwi");
        expect(exported.text).toContain("gateway.trustProxy");
        const chat = await rawRequest(`${gateway.url}/v1/chat/completions`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", "x-threadline-session-key": "victim" },
          body: JSON.stringify({ messages: [{ role: "user", content: "what is the secret?" }] }),
        });
        expect(chat.status, JSON.stringify(headers)).toBe(401);
      }
      const direct = await rawRequest(`${gateway.url}/ui/api/export`);
      expect(direct.status).toBe(200);
      expect(direct.text).toContain("kiwi");
    },
    TEST_TIMEOUT,
  );

  it(
    "gateway.trustProxy: a trusted proxy forwarding a loopback client is local; forwarding anyone else is not",
    async () => {
      const home = await makeHome({ titles: { enabled: false }, gateway: { trustProxy: ["127.0.0.1", "::1"] } });
      const gateway = await spawnGateway({ home });
      for (const headers of <Array<Record<string, string>>>[
        { "x-forwarded-for": "127.0.0.1" },
        { forwarded: 'for="[::1]:4711"' },
        { "x-real-ip": "127.0.0.1" },
      ]) {
        expect((await rawRequest(`${gateway.url}/ui/api/export`, { headers })).status, JSON.stringify(headers)).toBe(200);
      }
      for (const headers of <Array<Record<string, string>>>[
        { "x-forwarded-for": "203.0.113.9" },
        // A spoofed loopback entry does not hide the real client the trusted proxy appended.
        { "x-forwarded-for": "127.0.0.1, 203.0.113.9" },
        { forwarded: "for=203.0.113.9" },
        { forwarded: "for=unknown" },
        { "x-real-ip": "203.0.113.9" },
      ]) {
        expect((await rawRequest(`${gateway.url}/ui/api/export`, { headers })).status, JSON.stringify(headers)).toBe(401);
      }
    },
    TEST_TIMEOUT,
  );

  it("gateway.trustProxy and gateway.publicHosts: bad entries are config errors naming the key", () => {
    expect(() => parseServeConfig({ gateway: { trustProxy: ["not-an-ip"] } })).toThrow(
      /gateway\.trustProxy\.0: "not-an-ip" is not an IP address or a CIDR range/,
    );
    expect(() => parseServeConfig({ gateway: { trustProxy: ["10.0.0.0/99"] } })).toThrow(/gateway\.trustProxy\.0/);
    expect(() => parseServeConfig({ gateway: { publicHosts: ["https://gateway.example.com/"] } })).toThrow(
      /gateway\.publicHosts\.0: must be a list of host names/,
    );
    const config = parseServeConfig({ gateway: { trustProxy: ["127.0.0.1", "10.0.0.0/8", "::1"], publicHosts: ["gateway.example.com"] } });
    expect(config.gateway).toMatchObject({ trustProxy: ["127.0.0.1", "10.0.0.0/8", "::1"], publicHosts: ["gateway.example.com"] });
    expect(parseServeConfig({}).gateway).toMatchObject({ trustProxy: [], publicHosts: [] });
  });
});
