/**
 * What `threadline serve` resumes at startup, across real processes: interrupted sessions
 * of the platforms it serves are resumed; sessions of other platforms (a terminal `cli`
 * session left mid-turn by `threadline chat`) are left alone, with their resume marker and
 * queued messages kept for the program that serves them — no model turn runs for a reply
 * nobody can receive.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SessionQueue, SessionRouter, type InboundMessage, type SessionSource } from "../../src/gateway/index.js";
import { messageText, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, startCallbackServer, waitFor, withDatabase } from "./gateway-process.js";

const TEST_TIMEOUT = 60_000;
const FAKE_KEY = "sk-fake-resume-key";
const SECRET = "resume-webhook-secret-0123456789";

const fakes: FakeOpenAiServer[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** Every user text the model was asked about. */
function askedTexts(fake: FakeOpenAiServer): string[] {
  return fake.chatRequests().flatMap((r) => (r.body?.messages ?? []).filter((m) => m.role === "user").map((m) => messageText(m.content)));
}

describe("threadline serve: startup resume only for the platforms it serves", () => {
  it(
    "an interrupted terminal (cli) session is not resumed and its queued message is not run; a webhook session is",
    async () => {
      const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"] });
      fakes.push(fake);
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({ adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } } });

      // A previous life (a `threadline chat` and a gateway) left two turns cut off mid-turn.
      const cli: SessionSource = { platform: "cli", chatType: "dm", chatId: "lane-1", userId: "me" };
      const hook: SessionSource = { platform: "webhook", chatType: "dm", chatId: "hook-chat", userId: "erin" };
      const { cliKey, cliSession } = await withDatabase(home, async (db) => {
        const store = new SessionRouter({ db });
        const now = store.clock.now();
        const c = await store.startTurn(cli, [{ role: "user", content: "a terminal question", timestamp: now }]);
        await store.startTurn(hook, [{ role: "user", content: "a webhook question", timestamp: now, platformMessageId: "w1" }]);
        const queued: InboundMessage = { source: cli, text: "a queued terminal follow-up", messageId: "c2" };
        await new SessionQueue(db).enqueue(c.key, { messageId: "c2", senderId: "me", kind: "text", albumId: null, payload: queued });
        return { cliKey: c.key, cliSession: c.sessionId };
      });

      const gateway = await spawnGateway({
        home,
        env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" },
      });
      // The webhook session (a platform this gateway serves) is resumed and its reply delivered.
      const reply = await callback.waitFor((d) => d.body.text === "Reply to: a webhook question", "the resumed webhook reply");
      expect(reply.body).toMatchObject({ kind: "reply", chatId: "hook-chat", inReplyTo: ["w1"] });
      // The terminal session is skipped (and said so in the log).
      await waitFor(() => gateway.logLines().some((l) => l["key"] === cliKey && String(l["msg"]).startsWith("not resuming")), {
        what: "the log line about the skipped cli session",
        describe: () => gateway.output(),
      });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });

      expect(askedTexts(fake)).not.toContain("a terminal question");
      expect(askedTexts(fake)).not.toContain("a queued terminal follow-up");
      expect(gateway.output()).not.toContain("reply not delivered");
      await withDatabase(home, async (db) => {
        // Left for `threadline chat --resume`: the marker, the transcript and the queue as they were.
        expect(await db.getRoute(cliKey)).toMatchObject({ resumePending: true, resumeReason: "restart_interrupted", suspended: false });
        expect((await db.getMessages(cliSession)).map((m) => [m.role, m.content])).toEqual([["user", "a terminal question"]]);
        expect((await db.listQueue(cliKey)).map((item) => (item.payloads[0] as InboundMessage).text)).toEqual(["a queued terminal follow-up"]);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "a clean stop leaves alone a terminal turn running on the same database and writes the clean-shutdown marker",
    async () => {
      const home = await makeHome();
      const gateway = await spawnGateway({ home });
      // A `threadline chat` on the same database is mid-turn while the gateway stops.
      const cli: SessionSource = { platform: "cli", chatType: "dm", chatId: "lane-2", userId: "me" };
      const cliKey = await withDatabase(home, async (db) => {
        const store = new SessionRouter({ db });
        return (await store.startTurn(cli, [{ role: "user", content: "still thinking", timestamp: store.clock.now() }])).key;
      });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect(await db.getRoute(cliKey)).toMatchObject({ resumePending: false, resumeReason: null });
        expect(await db.getMeta("gateway.main.clean_shutdown")).not.toBeNull();
      });
    },
    TEST_TIMEOUT,
  );
});
