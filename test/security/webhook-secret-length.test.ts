/**
 * Threat: guessable webhook secrets (issue 27, smaller points). A Telegram webhook `secret`
 * could be one character long. Every shared secret a webhook is checked with (the Telegram
 * webhook secret, the generic webhook secret, the WhatsApp verify token) needs at least 16
 * characters — a config error naming the key — and is compared in constant time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { configFileProblems, parseServeConfig } from "../../src/serve/internal.js";
import { cleanupProcesses, makeHome, runServe } from "../serve/gateway-process.js";

afterEach(async () => {
  await cleanupProcesses();
});

describe("webhook secrets need at least 16 characters", () => {
  it("short secrets are config errors naming the key", () => {
    const telegram = { token: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi", mode: "webhook", webhookUrl: "https://bot.example.test/tg" };
    expect(() => parseServeConfig({ adapters: { telegram: { ...telegram, secret: "x" } } }, { env: {} })).toThrow(/adapters\.telegram\.secret: must be 16–256/);
    expect(() => parseServeConfig({ adapters: { telegram: { ...telegram, secret: "fifteen-chars15" } } }, { env: {} })).toThrow(/adapters\.telegram\.secret/);
    expect(parseServeConfig({ adapters: { telegram: { ...telegram, secret: "sixteen-chars-16" } } }, { env: {} }).adapters.telegram?.secret).toBe(
      "sixteen-chars-16",
    );
    expect(() => parseServeConfig({ adapters: { webhook: { enabled: true, secret: "short-secret" } } })).toThrow(/adapters\.webhook\.secret/);
    const whatsapp = configFileProblems({ adapters: { whatsapp: { verifyToken: "verify-me-1" } } }, { env: {} });
    expect(whatsapp.join("\n")).toMatch(/adapters\.whatsapp\.verifyToken: must be .*16–256/);
    // The secret itself is never echoed.
    expect(() => parseServeConfig({ adapters: { telegram: { ...telegram, secret: "tiny" } } }, { env: {} })).toThrow(/a string of 4 characters/);
  });

  it("threadline serve refuses a short Telegram webhook secret with exit 2, naming adapters.telegram.secret", async () => {
    const home = await makeHome({
      adapters: { telegram: { token: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi", mode: "webhook", webhookUrl: "https://bot.example.test/tg", secret: "s" } },
    });
    const result = await runServe({ home, args: ["--port", "0"] });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/adapters\.telegram\.secret/);
    expect(result.stderr).toMatch(/16/);
  }, 60_000);
});
