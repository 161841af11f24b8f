/**
 * Threat (issue 27, point 1): any stranger who finds the bot is answered by the agent (and its
 * `session_search` tool). With the default config (no `access`, no `allowedUsers`) every chat
 * platform now pairs: a stranger's DM gets exactly one reply with a one-time code and is
 * neither answered nor stored; after the owner runs `threadline pairing approve <platform>
 * <code>` (the real CLI) their next message is answered. In a group an unknown sender gets no
 * code and no answer. Real `threadline serve` processes against each platform's protocol fake.
 */
import { afterEach, describe, expect, it } from "vitest";
import { telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { startFakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, type GatewayProcess } from "../serve/gateway-process.js";
import { codeIn, dmRepliesAtLeast, PLATFORMS, startPlatform, type PlatformDriver } from "./platform-drivers.js";
import { approveAsOwner, BACKENDS, databaseKey, dropSchemas, withGatewayDb, type Backend } from "./pairing-support.js";

const TEST_TIMEOUT = 90_000;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
  await dropSchemas();
});

/** The stranger's flow on one platform and backend: code, silence, approval, answer. */
async function pairingFlow(driver: PlatformDriver, backend: Backend): Promise<void> {
  const { config: database, schema } = await databaseKey(backend);
  const home = await makeHome({ ...database, titles: { enabled: false }, adapters: { apiServer: { enabled: false }, [driver.platform]: driver.section() } });
  const gateway = await spawnGateway({ home, env: driver.env });
  await driver.started(gateway);

  await driver.sendDm(gateway, "hello, who are you");
  const [first] = await dmRepliesAtLeast(driver, 1, "the pairing reply");
  const code = codeIn(first!);
  expect(code, `a pairing code in ${JSON.stringify(first)}`).not.toBeNull();
  expect(first).toContain(`threadline pairing approve ${driver.platform} ${code}`);

  // Within 10 minutes a second message gets no second code (and no answer).
  await driver.sendDm(gateway, "are you still there");
  await waitFor(() => gateway.logLines().find((l) => l["platform"] === driver.platform && l["outcome"] === "rate-limited"), {
    what: "the gateway's note that the second message got no reply",
    describe: () => gateway.output(),
  });
  await approveAsOwner(home, schema, driver.platform, code!);

  await driver.sendDm(gateway, "now answer me");
  const replies = await dmRepliesAtLeast(driver, 2, "the answer after approval");
  expect(replies).toEqual([first, "Reply to: now answer me"]);
  expect(driver.model.chatRequests().some((r) => JSON.stringify(r).includes("hello, who are you") || JSON.stringify(r).includes("are you still there"))).toBe(
    false,
  );
  expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  expect(gateway.output()).not.toContain(code!);
  // The startup log said once that pairing was picked because the section does not say.
  expect(gateway.logLines().filter((l) => String(l["msg"]).includes(`adapters.${driver.platform}.access is not set`))).toHaveLength(1);

  await withGatewayDb(home, schema, async (db) => {
    // The stranger's messages were stored nowhere; the session holds the approved turn only.
    expect(await db.searchMessages("hello")).toHaveLength(0);
    expect(await db.searchMessages("still")).toHaveLength(0);
    const sessions = (await db.listSessions({})).items;
    expect(sessions).toHaveLength(1);
    const texts = (await db.getMessages(sessions[0]!.id)).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    expect(texts).toEqual(["now answer me", "Reply to: now answer me"]);
    const pairing = await db.listPairing({ platform: driver.platform });
    expect(pairing.pending).toEqual([]);
    expect(pairing.approved.map((a) => [a.userId, a.approvedBy])).toEqual([[driver.strangerId, "cli"]]);
  });
}

describe("a stranger is paired, not answered", () => {
  describe.each(BACKENDS)("%s", (backend) => {
    it(
      "telegram: the stranger gets one code and no answer, nothing is stored; after `threadline pairing approve` the next message is answered",
      async () => {
        const driver = await startPlatform("telegram");
        closers.push(() => driver.close());
        await pairingFlow(driver, backend);
      },
      TEST_TIMEOUT,
    );
  });

  it.each(PLATFORMS.filter((p) => p !== "telegram"))(
    "%s (sqlite): the same flow through the platform's protocol fake",
    async (platform) => {
      const driver = await startPlatform(platform);
      closers.push(() => driver.close());
      await pairingFlow(driver, "sqlite");
    },
    TEST_TIMEOUT,
  );

  it(
    "telegram groups: an unknown sender gets no code and no answer; a listed sender in the same group is answered",
    async () => {
      const telegram = await startFakeTelegramServer();
      const model = await startFakeOpenAiServer({ apiKey: "sk-fake-security", title: null });
      closers.push(
        () => telegram.close(),
        () => model.close(),
      );
      const GROUP = -1001234567890;
      const home = await makeHome({
        titles: { enabled: false },
        adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, access: "pairing", allowedUsers: [555555] } },
      });
      const gateway: GatewayProcess = await spawnGateway({
        home,
        env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-fake-security", THREADLINE_MODEL: "fake-model", TELEGRAM_BOT_TOKEN: telegram.token },
      });
      await waitFor(() => gateway.logLines().find((l) => l["platform"] === "telegram" && l["mode"] === "polling"), { what: "the telegram startup line" });
      // The group fixture's sender (222222, Bob) is unknown; 555555 is listed.
      telegram.pushUpdate(telegramUpdate("update-group-mention", { message_id: 11, text: "@threadline_test_bot stranger here" }));
      telegram.pushUpdate(
        telegramUpdate("update-group-mention", {
          message_id: 12,
          text: "@threadline_test_bot listed here",
          from: { id: 555555, first_name: "Dan", username: "dan" },
        }),
      );
      await telegram.waitFor(() => telegram.sentTo(GROUP)[0], "the listed sender's answer");
      expect(telegram.sentTo(GROUP).map((m) => m.reply_to)).toEqual([12]);
      expect(telegram.sentTo(GROUP)[0]!.plain).toContain("listed here");
      expect(telegram.sentTo(222222)).toEqual([]);
      expect(telegram.callsOf("sendMessage").some((c) => codeIn(String(c.params["text"] ?? "")) !== null && String(c.params["text"]).includes("pairing"))).toBe(
        false,
      );
      expect(model.chatRequests().some((r) => JSON.stringify(r).includes("stranger here"))).toBe(false);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );
});
