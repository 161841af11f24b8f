/**
 * Threat: DNS rebinding (issue 27, point 4). A web page the operator visits re-points its
 * own domain at 127.0.0.1 and reads the keyless admin surface: its requests arrive from
 * loopback, with the page's host name in `Host`. Every route of `threadline serve` must
 * refuse a `Host` that is not localhost, a literal loopback address, or a configured public
 * host — before any work — while the same request with the real `Host` keeps working.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cleanupProcesses, makeHome, postChat, spawnGateway } from "../serve/gateway-process.js";
import { hostNamesFor, hostRefusal } from "../../src/http-api/internal.js";
import { rawRequest } from "./raw-http.js";

const TEST_TIMEOUT = 60_000;

afterEach(async () => {
  await cleanupProcesses();
});

describe("DNS rebinding: requests naming a foreign Host are refused", () => {
  it(
    "curl -H 'Host: attacker.example' /ui/api/sessions is refused (403, no session data); with the real Host it works",
    async () => {
      const home = await makeHome({ titles: { enabled: false } });
      const gateway = await spawnGateway({ home });
      // A session to steal.
      expect((await postChat(gateway.url, "my private note about kiwis", { sessionKey: "private" })).status).toBe(200);

      for (const host of ["attacker.example", `attacker.example:${gateway.port}`, "127.0.0.1.evil.example", "127.evil.example", "localhost.evil.example"]) {
        const refused = await rawRequest(`${gateway.url}/ui/api/sessions`, { headers: { host } });
        expect(refused.status, `Host: ${host}`).toBe(403);
        expect(refused.text).not.toContain("kiwis");
        expect(refused.text).not.toContain("private");
        expect((refused.json as { error: { message: string } }).error.message).toContain("gateway.publicHosts");
      }
      // Every route is guarded: the OpenAI-compatible endpoint and the export too.
      const chat = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { host: "attacker.example", "content-type": "application/json", "x-threadline-session-key": "private" },
        body: JSON.stringify({ messages: [{ role: "user", content: "what did I say?" }] }),
      });
      expect(chat.status).toBe(403);
      expect((await rawRequest(`${gateway.url}/ui/api/export`, { headers: { host: "attacker.example" } })).status).toBe(403);

      // The same requests naming this machine work: 127.0.0.1 (any port), localhost, another loopback literal, ::1.
      for (const host of [`127.0.0.1:${gateway.port}`, `localhost:${gateway.port}`, "127.0.0.2", `[::1]:${gateway.port}`]) {
        const ok = await rawRequest(`${gateway.url}/ui/api/sessions`, { headers: { host } });
        expect(ok.status, `Host: ${host}`).toBe(200);
        expect(ok.text).toContain("kiwis");
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "a host listed in gateway.publicHosts is accepted; others still are not",
    async () => {
      const home = await makeHome({ titles: { enabled: false }, gateway: { publicHosts: ["gateway.example.test"] } });
      const gateway = await spawnGateway({ home });
      const ok = await rawRequest(`${gateway.url}/healthz`, { headers: { host: "gateway.example.test" } });
      expect(ok.status).toBe(200);
      const refused = await rawRequest(`${gateway.url}/healthz`, { headers: { host: "other.example.test" } });
      expect(refused.status).toBe(403);
      expect((refused.json as { error: { message: string } }).error.message).toMatch(/add "other\.example\.test" to gateway\.publicHosts/);
    },
    TEST_TIMEOUT,
  );

  it("the host of a configured webhook URL (Telegram's webhookUrl) is a name of the gateway; a look-alike is not", () => {
    const names = { extra: hostNamesFor("127.0.0.1", [], ["https://bot.example.test/telegram/updates"]) };
    expect(hostRefusal(names, "bot.example.test")).toBeNull();
    expect(hostRefusal(names, "bot.example.test:443")).toBeNull();
    expect(hostRefusal(names, "bot.example.test.evil.example")).toMatch(/gateway\.publicHosts/);
    expect(hostRefusal(names, "127.0.0.1.evil.example")).toMatch(/gateway\.publicHosts/);
    expect(hostRefusal(names, undefined)).toMatch(/no Host header/);
  });
});
