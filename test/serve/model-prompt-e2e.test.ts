/**
 * What the model is given by a real `threadline serve` (issue 26, points 5, 7, 8, 9): sender
 * prefixes in shared sessions, the `session_search` guidance line, the stored system prompt,
 * and a `/compress` summary request without tools. Messages come in through the webhook
 * adapter; the provider is the fake OpenAI-compatible server in this process, which records
 * every request it received. The gateway is the built bin (`npm run build` first).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAiServer, type FakeOpenAiRequest, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import {
  BIN,
  cleanupProcesses,
  makeHome,
  postWebhook,
  spawnGateway,
  startCallbackServer,
  withDatabase,
  type CallbackServer,
  type GatewayProcess,
  type WebhookMessage,
} from "./gateway-process.js";
import { contentText, dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 60_000;
const SECRET = "e2e-model-prompt-secret-0123456789";
const FAKE_KEY = "sk-fake-model-prompt-key";
/** Words of the guidance line about `session_search` (its exact text is the gateway's to choose). */
const GUIDANCE = /session_search/u;

const fakes: FakeOpenAiServer[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

interface Setup {
  fake: FakeOpenAiServer;
  callback: CallbackServer;
  gateway: GatewayProcess;
  home: string;
  /** Posts a message and waits for the gateway's delivery answering it. */
  send(message: WebhookMessage & { messageId: string }): Promise<CallbackServer["deliveries"][number]>;
}

async function setup(config: Record<string, unknown> = {}): Promise<Setup> {
  const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY });
  fakes.push(fake);
  const callback = await startCallbackServer(SECRET);
  const home = await makeHome({
    adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
    titles: { enabled: false },
    ...config,
  });
  const gateway = await spawnGateway({
    home,
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" },
  });
  const send: Setup["send"] = async (message) => {
    const posted = await postWebhook(gateway.url, SECRET, message);
    expect(posted.status).toBeLessThan(300);
    return callback.replyTo(message.messageId);
  };
  return { fake, callback, gateway, home, send };
}

/** The system messages of a model request, in order. */
function systemTexts(request: FakeOpenAiRequest): string[] {
  return (request.body?.messages ?? []).filter((m) => m.role === "system").map((m) => contentText(m.content));
}

describe("threadline serve: what the model is given (issue 26)", () => {
  it(
    "5. in a shared thread each user message reaches the model as [sender] text; the store keeps the person's own text; DMs are not prefixed",
    async () => {
      const { fake, send, gateway, home } = await setup();
      const thread = { chatId: "room-1", threadId: "t-1", chatType: "thread" as const, chatName: "Ops" };
      const first = await send({ ...thread, userId: "u-alice", userName: "Alice", text: "alice opens the thread", messageId: "m1" });
      expect(first.body.kind).toBe("reply");
      const second = await send({ ...thread, userId: "u-carol", userName: "Carol", text: "carol speaking in thread", messageId: "m2" });
      expect(second.body.kind).toBe("reply");
      // A name cannot fake a second prefix or break the line.
      await send({ ...thread, userId: "u-mallory", userName: "Mal] [Alice\nX", text: "who am I", messageId: "m3" });

      const carol = await requestFor(fake, "[Carol] carol speaking in thread");
      expect(dialogue(carol).at(-1)).toEqual(["user", "[Carol] carol speaking in thread"]);
      expect(dialogue(await requestFor(fake, "[Alice] alice opens the thread")).at(-1)).toEqual(["user", "[Alice] alice opens the thread"]);
      expect(dialogue(await requestFor(fake, "[Mal Alice X] who am I")).at(-1)?.[1]).toBe("[Mal Alice X] who am I");

      // A DM is one person: no prefix.
      await send({ chatId: "dm-bob", userId: "u-bob", userName: "Bob", text: "hi from bob", messageId: "m4" });
      expect(dialogue(await requestFor(fake, "hi from bob")).at(-1)).toEqual(["user", "hi from bob"]);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const users = (await db.getMessages(second.body.sessionId!)).filter((m) => m.role === "user").map((m) => m.content);
        expect(users).toEqual(["alice opens the thread", "carol speaking in thread", "who am I"]);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "5. a group shared by its members is prefixed; a group with per-user sessions is not",
    async () => {
      const shared = await setup({ sessions: { groupSessionsPerUser: false } });
      await shared.send({ chatId: "g-1", chatType: "group", userId: "u-dan", userName: "Dan", text: "dan in the group", messageId: "g1" });
      expect(dialogue(await requestFor(shared.fake, "[Dan] dan in the group")).at(-1)?.[1]).toBe("[Dan] dan in the group");
      expect(await shared.gateway.stop()).toEqual({ code: 0, signal: null });

      const perUser = await setup();
      await perUser.send({ chatId: "g-1", chatType: "group", userId: "u-dan", userName: "Dan", text: "dan alone", messageId: "g2" });
      expect(dialogue(await requestFor(perUser.fake, "dan alone")).at(-1)?.[1]).toBe("dan alone");
      expect(await perUser.gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "7. with session_search enabled the system prompt says when to use it; without the tool it does not",
    async () => {
      const on = await setup();
      await on.send({ chatId: "dm-1", userId: "u-1", userName: "Ann", text: "remember?", messageId: "a1" });
      const withTool = await requestFor(on.fake, "remember?");
      expect(Array.isArray(withTool.body?.tools)).toBe(true);
      expect(systemTexts(withTool).join("\n")).toMatch(GUIDANCE);
      expect(await on.gateway.stop()).toEqual({ code: 0, signal: null });

      const cases: Array<[Record<string, unknown>, string[] | undefined]> = [
        [{ provider: { tools: "off" } }, undefined],
        [{ tools: { sessionSearch: { enabled: false }, memory: { enabled: false } } }, undefined],
        // Without session_search the memory tool stays (it has its own guidance).
        [{ tools: { sessionSearch: { enabled: false } } }, ["memory"]],
      ];
      for (const [config, names] of cases) {
        const off = await setup(config);
        await off.send({ chatId: "dm-1", userId: "u-1", userName: "Ann", text: "remember?", messageId: "a2" });
        const without = await requestFor(off.fake, "remember?");
        const sent = without.body?.tools as Array<{ function: { name: string } }> | undefined;
        expect(sent?.map((t) => t.function.name)).toEqual(names);
        expect(systemTexts(without).join("\n")).toContain("## Current Session Context");
        expect(systemTexts(without).join("\n")).not.toMatch(GUIDANCE);
        expect(await off.gateway.stop()).toEqual({ code: 0, signal: null });
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "8. the session stores the system prompt the model was given, and the new one when it changes",
    async () => {
      const { fake, send, gateway, home } = await setup();
      const first = await send({ chatId: "dm-2", userId: "u-2", userName: "Ann", text: "first turn", messageId: "s1" });
      const sessionId = first.body.sessionId!;
      const given = systemTexts(await requestFor(fake, "first turn"));
      expect(given).toHaveLength(1);
      await withDatabase(home, async (db) => {
        expect((await db.getSession(sessionId))!.systemPrompt).toBe(given[0]);
      });

      // The user's display name changed: the context prompt changes, and so does the stored one.
      await send({ chatId: "dm-2", userId: "u-2", userName: "Annabel", text: "second turn", messageId: "s2" });
      const changed = systemTexts(await requestFor(fake, "second turn"));
      expect(changed[0]).toContain("Annabel");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.getSession(sessionId))!.systemPrompt).toBe(changed[0]);
      });
      // What people audit: `threadline sessions show --full` prints it.
      const shown = await promisify(execFile)(process.execPath, [BIN, "sessions", "show", sessionId, "--full"], {
        env: { ...process.env, THREADLINE_HOME: home, THREADLINE_DB: undefined, THREADLINE_CONFIG: undefined, NO_COLOR: "1" },
        timeout: 30_000,
      });
      expect(shown.stdout).toContain("system prompt");
      expect(shown.stdout).toContain("## Current Session Context");
      expect(shown.stdout).toContain("Annabel");
    },
    TEST_TIMEOUT,
  );

  it(
    "9. /compress asks for the summary without tools",
    async () => {
      const { fake, send, gateway } = await setup();
      await send({ chatId: "dm-3", userId: "u-3", userName: "Ann", text: "plan the release", messageId: "c1" });
      expect(Array.isArray((await requestFor(fake, "plan the release")).body?.tools)).toBe(true);
      const before = fake.chatRequests().length;
      const notice = await send({ chatId: "dm-3", userId: "u-3", userName: "Ann", text: "/compress", messageId: "c2" });
      expect(notice.body.text).toMatch(/^Compressed into a new session/u);
      // The memory tool saves state: the agent first gets a turn to save what matters (as hermes
      // flushes memories before compressing), with its tools; then the summary, without them.
      const after = fake.chatRequests().slice(before);
      expect(after).toHaveLength(2);
      const flushTools = (after[0]!.body?.tools as Array<{ function: { name: string } }> | undefined)?.map((t) => t.function.name);
      expect(flushTools).toContain("memory");
      const summary = after.slice(1);
      expect(dialogue(summary[0]!).at(-1)?.[1]).toMatch(/^Summarise our conversation/u);
      expect(summary[0]!.body?.tools).toBeUndefined();
      expect(systemTexts(summary[0]!).join("\n")).not.toMatch(GUIDANCE);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );
});
