/**
 * Threat: a keyless admin surface on a gateway that receives platform webhooks (issue 27,
 * "The HTTP surface"). Such a gateway is meant to be reached from the internet, through a
 * proxy whose requests come from 127.0.0.1, so "loopback clients need no key" would let
 * the internet in. It must never fall open:
 * - `api.enabled` without `api.keys` (asked for explicitly) → `serve` exits 2 naming
 *   `api.keys` and `adapters.apiServer.tokens`;
 * - the surfaces that are on by default (the web page's API without `api.keys`, `/v1`
 *   without `adapters.apiServer.tokens`) answer every request 401, naming the key to add,
 *   while the webhook keeps working.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cleanupProcesses, makeHome, postChat, postWebhook, runServe, spawnGateway, startCallbackServer } from "../serve/gateway-process.js";
import { rawRequest } from "./raw-http.js";

const TEST_TIMEOUT = 60_000;
const SECRET = "keyless-webhook-secret-0123456789";
const API_KEY = "keyless-test-admin-key-0123456789";
const TOKEN = "keyless-test-api-token-0123456789";

afterEach(async () => {
  await cleanupProcesses();
});

describe("no keyless admin surface next to platform webhooks", () => {
  it(
    "webhook enabled, no keys: /ui/api and /v1 answer 401 from 127.0.0.1 (naming api.keys, adapters.apiServer.tokens); the webhook works",
    async () => {
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({ titles: { enabled: false }, adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } } });
      const gateway = await spawnGateway({ home });
      expect((await postWebhook(gateway.url, SECRET, { chatId: "c1", userId: "u1", text: "private words", messageId: "m1" })).status).toBe(202);
      await callback.replyTo("m1");

      for (const path of ["/ui/api/sessions", "/ui/api/export"]) {
        const refused = await rawRequest(`${gateway.url}${path}`);
        expect(refused.status, path).toBe(401);
        expect(refused.text).toContain("api.keys");
        expect(refused.text).not.toContain("private words");
      }
      const chat = await postChat(gateway.url, "hello", { sessionKey: "c1" });
      expect(chat.status).toBe(401);
      expect(chat.body.error?.message).toContain("adapters.apiServer.tokens");
    },
    TEST_TIMEOUT,
  );

  it(
    "with api.keys and adapters.apiServer.tokens configured, the same gateway serves them",
    async () => {
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({
        titles: { enabled: false },
        adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url }, apiServer: { tokens: [TOKEN] } },
        api: { keys: [{ key: API_KEY }] },
      });
      const gateway = await spawnGateway({ home });
      expect((await rawRequest(`${gateway.url}/ui/api/sessions`, { headers: { "x-api-key": API_KEY } })).status).toBe(200);
      expect((await postChat(gateway.url, "hello", { sessionKey: "k", token: TOKEN })).status).toBe(200);
    },
    TEST_TIMEOUT,
  );

  it(
    "api.enabled without keys next to a webhook: serve exits 2 naming api.keys and adapters.apiServer.tokens",
    async () => {
      const home = await makeHome({
        adapters: { webhook: { enabled: true, secret: SECRET } },
        api: { enabled: true, allowUnauthenticatedLoopback: true },
      });
      const result = await runServe({ home, args: ["--port", "0"] });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("api.keys");
      expect(result.stderr).toContain("adapters.apiServer.tokens");
      expect(result.stderr).toContain("adapters.webhook");
    },
    TEST_TIMEOUT,
  );
});
