/**
 * The Signal adapter in-process: the real adapter (HTTP and `ws`) against the local fake
 * signal-cli REST API, a real SQLite store and the real GatewayRunner.
 */
import { expect, it } from "vitest";
import type { AnswerRules } from "../../../src/adapters/chat/index.js";
import { SignalAdapter, type SignalAdapterOptions } from "../../../src/adapters/signal/index.js";
import type { AgentTurnInput } from "../../../src/agents/index.js";
import {
  SIGNAL_IDS,
  signalFixture,
  signalMessage,
  startFakeSignalServer,
  type FakeSignalOptions,
  type FakeSignalServer,
} from "../../fakes/signal/fake-signal-server.js";
import { freePort, waitFor } from "../../serve/gateway-process.js";
import type { ReceiverHandlers } from "../../../src/gateway/index.js";
import { TEST_RULES, adapterHarness, lastUserText, recordingLogger, useCleanups } from "../adapter-harness.js";

const cleanups = useCleanups();

async function setup(
  options: {
    answer?: (input: AgentTurnInput) => string;
    rules?: Partial<AnswerRules>;
    fake?: FakeSignalOptions;
    adapter?: Partial<SignalAdapterOptions>;
    fakeLater?: boolean;
  } = {},
) {
  const port = options.fake?.port ?? (await freePort());
  const fake: FakeSignalServer | null = options.fakeLater ? null : await startFakeSignalServer({ ...options.fake, port });
  if (fake !== null) cleanups.push(() => fake.close());
  const h = await adapterHarness(cleanups, {
    name: "signal",
    answer: options.answer,
    create: ({ logger }) =>
      SignalAdapter.create({
        apiUrl: `http://127.0.0.1:${port}`,
        number: SIGNAL_IDS.bot,
        mode: options.fake?.mode === "normal" ? "polling" : "websocket",
        rules: { ...TEST_RULES, ...options.rules },
        logger,
        ...options.adapter,
      }),
  });
  return { ...h, fake, port };
}

async function running(options: Parameters<typeof setup>[0] = {}) {
  const s = await setup(options);
  await s.runner.start();
  cleanups.push(s.stop);
  if (s.fake !== null && s.fake.mode === "json-rpc") await s.fake.waitFor(() => s.fake!.connected, "the receive WebSocket");
  return { ...s, fake: s.fake! };
}

it("an unreachable REST API does not hold the start: connect returns after connectTimeoutMs, retries, and connects once the API answers", async () => {
  const s = await setup({ fakeLater: true, adapter: { connectTimeoutMs: 300 } });
  cleanups.push(s.stop);
  await s.runner.start();
  expect(s.adapter.connected).toBe(false);
  expect(s.logger.lines.some((l) => l.msg === "signal: the signal-cli REST API does not answer yet; still connecting in the background")).toBe(true);
  expect(s.logger.lines.some((l) => l.msg.startsWith("signal: cannot reach the signal-cli REST API (GET /v1/about); trying again in 1 s"))).toBe(true);
  const fake = await startFakeSignalServer({ port: s.port });
  cleanups.push(() => fake.close());
  await waitFor(() => s.logger.lines.find((l) => l.msg === `signal adapter connected as ${SIGNAL_IDS.bot} (websocket)`), {
    what: "the late connection",
    timeoutMs: 15_000,
  });
  expect(s.adapter.connected).toBe(true);
  fake.push(signalMessage("receive-dm", { timestamp: 1767230000000, message: "late hello" }));
  const reply = await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.alice)[0], "the reply");
  expect(reply.message).toBe("You said: late hello");
});

it("a number the REST API does not know stops the start, saying how to register or link it", async () => {
  const s = await setup({ fake: { number: "+4915199999999" } });
  cleanups.push(async () => {
    await s.runner.stop();
    await s.db.close();
  });
  await expect(s.runner.start()).rejects.toThrow(
    `signal: ${SIGNAL_IDS.bot} is not registered or linked in the signal-cli REST API at http://127.0.0.1:${s.port} (it has 1 other account(s)). Register it (POST /v1/register/<number>, then /verify) or link it to your phone (GET /v1/qrcodelink), or fix adapters.signal.number.`,
  );
});

it("Markdown replies go as styled text, notices as plain text; a group reply quotes its author; the group's name comes from the list when the envelope lacks it", async () => {
  const { fake, db } = await running({ answer: (input) => `**Hi** ${lastUserText(input)} (5 * 3)` });
  fake.push(signalMessage("receive-dm", { timestamp: 1767230100000, message: "hello" }));
  const reply = await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.alice)[0], "the reply");
  expect(reply).toMatchObject({ message: "**Hi** hello (5 \\* 3)", text_mode: "styled", quote_timestamp: 1767230100000, quote_author: SIGNAL_IDS.alice });
  fake.push(signalMessage("receive-dm", { timestamp: 1767230110000, message: "/new" }));
  const notice = await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.alice)[1], "the /new notice");
  expect(notice.text_mode).toBe("normal");
  expect(notice.message).toMatch(/^Started a new session \(\d{8}_\d{6}_[0-9a-f]{8}\)/u);
  const unnamed = signalMessage("receive-group-mention", {
    timestamp: 1767230120000,
    message: "\uFFFC hi all",
    sender: { number: SIGNAL_IDS.bob, uuid: SIGNAL_IDS.bobUuid, name: "Bob" },
    data: { groupInfo: { groupId: SIGNAL_IDS.groupInternalId, revision: 3, type: "DELIVER" } },
  });
  fake.push(unnamed);
  const inGroup = await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.group)[0], "the group reply");
  expect(inGroup).toMatchObject({ message: "**Hi** hi all (5 \\* 3)", quote_timestamp: 1767230120000, quote_author: SIGNAL_IDS.bob });
  expect(fake.callsOf("GET", /^\/v1\/groups\//u)).toHaveLength(1);
  // Bob's number and UUID are one person: the key names the canonical id, his number.
  const route = await db.getRoute(`agent:main:signal:group:${SIGNAL_IDS.group}:${SIGNAL_IDS.bob}`);
  expect(route?.origin).toMatchObject({ chatName: "Book club", chatIdAlt: SIGNAL_IDS.groupInternalId });
});

it("allowlists take a number or a UUID; sync messages, receipts, typing notices, reactions and the bot's own messages are not stored; a message handed out twice is one turn", async () => {
  const { fake, db, agent } = await running({ rules: { allowedUsers: [SIGNAL_IDS.aliceUuid] }, adapter: { readReceipts: false } });
  for (const fixture of ["receive-sync-sent", "receive-receipt", "receive-typing", "receive-reaction"]) fake.push(signalFixture(fixture));
  fake.push(signalMessage("receive-dm", { timestamp: 1767230200000, message: "from myself", sender: { number: SIGNAL_IDS.bot, uuid: SIGNAL_IDS.botUuid } }));
  fake.push(
    signalMessage("receive-dm", {
      timestamp: 1767230210000,
      message: "bob is not allowed",
      sender: { number: SIGNAL_IDS.bob, uuid: SIGNAL_IDS.bobUuid, name: "Bob" },
    }),
  );
  const once = signalMessage("receive-dm", { timestamp: 1767230220000, message: "alice is allowed" });
  fake.push(once);
  fake.push(once);
  await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.alice)[0], "the reply to alice");
  fake.push(signalMessage("receive-dm", { timestamp: 1767230230000, message: "and again" }));
  await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.alice)[1], "the second reply");
  expect(fake.sent.map((m) => [m.recipients[0], m.message])).toEqual([
    [SIGNAL_IDS.alice, "You said: alice is allowed"],
    [SIGNAL_IDS.alice, "You said: and again"],
  ]);
  expect(agent.inputs).toHaveLength(2);
  expect(fake.receipts).toEqual([]);
  expect((await db.listRoutes()).items.map((r) => r.key)).toEqual([`agent:main:signal:dm:${SIGNAL_IDS.alice}`]);
  expect(await db.searchMessages("myself")).toHaveLength(0);
  expect(await db.searchMessages("bob")).toHaveLength(0);
  expect((await db.searchMessages("alice")).map((h) => h.role).sort()).toEqual(["assistant", "user"]);
});

it("a send refused for Signal's rate limit says what to do, is counted, and the typing indicator is hidden", async () => {
  const { fake, logger, failures } = await running();
  fake.failNext("POST", /^\/v2\/send$/u, { status: 429, body: signalFixture("error-429-rate-limit") });
  fake.push(signalMessage("receive-dm", { timestamp: 1767230300000, message: "one" }));
  await waitFor(() => failures.length === 1 || null, { what: "the first failure" });
  const failed = logger.lines.filter((l) => l.msg === "sending to the platform failed").map((l) => (l.obj["err"] as Error).message);
  expect(failed[0]).toContain("answered 429 to POST /v2/send: Failed to send message due to rate limiting");
  expect(failed[0]).toContain("Signal rate-limited the bot's account: solve the challenge through POST /v1/accounts/{number}/rate-limit-challenge");
  expect(failures).toEqual(["signal/reply"]);
  // The typing indicator is hidden even though the reply failed.
  expect(fake.typing.at(-1)).toEqual({ on: false, recipient: SIGNAL_IDS.alice });
});

it("polling: a message the poll under way brings in while the gateway drains is answered with the refusal (Signal will not hand it out again)", async () => {
  const { fake, runner, agent } = await running({ fake: { mode: "normal" }, adapter: { pollTimeoutSeconds: 2 } });
  await waitFor(() => fake.pendingPolls > 0 || null, { what: "a poll under way" });
  const drained = runner.drain(5_000);
  fake.push(signalMessage("receive-dm", { timestamp: 1767230400000, message: "just as it stops" }));
  await drained;
  await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.alice)[0], "the refusal");
  expect(fake.sentTo(SIGNAL_IDS.alice)[0]).toMatchObject({ message: "The gateway is shutting down; send the message again in a moment.", text_mode: "normal" });
  expect(agent.inputs).toHaveLength(0);
  expect(fake.waiting).toBe(0);
});

it("a receive WebSocket that goes quiet (no ping, no message) is replaced", async () => {
  const { fake, logger } = await running({ adapter: { idleTimeoutMs: 400 } });
  await fake.waitFor(() => fake.connections >= 2 || null, "a second connection");
  expect(logger.lines.some((l) => l.msg.startsWith("signal: receive WebSocket connection lost (no ping or message for 0.4 s)"))).toBe(true);
  await waitFor(() => logger.lines.find((l) => l.msg === "signal: receive WebSocket reconnected"), { what: "the reconnect" });
  fake.push(signalMessage("receive-dm", { timestamp: 1767230500000, message: "still there?" }));
  await fake.waitFor(() => fake.sentTo(SIGNAL_IDS.alice)[0], "the reply");
});

it("a standby replica sends without receiving; under a receiver lease it receives only while it holds the lease, and again after a stop", async () => {
  const fake = await startFakeSignalServer();
  cleanups.push(() => fake.close());
  const adapter = await SignalAdapter.create({ apiUrl: fake.url, number: SIGNAL_IDS.bot, rules: TEST_RULES, logger: recordingLogger() });
  cleanups.push(() => adapter.disconnect());
  expect(adapter.exclusiveReceiver).toBe(true);
  const taken: string[] = [];
  let held: ReceiverHandlers | null = null;
  await adapter.connect(
    async (message) => {
      taken.push(message.text);
      return { status: "accepted", sessionKey: "k" };
    },
    {
      deliveryFailed: () => {},
      receiverLease: (name) => ({
        hold: (handlers) => {
          expect(name).toBe("signal");
          held = handlers;
          return () => handlers.stop();
        },
      }),
    },
  );
  const dm = { platform: "signal", chatType: "dm" as const, chatId: SIGNAL_IDS.alice };
  await adapter.send(dm, { text: "from the standby", kind: "notice", inReplyTo: [] });
  expect(fake.sentTo(SIGNAL_IDS.alice)).toHaveLength(1);
  expect(fake.connections).toBe(0);
  await held!.start();
  await fake.waitFor(() => fake.connected, "the receive WebSocket");
  fake.push(signalMessage("receive-dm", { timestamp: 1767230900000, message: "first" }));
  await fake.waitFor(() => taken[0], "the first message");
  // The lease is lost: the WebSocket closes, sending still works; taken again: it reconnects.
  await held!.stop();
  expect(fake.connected).toBe(false);
  await adapter.send(dm, { text: "while stopped", kind: "notice", inReplyTo: [] });
  await held!.start();
  await fake.waitFor(() => fake.connected, "the receive WebSocket again");
  fake.push(signalMessage("receive-dm", { timestamp: 1767230910000, message: "second" }));
  await fake.waitFor(() => taken[1], "the message after the restart");
  expect(taken).toEqual(["first", "second"]);
  expect(fake.sentTo(SIGNAL_IDS.alice)).toHaveLength(2);
  expect(fake.connections).toBe(2);
});
