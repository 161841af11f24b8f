/**
 * End to end: `threadline serve` as a child process with the Discord adapter, talking to the
 * local fake Discord (test/fakes/discord: REST and gateway WebSocket) through
 * `adapters.discord.apiUrl`, with the fake OpenAI-compatible provider as the model. Nothing
 * leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DISCORD_IDS, discordFixture, discordMessage, startFakeDiscordServer, type FakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, runServe, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-discord-e2e";
const { dm: DM, general: GENERAL, thread: THREAD, bot: BOT, dan: DAN } = DISCORD_IDS;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<{ discord: FakeDiscordServer; model: FakeOpenAiServer }> {
  const discord = await startFakeDiscordServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => discord.close(),
    () => model.close(),
  );
  return { discord, model };
}

function setupHome(discord: FakeDiscordServer, extra: Record<string, unknown> = {}): Promise<string> {
  return makeHome({
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, discord: { apiUrl: discord.url, ...openUnlessRestricted(extra) } },
  });
}

/**
 * These tests rely on everyone being answered (`access: open`), unless a test restricts who
 * may talk (`allowedUsers` or its own `access`).
 */
function openUnlessRestricted(extra: Record<string, unknown>): Record<string, unknown> {
  return "allowedUsers" in extra || "access" in extra ? extra : { access: "open", ...extra };
}

function env(discord: FakeDiscordServer, model: FakeOpenAiServer): Record<string, string> {
  return { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", DISCORD_BOT_TOKEN: discord.token };
}

async function started(gateway: GatewayProcess, discord: FakeDiscordServer): Promise<void> {
  await waitFor(() => gateway.logLines().find((l) => l["platform"] === "discord" && l["bot"] === "@threadline_test" && l["mode"] === "gateway"), {
    what: "the discord startup line",
    describe: () => gateway.output(),
  });
  await discord.waitFor(() => discord.connected, "the gateway connection");
}

function dm(id: string, content: string): Record<string, unknown> {
  return discordMessage("message-dm", { id, content });
}

function mention(fixture: "message-guild-mention" | "message-thread", id: string, body: string, author?: Record<string, unknown>): Record<string, unknown> {
  return discordMessage(fixture, { id, content: `<@${BOT}> ${body}`, ...(author ? { author } : {}) });
}

function expectNoToken(gateway: GatewayProcess, discord: FakeDiscordServer): void {
  expect(gateway.output()).not.toContain(discord.token);
}

const dan = { id: DAN, username: "dan", global_name: "Dan" };

describe("threadline serve with Discord", () => {
  it(
    "starts with the adapter, its mode and the bot identity; a DM keeps its context across turns; the token never appears",
    async () => {
      const { discord, model } = await fakes();
      const home = await setupHome(discord);
      const gateway = await spawnGateway({ home, env: env(discord, model) });
      await started(gateway, discord);
      discord.pushMessage(dm("1500000000000000011", "my name is Zed"));
      await discord.waitFor(() => discord.sentTo(DM)[0], "the first reply");
      discord.pushMessage(dm("1500000000000000012", "what is my name?"));
      await discord.waitFor(() => discord.sentTo(DM)[1], "the second reply");
      expect(dialogue(await requestFor(model, "what is my name?"))).toEqual([
        ["user", "my name is Zed"],
        ["assistant", "Reply to: my name is Zed"],
        ["user", "what is my name?"],
      ]);
      expect(discord.sentTo(DM).map((m) => [m.content, m.reply_to])).toEqual([
        ["Reply to: my name is Zed", "1500000000000000011"],
        ["Reply to: what is my name?", "1500000000000000012"],
      ]);
      expect(discord.typingIn(DM)).toBeGreaterThanOrEqual(2);
      const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      expect(metrics).not.toContain(discord.token);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, discord);
    },
    TEST_TIMEOUT,
  );

  it(
    "guild channel: no mention → ignored and not stored; mentions answered with one session per user; a thread is one shared session",
    async () => {
      const { discord, model } = await fakes();
      const home = await setupHome(discord);
      const gateway = await spawnGateway({ home, env: env(discord, model) });
      await started(gateway, discord);
      discord.pushMessage(discordMessage("message-guild", { id: "1500000000000000020", content: "nobody asked the bot" }));
      discord.pushMessage(mention("message-guild-mention", "1500000000000000021", "alice here"));
      discord.pushMessage(mention("message-guild-mention", "1500000000000000022", "dan here", dan));
      await discord.waitFor(() => discord.sentTo(GENERAL).length === 2, "two channel replies");
      discord.pushMessage(mention("message-thread", "1500000000000000023", "thread from alice"));
      await discord.waitFor(() => discord.sentTo(THREAD).length === 1, "the first thread reply");
      discord.pushMessage(mention("message-thread", "1500000000000000024", "thread from dan", dan));
      await discord.waitFor(() => discord.sentTo(THREAD).length === 2, "the second thread reply");
      expect(
        discord
          .sentTo(GENERAL)
          .map((m) => m.reply_to)
          .sort(),
      ).toEqual(["1500000000000000021", "1500000000000000022"]);
      // The thread is shared: each message of a turn reaches the model with its sender (issue 26, point 5).
      const second = await requestFor(model, "[Dan] thread from dan");
      expect(dialogue(second).map(([, t]) => t)).toEqual(["thread from alice", "Reply to: [Alice Doe] thread from alice", "[Dan] thread from dan"]);
      expect(model.chatRequests().some((r) => dialogue(r).some(([, t]) => t.includes("nobody asked")))).toBe(false);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const keys = (await db.listRoutes()).items.map((r) => r.key).sort();
        expect(keys).toEqual(
          [
            `agent:main:discord:group:${GENERAL}:${DISCORD_IDS.alice}`,
            `agent:main:discord:group:${GENERAL}:${DAN}`,
            `agent:main:discord:thread:${GENERAL}:${THREAD}`,
          ].sort(),
        );
        expect(await db.searchMessages("nobody")).toHaveLength(0);
      });
      expectNoToken(gateway, discord);
    },
    TEST_TIMEOUT,
  );

  it(
    "/new starts a new session with a notice",
    async () => {
      const { discord, model } = await fakes();
      const home = await setupHome(discord);
      const gateway = await spawnGateway({ home, env: env(discord, model) });
      await started(gateway, discord);
      discord.pushMessage(dm("1500000000000000031", "first topic"));
      await discord.waitFor(() => discord.sentTo(DM)[0], "the first reply");
      discord.pushMessage(dm("1500000000000000032", "/new"));
      const notice = await discord.waitFor(() => discord.sentTo(DM)[1], "the /new notice");
      expect(notice.content).toMatch(/^Started a new session \(\d{8}_\d{6}_[0-9a-f]{8}\)/u);
      discord.pushMessage(dm("1500000000000000033", "second topic"));
      await discord.waitFor(() => discord.sentTo(DM)[2], "the reply in the new session");
      expect(dialogue(await requestFor(model, "second topic"))).toEqual([["user", "second topic"]]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, discord);
    },
    TEST_TIMEOUT,
  );

  it(
    "a 6,000-character reply arrives as ordered chunks within 2,000; a 429 is waited out and retried",
    async () => {
      const { discord, model } = await fakes();
      const paragraphs = Array.from({ length: 60 }, (_, i) => `Paragraph ${String(i).padStart(2, "0")}: ${"words ".repeat(16).trim()}.`);
      const long = paragraphs.join("\n\n");
      expect(long.length).toBeGreaterThan(6000);
      model.enqueue(fakeTextReply(long));
      discord.failNext("POST", /^\/channels\/\d+\/messages$/u, { status: 429, body: discordFixture("error-429"), headers: { "retry-after": "0.3" } });
      const home = await setupHome(discord);
      const gateway = await spawnGateway({ home, env: env(discord, model) });
      await started(gateway, discord);
      discord.pushMessage(dm("1500000000000000041", "write a lot"));
      await discord.waitFor(() => discord.sentTo(DM).length >= 4, "the chunks");
      // The barrier: the next message of the chat is answered only after the long reply's turn
      // (every chunk of it) is done.
      discord.pushMessage(dm("1500000000000000042", "and now briefly"));
      await discord.waitFor(() => discord.sentTo(DM).find((m) => m.reply_to === "1500000000000000042"), "the reply after the chunks");
      expect(discord.sentTo(DM).at(-1)!.content).toBe("Reply to: and now briefly");
      const chunks = discord.sentTo(DM).slice(0, -1);
      expect(chunks).toHaveLength(4);
      for (const chunk of chunks) expect(chunk.content.length).toBeLessThanOrEqual(2000);
      expect(chunks.map((c) => c.content).join("\n\n")).toBe(long);
      expect(chunks.map((c) => c.reply_to)).toEqual(["1500000000000000041", null, null, null]);
      expect(discord.callsOf("POST", /^\/channels\/\d+\/messages$/u).map((c) => c.status)).toEqual([429, 200, 200, 200, 200, 200]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, discord);
    },
    TEST_TIMEOUT,
  );

  it(
    "a dropped gateway connection resumes: the message sent meanwhile is answered once, nothing lost or duplicated",
    async () => {
      const { discord, model } = await fakes();
      const home = await setupHome(discord);
      const gateway = await spawnGateway({ home, env: env(discord, model) });
      await started(gateway, discord);
      discord.pushMessage(dm("1500000000000000051", "before the drop"));
      await discord.waitFor(() => discord.sentTo(DM)[0], "the first reply");
      discord.dropConnection();
      discord.pushMessage(dm("1500000000000000052", "while dropped"));
      await discord.waitFor(() => discord.gatewayOps.find((o) => o.op === 6), "the RESUME");
      await discord.waitFor(() => discord.sentTo(DM)[1], "the reply to the replayed message");
      discord.pushMessage(dm("1500000000000000053", "after the resume"));
      await discord.waitFor(() => discord.sentTo(DM)[2], "the reply after the resume");
      // "after the resume" came after the replay, in the same DM: a second turn of a replayed
      // message would have run, and been answered, before it.
      expect(discord.sentTo(DM).map((m) => [m.content, m.reply_to])).toEqual([
        ["Reply to: before the drop", "1500000000000000051"],
        ["Reply to: while dropped", "1500000000000000052"],
        ["Reply to: after the resume", "1500000000000000053"],
      ]);
      expect(discord.gatewayOps.filter((o) => o.op === 2)).toHaveLength(1);
      expect(gateway.logLines().some((l) => String(l["msg"]).startsWith("discord: gateway connection resumed"))).toBe(true);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, discord);
    },
    TEST_TIMEOUT,
  );

  it(
    "SIGKILL during a turn: after the restart the reply reaches the channel exactly once",
    async () => {
      const { discord, model } = await fakes();
      let slow = true;
      model.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 60_000 } : null));
      const home = await setupHome(discord);
      const first = await spawnGateway({ home, env: env(discord, model) });
      await started(first, discord);
      discord.pushMessage(dm("1500000000000000061", "a slow question"));
      await requestFor(model, "a slow question");
      expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
      expect(discord.sentTo(DM)).toEqual([]);

      slow = false;
      const restartedAt = model.requests.length;
      const second = await spawnGateway({ home, env: env(discord, model) });
      await requestFor(model, "a slow question", restartedAt);
      await discord.waitFor(() => discord.sentTo(DM)[0], "the resumed reply");
      await started(second, discord);
      // The same message delivered again (a replay) is no second turn.
      discord.pushMessage(dm("1500000000000000061", "a slow question"));
      discord.pushMessage(dm("1500000000000000062", "a later question"));
      await discord.waitFor(() => discord.sentTo(DM)[1], "the reply to the later question");
      // The later question is admitted after the redelivery (one chat's messages are admitted in
      // arrival order) and runs after any turn the redelivery could have started: its reply is the barrier.
      expect(discord.sentTo(DM).map((m) => [m.content, m.reply_to])).toEqual([
        ["Reply to: a slow question", "1500000000000000061"],
        ["Reply to: a later question", "1500000000000000062"],
      ]);
      expect(await second.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(first, discord);
      expectNoToken(second, discord);
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses to start without a token, naming the key and the variable (exit 2); a refused token stops the start without printing it",
    async () => {
      const { discord, model } = await fakes();
      const home = await setupHome(discord);
      const missing = await runServe({ home, env: { ...env(discord, model), DISCORD_BOT_TOKEN: undefined } });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("adapters.discord.token: missing: set it in the config file or in the DISCORD_BOT_TOKEN environment variable");
      const wrong = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gwrong.not-the-right-token-value-000000";
      const refused = await runServe({ home, env: { ...env(discord, model), DISCORD_BOT_TOKEN: wrong } });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr + refused.stdout).toContain("Discord refused the bot token");
      expect(refused.stderr + refused.stdout).not.toContain(wrong);
    },
    TEST_TIMEOUT,
  );
});
