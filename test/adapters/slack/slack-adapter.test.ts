/**
 * The Slack adapter in-process: the REAL Bolt and WebClient (through `apiUrl`) against the
 * local fake Web API, signed Events API POSTs to its route on a real Fastify server, a real
 * SQLite store and the real GatewayRunner.
 */
import { expect, it } from "vitest";
import type { AnswerRules } from "../../../src/adapters/chat/index.js";
import { SlackAdapter } from "../../../src/adapters/slack/index.js";
import type { AgentTurnInput } from "../../../src/agents/index.js";
import { HandoffError, requestHandoff } from "../../../src/gateway/index.js";
import { startFakeSlackServer } from "../../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../../fakes/slack/slack-events.js";
import { TEST_RULES, adapterHarness, lastUserText, serveWebhooks, useCleanups } from "../adapter-harness.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "slack-signing-secret-for-tests-0001";
const DM = "D0ALICEDM1";
const CHANNEL = "C0GENERAL1";
const BOT = "U0BOT00001";

const cleanups = useCleanups();

async function setup(options: { answer?: (input: AgentTurnInput) => string; rules?: Partial<AnswerRules>; assistantStatus?: boolean } = {}) {
  const fake = await startFakeSlackServer();
  cleanups.push(() => fake.close());
  const h = await adapterHarness(cleanups, {
    name: "slack",
    answer: options.answer,
    create: ({ logger }) =>
      SlackAdapter.create({
        botToken: fake.botToken,
        signingSecret: SECRET,
        apiUrl: fake.url,
        rules: { ...TEST_RULES, ...options.rules },
        assistantStatus: options.assistantStatus ?? false,
        logger,
        maxRetries: 2,
        retryMinTimeoutMs: 50,
      }),
  });
  const { url } = await serveWebhooks(cleanups, h);
  const events = `${url}/slack/events`;
  const deliver = async (payload: Record<string, unknown>): Promise<void> => {
    const answer = await postSlackEvent(events, payload, { signingSecret: SECRET });
    expect(answer.status).toBe(200);
  };
  return { ...h, fake, events, deliver };
}

it("connects: auth.test, the identity and mode logged; names come from users.info and conversations.info (cached)", async () => {
  const { fake, adapter, agent, logger, deliver } = await setup();
  expect(adapter.identity).toBe(`@threadline (${BOT})`);
  expect(adapter.mode).toBe("events");
  expect(logger.lines.some((l) => l.obj["platform"] === "slack" && l.obj["mode"] === "events" && l.obj["bot"] === adapter.identity)).toBe(true);
  expect(logger.lines.some((l) => l.msg === `slack adapter connected as ${adapter.identity} (events)`)).toBe(true);
  await deliver(slackEvent("event-app-mention", { ts: slackTs() }));
  await fake.waitFor(() => fake.sentTo(CHANNEL)[0], "the reply");
  await deliver(slackEvent("event-app-mention", { ts: slackTs(), text: `<@${BOT}> again` }));
  await fake.waitFor(() => fake.sentTo(CHANNEL)[1], "the second reply");
  expect(agent.inputs.map(lastUserText)).toEqual(["what is the plan?", "again"]);
  expect(fake.callsOf("users.info")).toHaveLength(1);
  expect(fake.callsOf("conversations.info")).toHaveLength(1);
  expect(logger.text()).not.toContain(fake.botToken);
});

it("the reply is Slack mrkdwn in a section block; rejected blocks are sent again as plain text", async () => {
  const { fake, deliver } = await setup({ answer: () => "**bold** & <tag> [docs](https://example.test/a?b=1)" });
  await deliver(slackEvent("event-message-im", { ts: slackTs() }));
  const reply = await fake.waitFor(() => fake.sentTo(DM)[0], "the formatted reply");
  expect(reply.text).toBe("*bold* &amp; &lt;tag&gt; <https://example.test/a?b=1|docs>");
  expect(reply.blocks).toEqual([{ type: "section", text: { type: "mrkdwn", text: reply.text } }]);
  fake.failNext("chat.postMessage", { error: "invalid_blocks" });
  await deliver(slackEvent("event-message-im", { ts: slackTs() }));
  const plain = await fake.waitFor(() => fake.sentTo(DM)[1], "the plain reply");
  expect(plain.text).toBe("**bold** & <tag> [docs](https://example.test/a?b=1)");
  expect(plain.mrkdwn).toBe(false);
  expect(plain.blocks).toBeNull();
});

it("a send that fails for good is logged with the session key and counted; the reply stays stored; no secret is logged", async () => {
  const { fake, db, logger, failures, deliver } = await setup({ answer: () => "stored anyway" });
  fake.failNext("chat.postMessage", { error: "channel_not_found" });
  await deliver(slackEvent("event-message-im", { ts: slackTs(), text: "hello" }));
  await fake.waitFor(() => failures.length > 0, "the send failure");
  expect(failures).toEqual(["slack/reply"]);
  const line = logger.lines.find((l) => l.msg === "sending to the platform failed")!;
  expect(line.obj["key"]).toBe(`agent:main:slack:dm:${DM}`);
  const route = await db.getRoute(`agent:main:slack:dm:${DM}`);
  expect((await db.getMessages(route!.sessionId)).map((m) => m.content)).toEqual(["hello", "stored anyway"]);
  expect(logger.text()).not.toContain(fake.botToken);
  expect(logger.text()).not.toContain(SECRET);
});

it("allowlists and groupReply: all", async () => {
  const { fake, deliver, agent } = await setup({ rules: { groupReply: "all", allowedUsers: ["U0ALICE001"] } });
  await deliver(slackEvent("event-message-channel", { ts: slackTs(), text: "no mention needed" }));
  await fake.waitFor(() => fake.sentTo(CHANNEL)[0], "the reply without a mention");
  await deliver(slackEvent("event-message-channel", { ts: slackTs(), user: "U0STRANGER", text: "not allowed" }));
  // The barrier: an allowed message delivered after it, answered in turn.
  await deliver(slackEvent("event-message-channel", { ts: slackTs(), text: "allowed again" }));
  await fake.waitFor(() => fake.sentTo(CHANNEL)[1], "the reply to the second allowed message");
  expect(agent.inputs.map(lastUserText)).toEqual(["no mention needed", "allowed again"]);
});

it("a message with a shared file is answered, its text going through (the file itself: slack-media.test.ts)", async () => {
  const { fake, agent, deliver } = await setup();
  await deliver(slackEvent("event-file-share", { ts: slackTs() }));
  await fake.waitFor(() => fake.sentTo(DM)[0], "the reply");
  expect(lastUserText(agent.inputs[0]!)).toContain("here is the diagram");
});

it("assistantStatus: assistant.threads.setStatus shows the status in the thread while the turn runs", async () => {
  const { fake, deliver } = await setup({ assistantStatus: true });
  const root = slackTs();
  await deliver(slackEvent("event-message-im", { ts: slackTs(), thread_ts: root }));
  const reply = await fake.waitFor(() => fake.sentTo(DM)[0], "the reply");
  expect(reply.thread_ts).toBe(root);
  expect(fake.callsOf("assistant.threads.setStatus")[0]!.params).toMatchObject({ channel_id: DM, thread_ts: root, status: "is thinking…" });
});

it("createThread posts a root message and returns its thread; a refused token fails the start without showing it", async () => {
  const { fake, adapter } = await setup();
  const thread = await adapter.createThread({ platform: "slack", chatType: "channel", chatId: CHANNEL, chatName: "general" }, "Continued from the terminal");
  const root = fake.sentTo(CHANNEL)[0]!;
  expect(root.text).toBe("🧵 Continued from the terminal");
  expect(thread).toMatchObject({ platform: "slack", chatType: "channel", chatId: CHANNEL, threadId: root.ts });

  const refused = await SlackAdapter.create({ botToken: "xoxb-wrong-token-value", signingSecret: SECRET, apiUrl: fake.url, maxRetries: 0 });
  const error = await refused
    .connect(async () => ({ status: "command", sessionKey: "x" }))
    .then(
      () => null,
      (e: unknown) => e as Error,
    );
  expect(error?.message).toContain("Slack refused the bot token (invalid_auth)");
  expect(`${error?.message} ${error?.stack} ${String(error?.cause)}`).not.toContain("wrong-token-value");
});

it("handoff: refused at once with a /sethome hint while slack has no home channel; after /sethome in a thread it opens a new thread in that channel", async () => {
  const { fake, db, runner, deliver } = await setup();
  const { id } = await db.createSession({ source: "cli", title: "Storage design" });
  await db.appendTurn(id, [
    { role: "user", content: "Let us design the storage layer" },
    { role: "assistant", content: "Start with the contract." },
  ]);
  const refused = await requestHandoff(db, { sessionId: id, platform: "slack" }, { homeChannels: {}, timeoutMs: 60_000 }).catch(
    (e: unknown) => e as HandoffError,
  );
  expect(refused).toBeInstanceOf(HandoffError);
  expect((refused as HandoffError).reason).toBe("no_home_channel");

  const thread = slackTs();
  await deliver(slackEvent("event-message-thread", { ts: slackTs(), thread_ts: thread, text: `<@${BOT}> /sethome` }));
  const notice = await fake.waitFor(() => fake.sentTo(CHANNEL, thread)[0], "the /sethome notice");
  expect(notice.text).toContain("This chat is now the slack home channel");

  const pending = requestHandoff(db, { sessionId: id, platform: "slack" }, { homeChannels: {}, timeoutMs: 20_000, pollMs: 20 });
  let settled = false;
  void pending.finally(() => (settled = true)).catch(() => {});
  await waitFor(
    async () => {
      await runner.processHandoffs({});
      return settled;
    },
    { what: "the handoff request to settle", intervalMs: 20 },
  );
  const outcome = await pending;
  const root = fake.sentTo(CHANNEL, null).find((m) => m.text === "🧵 Storage design")!;
  expect(outcome).toMatchObject({
    status: "completed",
    platform: "slack",
    chatId: CHANNEL,
    threadId: root.ts,
    sessionKey: `agent:main:slack:channel:${CHANNEL}:${root.ts}`,
  });
  const summary = await fake.waitFor(() => fake.sentTo(CHANNEL, root.ts)[0], "the summary in the new thread");
  expect(summary.text).toContain("You said:");
});
