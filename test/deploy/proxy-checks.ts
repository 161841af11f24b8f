/**
 * The checks both proxy examples pass, run for real: the proxy (nginx or Caddy, as shipped but
 * for the substitutions its `proxy-<name>-process.ts` documents) on loopback ports in front of
 * the BUILT `threadline serve` (`npm run build` first) started with the shipped config.yaml
 * paired with it: as shipped except for real keys in place of its CHANGE-ME placeholders and,
 * where a block says so, the generic webhook adapter (with titles off, so every model request
 * is a turn the test scripted). Every request to the proxy goes over HTTPS to 127.0.0.1 with
 * the public name as SNI and Host, trusting only the test's CA.
 * `proxy-nginx.test.ts` and `proxy-caddy.test.ts` call {@link describeProxyExample}.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  cleanupProcesses,
  makeHome,
  spawnGateway,
  startCallbackServer,
  webhookHeaders,
  runServe,
  type CallbackServer,
  type GatewayProcess,
} from "../serve/gateway-process.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor, withDeadline } from "../support/wait-for.js";
import { PUBLIC_NAME, type ProxyProcess } from "./proxy-process.js";
import { plainGet, rawTlsExchange } from "./proxy-raw.js";

const KEY = "ops-key-3f9a1c2e7b5d4e60a1b2";
const TOKEN = "alice-token-8c1d2e3f4a5b6c7d";
const SECRET = "proxy-webhook-secret-0123456789";
const FAKE_KEY = "sk-fake-proxy-key";

/** The shipped config.yaml with real keys in place of the placeholders (and `edit` applied). */
async function shippedConfig(file: string, edit: (config: Record<string, any>) => void = () => {}): Promise<Record<string, unknown>> {
  const config = parse(await readFile(file, "utf8")) as Record<string, any>;
  // The placeholders are too short to start with: the test proves the gateway refuses them below.
  expect(config["api"].keys[0].key).toMatch(/^CHANGE-ME/u);
  expect(config["adapters"].apiServer.tokens[0].token).toMatch(/^CHANGE-ME/u);
  config["api"].keys[0].key = KEY;
  config["adapters"].apiServer.tokens[0].token = TOKEN;
  edit(config);
  return config;
}

/** A bearer header. */
function bearer(secret: string): Record<string, string> {
  return { authorization: `Bearer ${secret}` };
}

/** A signed generic-webhook request through the proxy. */
function webhookRequest(
  message: Record<string, unknown>,
  signature?: string | null,
): { path: string; method: string; headers: Record<string, string>; body: string } {
  const body = JSON.stringify(message);
  const signed = webhookHeaders(SECRET, body);
  const headers: Record<string, string> = { "content-type": "application/json", "x-threadline-timestamp": signed["x-threadline-timestamp"]! };
  const value = signature === undefined ? signed["x-threadline-signature"]! : signature;
  if (value !== null) headers["x-threadline-signature"] = value;
  return { path: "/webhook", method: "POST", headers, body };
}

/** The text of the content deltas of an SSE body. */
function streamedText(body: string): string {
  return body
    .split("\n\n")
    .filter((event) => event.startsWith("data: ") && event !== "data: [DONE]")
    .map((event) => JSON.parse(event.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> })
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? "")
    .join("");
}

/** One shipped proxy example and what differs between proxies. */
export interface ProxyExample {
  /** `nginx` or `caddy`. */
  name: string;
  /** The config.yaml paired with it (deploy/<name>/config.yaml). */
  configFile: string;
  /** Starts the proxy in front of a gateway on `upstreamPort`. */
  start(upstreamPort: number): Promise<ProxyProcess>;
  /** Its answer to a webhook route with a method it does not forward (nginx `limit_except`: 403; Caddy: the catch-all 404). */
  wrongMethodStatus: number;
  /** Its answer to the right TLS name with another Host: `null` when it closes the connection (nginx 444), else the status (Caddy 421). */
  otherHostStatus: number | null;
  /** Its HTTP-to-HTTPS redirect status (nginx 301, Caddy 308). */
  redirectStatus: number;
  /** Whether it refuses an oversized body from its Content-Length alone (nginx; Caddy counts the bytes as they come, so the gateway's own limit answers first). */
  bodyLimitOnHeaders: boolean;
}

/** The proxy checks for one example (see the module comment). */
export function describeProxyExample(example: ProxyExample): void {
  describe(`${example.name} in front of threadline serve, with the paired config`, () => {
    let fake: FakeOpenAiServer;
    let callback: CallbackServer;
    let gateway: GatewayProcess;
    let proxy: ProxyProcess;

    beforeAll(async () => {
      fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"], streamTokens: true });
      callback = await startCallbackServer(SECRET);
      const config = await shippedConfig(example.configFile, (c) => {
        c["adapters"].webhook = { enabled: true, secret: SECRET, callbackUrl: callback.url };
        c["titles"] = { enabled: false };
      });
      const home = await makeHome(config);
      gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
      proxy = await example.start(gateway.port);
    });

    afterAll(async () => {
      // The gateway first: its streams end, so the proxy has no open request left to wait for.
      await cleanupProcesses();
      await proxy?.stop();
      await fake?.close();
    });

    it("a signed webhook through the proxy is accepted and answered; unsigned, badly signed or stale ones are refused", async () => {
      const message = { chatId: "chat-1", userId: "user-1", text: "hello through the proxy", messageId: "m-proxy-1" };
      const accepted = await proxy.request(webhookRequest(message));
      expect(accepted.status, accepted.body).toBe(202);
      const reply = await callback.replyTo("m-proxy-1");
      expect(reply.body.text).toBe("Reply to: hello through the proxy");
      expect(reply.signatureValid).toBe(true);

      const unsigned = await proxy.request(webhookRequest({ ...message, messageId: "m-proxy-2" }, null));
      expect(unsigned.status).toBe(401);
      const wrong = await proxy.request(webhookRequest({ ...message, messageId: "m-proxy-3" }, `sha256=${"0".repeat(64)}`));
      expect(wrong.status).toBe(401);
      const stale = JSON.stringify({ ...message, messageId: "m-proxy-4" });
      const old = webhookHeaders(SECRET, stale, Math.floor(Date.now() / 1000) - 3600);
      const replayed = await proxy.request({ path: "/webhook", method: "POST", headers: { "content-type": "application/json", ...old }, body: stale });
      expect(replayed.status).toBe(401);
      // A webhook route takes POST only at the proxy.
      expect((await proxy.request({ path: "/webhook" })).status).toBe(example.wrongMethodStatus);
    });

    it("the web page and its API through the proxy: the page loads, the API needs a key", async () => {
      const page = await proxy.request({ path: "/ui/" });
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toMatch(/^text\/html/u);
      expect(page.headers["strict-transport-security"]).toBe("max-age=63072000");

      const keyless = await proxy.request({ path: "/ui/api/sessions" });
      expect(keyless.status).toBe(401);
      expect(JSON.parse(keyless.body)).toMatchObject({ error: { code: "TL_ERR_UNAUTHORIZED" } });
      const wrongKey = await proxy.request({ path: "/ui/api/sessions", headers: bearer("not-the-key-0123456789") });
      expect(wrongKey.status).toBe(403);
      const withKey = await proxy.request({ path: "/ui/api/sessions", headers: bearer(KEY) });
      expect(withKey.status, withKey.body).toBe(200);
      expect(JSON.parse(withKey.body)).toHaveProperty("items");

      // A cross-site write through the proxy is still refused by the gateway (Origin is passed on).
      const crossSite = await proxy.request({
        path: "/ui/api/pairing/approve",
        method: "POST",
        headers: { ...bearer(KEY), "content-type": "application/json", origin: "https://attacker.example" },
        body: JSON.stringify({ platform: "telegram", code: "ABCDEFGH" }),
      });
      expect(crossSite.status).toBe(403);
      expect(crossSite.body).toContain("cross-site");
    });

    it("the live view's server-sent events come through unbuffered", async () => {
      const live = await proxy.stream({ path: "/ui/api/gateway/live", headers: bearer(KEY) });
      expect(live.status).toBe(200);
      expect(live.headers["content-type"]).toMatch(/^text\/event-stream/u);
      try {
        await waitFor(() => live.text().includes("event: snapshot"), { what: "the first live snapshot through the proxy", describe: () => live.text() });
        expect(live.ended()).toBe(false);
      } finally {
        live.close();
      }
    });

    it("/v1 needs a token through the proxy, and a streamed answer arrives while it is still being written", async () => {
      expect((await proxy.request({ path: "/v1/models" })).status).toBe(401);
      expect((await proxy.request({ path: "/v1/models", headers: bearer(TOKEN) })).status).toBe(200);

      let release = (): void => {};
      const hold = new Promise<void>((resolve) => (release = resolve));
      fake.enqueue({ ...fakeTextReply("alpha beta gamma delta"), holdLastToken: hold });
      try {
        const response = await proxy.stream({
          path: "/v1/chat/completions",
          method: "POST",
          headers: { ...bearer(TOKEN), "content-type": "application/json", "x-threadline-session-key": "proxy-stream" },
          body: JSON.stringify({ model: "fake-model", stream: true, messages: [{ role: "user", content: "stream please" }] }),
        });
        expect(response.status).toBe(200);
        expect(response.headers["content-type"]).toMatch(/^text\/event-stream/u);
        // The model holds "delta" back: the client already has the first three words through the proxy.
        await waitFor(() => streamedText(response.text()) === "alpha beta gamma ", {
          what: "the first three streamed words through the proxy",
          describe: () => response.text(),
        });
        expect(response.ended()).toBe(false);
        release();
        await withDeadline(response.done, { timeoutMs: 20_000, what: "the end of the stream" });
        expect(streamedText(response.text())).toBe("alpha beta gamma delta");
      } finally {
        release();
      }
    });

    it("/healthz is proxied (GET only); /metrics and every other path are 404 at the proxy", async () => {
      const health = await proxy.request({ path: "/healthz" });
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toMatchObject({ status: "ok" });
      expect((await proxy.request({ path: "/healthz", method: "POST", body: "" })).status).toBe(example.wrongMethodStatus);

      for (const path of [
        "/metrics",
        "/",
        "/sessions",
        "/openapi.json",
        "/ui/../metrics",
        "/ui/%2e%2e/metrics",
        "/healthz/../metrics",
        "//metrics",
        "/webhook/x",
        "/v1x",
      ]) {
        const response = await proxy.request({ path });
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expect(response.body).not.toContain("# HELP");
      }
    });

    it("requests for another name never reach the gateway; plain HTTP redirects to HTTPS", async () => {
      // Another TLS name (or none, as a client connecting by IP address): the handshake is refused.
      const otherName = await rawTlsExchange(proxy.ports.https, proxy.ca, "GET /healthz HTTP/1.1\r\nHost: other.example", "other.example");
      expect(otherName.status).toBeNull();
      expect(otherName.error).toMatch(/alert|handshake|unrecognized name/iu);
      const noName = await rawTlsExchange(proxy.ports.https, proxy.ca, `GET /healthz HTTP/1.1\r\nHost: ${PUBLIC_NAME}`, null);
      expect(noName.status).toBeNull();
      expect(noName.error).toMatch(/alert|handshake|unrecognized name/iu);

      // The right TLS name but another Host: refused at the proxy (nginx closes the connection, 444; Caddy answers 421).
      const otherHost = await rawTlsExchange(proxy.ports.https, proxy.ca, "GET /healthz HTTP/1.1\r\nHost: attacker.example");
      expect(otherHost.status).toBe(example.otherHostStatus);

      const plain = await plainGet(proxy.ports.http, "/ui/?x=1", PUBLIC_NAME);
      expect(plain.status).toBe(example.redirectStatus);
      expect(plain.headers["location"]).toMatch(new RegExp(`^https://${PUBLIC_NAME.replaceAll(".", "\\.")}(:\\d+)?/ui/\\?x=1$`, "u"));
    });

    // Only where the proxy refuses on the headers: otherwise the gateway's own 413 would answer and prove nothing about the proxy.
    if (example.bodyLimitOnHeaders)
      it("a body over the gateway's 16 MiB is refused at the proxy (32 MiB on /v1)", async () => {
        const over = (path: string, bytes: number): string =>
          `POST ${path} HTTP/1.1\r\nHost: ${PUBLIC_NAME}\r\nContent-Type: application/json\r\nContent-Length: ${bytes}`;
        expect((await rawTlsExchange(proxy.ports.https, proxy.ca, over("/webhook", 16 * 1024 * 1024 + 1))).status).toBe(413);
        expect((await rawTlsExchange(proxy.ports.https, proxy.ca, over("/ui/api/pairing/approve", 16 * 1024 * 1024 + 1))).status).toBe(413);
        expect((await rawTlsExchange(proxy.ports.https, proxy.ca, over("/v1/chat/completions", 32 * 1024 * 1024 + 1))).status).toBe(413);
      });

    it("the gateway's own port answers only to its names: a foreign Host is refused, the public name is not", async () => {
      const foreign = await plainGet(gateway.port, "/healthz", "attacker.example");
      expect(foreign.status).toBe(403);
      expect(JSON.parse(foreign.body)).toMatchObject({ error: { code: "TL_ERR_FORBIDDEN" } });
      expect(foreign.body).toContain("gateway.publicHosts");
      const named = await plainGet(gateway.port, "/healthz", PUBLIC_NAME);
      expect(named.status).toBe(200);
    });
  });

  describe(`${example.name}'s config.yaml as shipped`, () => {
    afterAll(cleanupProcesses);

    it("does not start until its CHANGE-ME placeholders are replaced", async () => {
      const result = await runServe({ home: await makeHome(await readFile(example.configFile, "utf8")) });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("api.keys.0.key");
      expect(result.stderr).toContain("adapters.apiServer.tokens.0.token");
    });
  });

  describe(`${example.name}: the paired trustProxy: [] on a keyless gateway`, () => {
    let gateway: GatewayProcess;
    let proxy: ProxyProcess;

    beforeAll(async () => {
      // No keys, no adapter facing the internet: the keyless loopback mode, which the proxy must not open.
      const config = await shippedConfig(example.configFile, (c) => {
        delete c["api"];
        delete c["adapters"];
      });
      gateway = await spawnGateway({ home: await makeHome(config) });
      proxy = await example.start(gateway.port);
    });

    afterAll(async () => {
      // The gateway first: its streams end, so the proxy has no open request left to wait for.
      await cleanupProcesses();
      await proxy?.stop();
    });

    it("a client on this machine is keyless-local directly, but not through the proxy (401)", async () => {
      expect((await fetch(`${gateway.url}/v1/models`)).status).toBe(200);
      expect((await fetch(`${gateway.url}/ui/api/sessions`)).status).toBe(200);

      const v1 = await proxy.request({ path: "/v1/models" });
      expect(v1.status).toBe(401);
      const api = await proxy.request({ path: "/ui/api/sessions" });
      expect(api.status).toBe(401);
      // Nor can a client make itself local by naming loopback in the headers nginx replaces.
      const spoofed = await proxy.request({
        path: "/ui/api/sessions",
        headers: { "x-forwarded-for": "127.0.0.1", "x-real-ip": "127.0.0.1", forwarded: "for=127.0.0.1" },
      });
      expect(spoofed.status).toBe(401);
    });
  });
}
