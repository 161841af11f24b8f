/**
 * Threat (issue 27, point 1, and the rule that secrets are never logged): a pairing code in
 * the log lets anyone who reads the log (a log shipper, a shared terminal) approve themselves.
 * A real `threadline serve` at debug level: a stranger gets a code, an admin approves it from
 * chat (`/pair approve <code>`, recorded as approved by `telegram:<admin id>`), the stranger is
 * then answered, and the code appears nowhere in the gateway's output. On both backends.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeTelegramServer, telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor } from "../serve/gateway-process.js";
import { codeIn } from "./platform-drivers.js";
import { BACKENDS, databaseKey, dropSchemas, withGatewayDb } from "./pairing-support.js";

const TEST_TIMEOUT = 90_000;
const STRANGER = 111111;
const ADMIN = { id: 555555, first_name: "Dan", username: "dan", is_bot: false };

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
  await dropSchemas();
});

describe.each(BACKENDS)("%s: pairing codes are never logged", (backend) => {
  it(
    "at debug level: the code sent to a stranger and approved from chat by an admin is not in the log",
    async () => {
      const telegram = await startFakeTelegramServer();
      const model = await startFakeOpenAiServer({ apiKey: "sk-fake-security", title: null });
      closers.push(
        () => telegram.close(),
        () => model.close(),
      );
      const { config: database, schema } = await databaseKey(backend);
      const home = await makeHome({
        ...database,
        gateway: { logLevel: "debug" },
        titles: { enabled: false },
        adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, admins: [ADMIN.id] } },
      });
      const gateway = await spawnGateway({
        home,
        env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-fake-security", THREADLINE_MODEL: "fake-model", TELEGRAM_BOT_TOKEN: telegram.token },
      });
      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 1, text: "let me in" }));
      const offer = await telegram.waitFor(() => telegram.sentTo(STRANGER)[0], "the pairing reply");
      const code = codeIn(offer.plain);
      expect(code, offer.plain).not.toBeNull();

      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 2, text: `/pair approve ${code}`, from: ADMIN, chat: { id: ADMIN.id } }));
      const approved = await telegram.waitFor(() => telegram.sentTo(ADMIN.id)[0], "the admin's /pair answer");
      expect(approved.plain).toContain("Approved");

      // A stranger's group mention is dropped by the gate, which says so at debug level (the level is on).
      telegram.pushUpdate(telegramUpdate("update-group-mention", { message_id: 4, text: "@threadline_test_bot hi all" }));
      await waitFor(() => gateway.logLines().find((l) => l["level"] === 20 && String(l["msg"]).startsWith("access:")), {
        what: "the gate's debug line",
        describe: () => gateway.output(),
      });
      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 3, text: "thanks" }));
      await telegram.waitFor(() => telegram.sentTo(STRANGER).find((m) => m.reply_to === 3), "the answer after approval");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });

      expect(gateway.output()).not.toContain(code!);
      expect(gateway.output().toLowerCase()).not.toContain(code!.toLowerCase());
      await withGatewayDb(home, schema, async (db) => {
        const { approved: people } = await db.listPairing({ platform: "telegram" });
        expect(people.map((p) => [p.userId, p.approvedBy])).toEqual([[String(STRANGER), `telegram:${ADMIN.id}`]]);
      });
    },
    TEST_TIMEOUT,
  );
});
