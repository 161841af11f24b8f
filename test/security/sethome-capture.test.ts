/**
 * Threat (issue 27, point 2): anyone in a chat can capture the terminal's handoffs. `/sethome`
 * had no check, and a home channel stored from a chat won over `homeChannels` in the config
 * file, so a person who may talk to the bot (here: listed in `allowedUsers`, not an admin)
 * sent `/sethome` and received the summary of the operator's next `/handoff`. Now only an
 * admin may `/sethome` (a non-admin gets a clear refusal and nothing is stored), and the config
 * file's home channel wins over a stored one. Real `threadline serve` with the Telegram fake;
 * the terminal side (`requestHandoff`) runs here on the gateway's database, on both backends.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HandoffError, requestHandoff } from "../../src/gateway/index.js";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { TEST_PG_URL } from "../contract/postgres-server.js";
import { startFakeTelegramServer, telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway } from "../serve/gateway-process.js";
import { BACKENDS, databaseKey, dropSchemas, type Backend } from "./pairing-support.js";

const TEST_TIMEOUT = 90_000;
/** The sender of the Telegram DM fixture: listed, not an admin. */
const MEMBER = 111111;
/** The operator's own DM with the bot (the configured home channel). */
const OPERATOR = 555555;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
  await dropSchemas();
});

async function openDb(home: string, schema: string | null): Promise<SessionDB> {
  const db = schema === null ? await openSessionDB(databaseOf(home)) : await openSessionDB(TEST_PG_URL, { schema, poolSize: 2 });
  closers.push(() => db.close());
  return db;
}

async function cliSession(db: SessionDB): Promise<string> {
  const { id } = await db.createSession({ source: "cli", title: "the private plan" });
  await db.appendTurn(id, [
    { role: "user", content: "Plan the private release" },
    { role: "assistant", content: "Freeze the API, then tell nobody." },
  ]);
  return id;
}

async function gatewayWith(backend: Backend, extra: Record<string, unknown>) {
  const telegram = await startFakeTelegramServer();
  closers.push(() => telegram.close());
  const { config: database, schema } = await databaseKey(backend);
  const home = await makeHome({
    ...database,
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, allowedUsers: [MEMBER] } },
    ...extra,
  });
  await spawnGateway({ home, env: { TELEGRAM_BOT_TOKEN: telegram.token } });
  return { telegram, db: await openDb(home, schema) };
}

describe.each(BACKENDS)("%s: handoffs cannot be captured from a chat", (backend) => {
  it(
    "a non-admin's /sethome is refused and stores nothing; the operator's /handoff does not reach them",
    async () => {
      const { telegram, db } = await gatewayWith(backend, {});
      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 1, text: "/sethome" }));
      const refusal = await telegram.waitFor(() => telegram.sentTo(MEMBER)[0], "the answer to /sethome");
      expect(refusal.plain).toContain("Only an admin may set the home channel");
      expect(await db.getMeta("home_channels")).toBeNull();
      const id = await cliSession(db);
      const attempt = requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels: {}, timeoutMs: 5_000, pollMs: 100 });
      await expect(attempt).rejects.toBeInstanceOf(HandoffError);
      await expect(attempt).rejects.toMatchObject({ reason: "no_home_channel" });
      expect(telegram.sentTo(MEMBER)).toHaveLength(1);
      expect(telegram.callsOf("sendMessage").some((c) => String(c.params["text"]).includes("tell nobody"))).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "a home channel in the config file wins over one stored from a chat",
    async () => {
      const homeChannels = { telegram: { chatId: String(OPERATOR) } };
      const { telegram, db } = await gatewayWith(backend, { homeChannels });
      // A home stored from a chat (by an earlier version, where anyone could /sethome).
      await db.setMeta("home_channels", JSON.stringify({ telegram: { chatId: String(MEMBER), chatType: "dm", userId: String(MEMBER) } }));
      const id = await cliSession(db);
      const outcome = await requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels, timeoutMs: 20_000, pollMs: 100 });
      expect(outcome.chatId).toBe(String(OPERATOR));
      await telegram.waitFor(() => telegram.sentTo(OPERATOR)[0], "the summary in the operator's chat");
      expect(telegram.sentTo(MEMBER)).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
