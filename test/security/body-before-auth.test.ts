/**
 * Threat: up to 16 MiB of JSON parsed before authentication on `/v1` (issue 27, smaller
 * points). Authentication must run before the body is read: an unauthenticated request
 * gets 401 whatever its body is. Shown without timing: a body that is not JSON gets 401
 * (not the parser's 400), and a request announcing a 16 MiB body gets its 401 before the
 * body is sent at all.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cleanupProcesses, makeHome, postChat, spawnGateway } from "../serve/gateway-process.js";
import { rawRequest, requestWithPartialBody } from "./raw-http.js";

const TEST_TIMEOUT = 60_000;
const TOKEN = "body-before-auth-token-0123456789";
const API_KEY = "body-before-auth-api-key-0123456789";

afterEach(async () => {
  await cleanupProcesses();
});

describe("authentication runs before the body is parsed", () => {
  it(
    "/v1/chat/completions without a token: invalid JSON → 401 (not 400); a 16 MiB body announced but never sent → 401",
    async () => {
      const home = await makeHome({ titles: { enabled: false }, adapters: { apiServer: { tokens: [TOKEN] } } });
      const gateway = await spawnGateway({ home });
      const invalid = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"messages": [ this is not json',
      });
      expect(invalid.status).toBe(401);
      expect(invalid.json).toMatchObject({ error: { type: "authentication_error" } });

      const huge = await requestWithPartialBody(`${gateway.url}/v1/chat/completions`, {
        headers: { "content-type": "application/json", authorization: "Bearer not-the-token-at-all" },
        prefix: '{"messages":[{"role":"user","content":"',
        declaredLength: 16 * 1024 * 1024 - 1,
      });
      expect(huge.status).toBe(401);

      // With the token, the same invalid body is the parser's 400, and a valid one is answered.
      const parsed = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: '{"messages": [ this is not json',
      });
      expect(parsed.status).toBe(400);
      expect((await postChat(gateway.url, "hello", { sessionKey: "ok", token: TOKEN })).status).toBe(200);
    },
    TEST_TIMEOUT,
  );

  it(
    "the web page's API with keys: an unauthenticated body is never parsed either",
    async () => {
      const home = await makeHome({ titles: { enabled: false }, api: { keys: [{ key: API_KEY }] } });
      const gateway = await spawnGateway({ home });
      const huge = await requestWithPartialBody(`${gateway.url}/ui/api/execution/history/cleanup`, {
        headers: { "content-type": "application/json" },
        prefix: '{"olderThanDays":',
        declaredLength: 16 * 1024 * 1024 - 1,
      });
      expect(huge.status).toBe(401);
      const withKey = await rawRequest(`${gateway.url}/ui/api/execution/history/cleanup`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": API_KEY },
        body: "{}",
      });
      expect(withKey.status).toBe(200);
    },
    TEST_TIMEOUT,
  );
});
