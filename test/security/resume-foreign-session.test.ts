/**
 * Threat (issue 27, point 2): a person in the home chat takes over a session that was not
 * started there. A session handed off from the terminal is the operator's; before, anyone who
 * could talk in the chat it landed in could `/resume <id>` it later and chat inside the
 * operator's session. Now only an admin may `/resume` a session that was not started in this
 * chat: a non-admin is refused and stays where they were. Real `threadline serve` with the
 * Telegram fake; the terminal side runs here on the gateway's database, on both backends.
 */
import { afterEach, describe, expect, it } from "vitest";
import { requestHandoff } from "../../src/gateway/index.js";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { TEST_PG_URL } from "../contract/postgres-server.js";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway } from "../serve/gateway-process.js";
import { BACKENDS, databaseKey, dropSchemas, type Backend } from "./pairing-support.js";

const TEST_TIMEOUT = 90_000;
/** The sender of the Telegram DM fixture, whose DM is the home channel. */
const MEMBER = 111111;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
  await dropSchemas();
});

function dm(messageId: number, text: string): Record<string, unknown> {
  return telegramUpdate("update-private-text", { message_id: messageId, text });
}

/** A gateway whose Telegram home channel is MEMBER's DM, with a terminal session handed off there and MEMBER moved on with /new. */
async function handedOff(
  backend: Backend,
  telegramKeys: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<{ telegram: FakeTelegramServer; db: SessionDB; id: string }> {
  const telegram = await startFakeTelegramServer();
  closers.push(() => telegram.close());
  const { config: database, schema } = await databaseKey(backend);
  const homeChannels = { telegram: { chatId: String(MEMBER) } };
  const home = await makeHome({
    ...database,
    ...extra,
    titles: { enabled: false },
    homeChannels,
    adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, ...telegramKeys } },
  });
  await spawnGateway({ home, env: { TELEGRAM_BOT_TOKEN: telegram.token } });
  const db = schema === null ? await openSessionDB(databaseOf(home)) : await openSessionDB(TEST_PG_URL, { schema, poolSize: 2 });
  closers.push(() => db.close());
  const { id } = await db.createSession({ source: "cli", title: "the operator's plan" });
  await db.appendTurn(id, [
    { role: "user", content: "Plan the private release" },
    { role: "assistant", content: "Freeze the API first." },
  ]);
  await requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels, timeoutMs: 20_000, pollMs: 100 });
  await telegram.waitFor(() => telegram.sentTo(MEMBER)[0], "the summary in the home chat");
  telegram.pushUpdate(dm(1, "/new"));
  await telegram.waitFor(() => telegram.sentTo(MEMBER).find((m) => m.reply_to === 1), "the /new notice");
  return { telegram, db, id };
}

async function userTexts(db: SessionDB, id: string): Promise<string[]> {
  return (await db.getMessages(id)).filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

describe.each(BACKENDS)("%s: /resume of a session not started in this chat", (backend) => {
  it(
    "a non-admin is refused and does not get into the operator's session",
    async () => {
      const { telegram, db, id } = await handedOff(backend, { allowedUsers: [MEMBER] });
      telegram.pushUpdate(dm(2, `/resume ${id}`));
      const answer = await telegram.waitFor(() => telegram.sentTo(MEMBER).find((m) => m.reply_to === 2), "the /resume answer");
      expect(answer.plain).toContain("only an admin may resume it");
      telegram.pushUpdate(dm(3, "what was the plan?"));
      await telegram.waitFor(() => telegram.sentTo(MEMBER).find((m) => m.reply_to === 3), "the reply");
      expect(await userTexts(db, id)).not.toContain("what was the plan?");
    },
    TEST_TIMEOUT,
  );

  it(
    "an admin (here listed in gateway.admins) may take it back",
    async () => {
      const { telegram, db, id } = await handedOff(backend, { allowedUsers: [MEMBER] }, { gateway: { admins: { telegram: [MEMBER] } } });
      telegram.pushUpdate(dm(2, `/resume ${id}`));
      const answer = await telegram.waitFor(() => telegram.sentTo(MEMBER).find((m) => m.reply_to === 2), "the /resume answer");
      expect(answer.plain).toMatch(/^Resumed the operator's plan/);
      telegram.pushUpdate(dm(3, "what was the plan?"));
      await telegram.waitFor(() => telegram.sentTo(MEMBER).find((m) => m.reply_to === 3), "the reply");
      expect(await userTexts(db, id)).toContain("what was the plan?");
    },
    TEST_TIMEOUT,
  );
});
