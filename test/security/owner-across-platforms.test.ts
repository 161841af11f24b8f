/**
 * Threat/defect (issue 27, "One owner, many platforms"): the operator's own Telegram talk
 * could not be recalled from the terminal (the terminal agent answered "No earlier sessions
 * mention …"), and loosening the scope to `all` would have opened everyone's sessions to
 * everyone. With `gateway.owner`, the owner's sessions on every platform are one person for
 * `session_search`; a stranger still sees none of them.
 *
 * The Telegram side runs through a real `threadline serve` child against the fake Bot API;
 * the terminal side is `threadline chat` (piped, in process) on the same database. The fake
 * provider calls `session_search` on cue. The terminal's user is the operating-system user
 * (the default of `gateway.owner.cli`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { CliAdapter } from "../../src/adapters/index.js";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { runInProcess } from "../cli/cli-run.js";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway, waitFor, withDatabase } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-owner";
const OWNER = 111111;
const STRANGER = 222222;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

function dmFrom(id: number, name: string, messageId: number, text: string): Record<string, unknown> {
  const person = { id, is_bot: false, first_name: name };
  return telegramUpdate("update-private-text", { message_id: messageId, text, from: person, chat: { id, first_name: name, type: "private" } });
}

function searchesNext(model: FakeOpenAiServer, query: string): void {
  model.enqueue(fakeToolCallReply([{ name: "session_search", arguments: JSON.stringify({ query }) }]), fakeTextReply("Searched."));
}

describe("security: gateway.owner makes the operator one person across platforms", () => {
  it(
    "the owner finds their telegram talk from the terminal; a telegram stranger does not",
    async () => {
      const telegram: FakeTelegramServer = await startFakeTelegramServer();
      const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
      closers.push(
        () => telegram.close(),
        () => model.close(),
      );
      const home = await makeHome({
        titles: { enabled: false },
        gateway: { owner: { telegram: [String(OWNER)] } },
        // Both people may talk to the bot (stated, so a stricter default access changes nothing here).
        adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, allowedUsers: [OWNER, STRANGER] } },
      });
      const env = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", TELEGRAM_BOT_TOKEN: telegram.token };
      const gateway = await spawnGateway({ home, env });
      await waitFor(() => gateway.logLines().find((l) => l["platform"] === "telegram" && l["mode"] === "polling"), {
        what: "the telegram startup line",
        describe: () => gateway.output(),
      });

      telegram.pushUpdate(dmFrom(OWNER, "Olga", 1, "note: our kubernetes cluster is called bluefin-prod"));
      await telegram.waitFor(() => telegram.sentTo(OWNER)[0], "the reply to the owner");
      // A stranger asks the bot to search for it.
      searchesNext(model, "kubernetes");
      telegram.pushUpdate(dmFrom(STRANGER, "Mallory", 2, "what is the kubernetes cluster called?"));
      await telegram.waitFor(() => telegram.sentTo(STRANGER)[0], "the reply to the stranger");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });

      // The owner, at the terminal, asks the same.
      searchesNext(model, "kubernetes");
      const chat = await runInProcess(
        ["chat"],
        { ...env, THREADLINE_HOME: home, THREADLINE_DB: databaseOf(home), NO_COLOR: "1", PATH: process.env["PATH"] ?? "" },
        {
          input: "what did I call the kubernetes cluster?\n",
          timeoutMs: 60_000,
        },
      );
      expect(chat.code, chat.stderr).toBe(0);

      await withDatabase(home, async (db) => {
        const toolText = async (source: string, userId: string): Promise<string> => {
          const sessions = (await db.listSessions({ limit: 50, sources: [source], userId })).items;
          expect(sessions, `the ${source} sessions of ${userId}`).toHaveLength(1);
          return (await db.getMessages(sessions[0]!.id))
            .filter((m) => m.role === "tool")
            .map((m) => String(m.content))
            .join("\n");
        };
        const stranger = await toolText("telegram", String(STRANGER));
        expect(stranger).toMatch(/No earlier sessions mention/u);
        expect(stranger).not.toMatch(/bluefin/u);
        // The terminal's user, as `threadline chat` stores it.
        const terminal = await toolText("cli", String(new CliAdapter({ chatId: "probe" }).source.userId));
        expect(terminal).toMatch(/bluefin-prod/u);
      });
    },
    TEST_TIMEOUT,
  );
});
