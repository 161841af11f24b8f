/**
 * `startGateway` listens before the chat platforms connect: `/healthz` answers (naming the
 * platforms still connecting) while a platform's login is slow, the start resolves once every
 * platform is connected, and a platform that refuses the login still fails the start, with the
 * same error as before, and leaves nothing listening or open. Real Fastify on loopback, a real
 * SQLite file, the fake Telegram Bot API over HTTP.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { parseServeConfig, startGateway, type RunningGateway } from "../../src/serve/index.js";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { waitFor } from "../support/wait-for.js";
import { freePort } from "./gateway-process.js";

let home: string | null = null;
let gateway: RunningGateway | null = null;
let telegram: FakeTelegramServer | null = null;
afterEach(async () => {
  await gateway?.stop();
  gateway = null;
  await telegram?.close();
  telegram = null;
  if (home !== null) rmSync(home, { recursive: true, force: true });
  home = null;
});

async function setup(): Promise<{ fake: FakeTelegramServer; port: number; start: () => Promise<RunningGateway>; lines: Array<Record<string, unknown>> }> {
  home = mkdtempSync(join(tmpdir(), "threadline-start-order-"));
  const fake = await startFakeTelegramServer();
  telegram = fake;
  const port = await freePort();
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const env: NodeJS.ProcessEnv = { THREADLINE_HOME: home, PATH: process.env["PATH"] ?? "", TELEGRAM_BOT_TOKEN: fake.token };
  const config = parseServeConfig(
    { gateway: { host: "127.0.0.1", port }, titles: { enabled: false }, adapters: { telegram: { apiRoot: fake.url, access: "open" } } },
    { env },
  );
  const database = join(home, "state.db");
  return { fake, port, lines, start: () => startGateway({ config, logger, env, database }) };
}

async function health(port: number): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  } catch {
    return null;
  }
}

describe("serve: start-up order", { timeout: 60_000 }, () => {
  it("answers /healthz while a chat platform is still connecting, naming it; resolves once it is connected", async () => {
    const { fake, port, start } = await setup();
    const release = fake.holdNext("getMe");
    let settled = false;
    const starting = start().finally(() => (settled = true));
    const during = await waitFor(async () => await health(port), { what: "/healthz to answer while Telegram's getMe is held" });
    expect(during.status).toBe(200);
    expect(during.body).toMatchObject({ status: "ok", backend: "sqlite", connecting: ["telegram"] });
    expect(settled).toBe(false);
    release();
    gateway = await starting;
    expect(await health(port)).toEqual({ status: 200, body: { status: "ok", activeTurns: 0, backend: "sqlite", connecting: [] } });
    expect(gateway.runner.platforms).toEqual(expect.arrayContaining(["api-server", "telegram"]));
    // Connected: a message sent on Telegram is answered (by the built-in echo agent).
    fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 1, text: "hello" }));
    await fake.waitFor(() => fake.sent.length > 0, "the reply on Telegram");
  });

  it("a platform that refuses the login still fails the start with its error, and nothing stays listening", async () => {
    const { fake, port, start, lines } = await setup();
    fake.failNext("getMe", { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } });
    await expect(start()).rejects.toThrow(/Telegram refused the bot token/u);
    expect(await health(port)).toBeNull();
    expect(lines.some((l) => typeof l["msg"] === "string" && l["msg"].startsWith("gateway listening on"))).toBe(true);
  });
});
