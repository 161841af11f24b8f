/**
 * The one inbound flow of the chat adapters (src/adapters/chat/inbound-flow.ts) against a real
 * GatewayRunner on a real SQLite store: de-duplication before the rules, the rules, typing, and
 * the one outcome table (what the chat is told when the store fails or the gateway rejects),
 * and receiving at once or under a receiver lease, restartable.
 */
import { expect, it } from "vitest";
import { COULD_NOT_STORE, InboundFlow, type MappedInbound } from "../../../src/adapters/chat/index.js";
import { GatewayRunner, SessionQueue, SessionStore, type OutboundMessage, type ReceiverHandlers, type SessionSource } from "../../../src/gateway/index.js";
import { ReplyAgent, TEST_RULES, recordingLogger, tempDatabase, useCleanups } from "../adapter-harness.js";

const cleanups = useCleanups();

const DM: SessionSource = { platform: "demo", chatType: "dm", chatId: "42", userId: "42" };

function dm(id: string, text = "hello", userId = "42"): MappedInbound {
  return {
    candidate: { chatType: "dm", chatId: "42", userId, fromSelf: false, fromBot: false, mentionsBot: false, repliesToBot: false, inBotThread: false },
    inbound: { source: { ...DM, userId }, text, messageId: id },
    typingKey: "42",
  };
}

async function setup(options: { redelivers: boolean; start?: boolean; allowedUsers?: string[] }) {
  const db = await tempDatabase(cleanups, "flow");
  const logger = recordingLogger();
  const runner = new GatewayRunner({ store: new SessionStore({ db }), agentFactory: () => new ReplyAgent(() => "ok"), adapters: [], logger });
  if (options.start !== false) await runner.start();
  cleanups.push(async () => {
    await runner.stop();
    await db.close().catch(() => {});
  });
  const told: OutboundMessage[] = [];
  const typed: string[] = [];
  const flow = new InboundFlow({
    platform: "demo",
    redelivers: options.redelivers,
    rules: { ...TEST_RULES, allowedUsers: options.allowedUsers ?? [] },
    logger,
    send: async (_source, message) => void told.push(message),
    redact: (error) => (error instanceof Error ? error : new Error(String(error))),
    typing: { send: async (chat) => void typed.push(chat) },
  });
  flow.connect((message) => runner.handle(message));
  cleanups.push(() => flow.close());
  return { db, logger, runner, flow, told, typed };
}

it("a message is taken once: a repeat of its id is ignored before the rules; typing shows while the turn runs", async () => {
  const { flow, typed } = await setup({ redelivers: false });
  expect(await flow.take("m1", () => dm("m1"))).toBe("ignored");
  await flow.receive();
  expect(flow.receiving).toBe(true);
  expect(await flow.take("m1", () => dm("m1"))).toBe("taken");
  let mapped = 0;
  expect(
    await flow.take("m1", () => {
      mapped += 1;
      return dm("m1");
    }),
  ).toBe("ignored");
  expect(mapped).toBe(0);
  expect(typed).toEqual(["42"]);
});

it("the rules drop what is not for the bot (not stored); other ids of the sender count for the allowlist; moreFacts is asked when not addressed", async () => {
  const { flow, logger, db } = await setup({ redelivers: false, allowedUsers: ["+42"] });
  await flow.receive();
  expect(await flow.take("a", () => dm("a", "hi", "7"))).toBe("ignored");
  expect(logger.lines.some((l) => l.msg === "demo: message not answered" && l.obj["reason"] === "user-not-allowed")).toBe(true);
  expect(await flow.take("b", () => ({ ...dm("b"), otherUserIds: ["+42"] }))).toBe("taken");
  const group = dm("c", "in a group", "+42");
  group.candidate = { ...group.candidate, chatType: "group", chatId: "-1" };
  let asked = 0;
  group.moreFacts = async () => {
    asked += 1;
    return { ...group, candidate: { ...group.candidate, repliesToBot: true } };
  };
  group.inbound = { source: { platform: "demo", chatType: "group", chatId: "-1", userId: "+42" }, text: "in a group", messageId: "c" };
  expect(await flow.take("c", () => group)).toBe("taken");
  expect(asked).toBe(1);
  expect(await db.getRoute("agent:main:demo:dm:7")).toBeNull();
  expect(await db.getRoute("agent:main:demo:dm:42")).not.toBeNull();
});

it("the gateway cannot store: a redelivering platform is left to deliver again (the id forgotten); another is told COULD_NOT_STORE", async () => {
  const redelivering = await setup({ redelivers: true });
  await redelivering.flow.receive();
  await redelivering.db.close();
  expect(await redelivering.flow.take("x", () => dm("x"))).toBe("redeliver");
  expect(redelivering.told).toEqual([]);
  expect(redelivering.logger.lines.some((l) => l.level === "error" && l.msg.startsWith("demo: the gateway could not take a message"))).toBe(true);
  // The id was forgotten: the redelivery is handed over again.
  expect(await redelivering.flow.take("x", () => dm("x"))).toBe("redeliver");

  const telling = await setup({ redelivers: false });
  await telling.flow.receive();
  await telling.db.close();
  expect(await telling.flow.take("y", () => dm("y"))).toBe("taken");
  expect(telling.told).toEqual([{ text: COULD_NOT_STORE, kind: "error", inReplyTo: ["y"] }]);
  expect(telling.typed).toEqual(["42"]);
  expect(telling.flow.typing?.active).toEqual([]);
});

it("a rejected message: the chat is told the reason in reply; while a redelivering platform stops receiving it is left to come again", async () => {
  const { flow, told, logger } = await setup({ redelivers: false, start: false });
  await flow.receive();
  expect(await flow.take("r", () => dm("r"))).toBe("taken");
  expect(told).toHaveLength(1);
  expect(told[0]).toMatchObject({ kind: "notice", inReplyTo: ["r"] });
  expect(told[0]!.text).toContain("shutting down");
  expect(logger.lines.some((l) => l.level === "warn" && l.msg === "demo: message refused by the gateway")).toBe(true);

  const redelivering = await setup({ redelivers: true, start: false });
  let stop: Promise<void> | null = null;
  await redelivering.flow.receive();
  const mapped = dm("s");
  mapped.inbound = async () => {
    // Receiving stops while the message is on its way to the (stopping) gateway.
    stop = redelivering.flow.stopReceiving();
    return { source: DM, text: "hello", messageId: "s" };
  };
  expect(await redelivering.flow.take("s", () => mapped)).toBe("redeliver");
  await stop;
  expect(redelivering.told).toEqual([]);
});

it("a message refused because the session's queue is full: the chat hears the reason once (the gateway leaves it to the adapter)", async () => {
  const db = await tempDatabase(cleanups, "flow-full");
  const told: OutboundMessage[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const turnStarted = new Promise<void>((resolve) => (started = resolve));
  const agent = {
    name: "held",
    async runTurn() {
      started();
      await held;
      return { messages: [{ role: "assistant" as const, content: "ok" }] };
    },
  };
  // The platform's adapter as the runner sees it: what it is asked to send lands where the flow's sends land.
  const adapter = {
    platform: "demo",
    connect: async () => {},
    disconnect: async () => {},
    send: async (_source: SessionSource, message: OutboundMessage) => {
      told.push(message);
      return {};
    },
  };
  const runner = new GatewayRunner({
    store: new SessionStore({ db }),
    queue: new SessionQueue(db, { maxDepth: 1 }),
    agentFactory: () => agent,
    adapters: [adapter],
  });
  await runner.start();
  cleanups.push(async () => {
    release();
    await runner.stop();
    await db.close().catch(() => {});
  });
  const flow = new InboundFlow({
    platform: "demo",
    redelivers: false,
    rules: TEST_RULES,
    send: async (_source, message) => void told.push(message),
    redact: (e) => (e instanceof Error ? e : new Error(String(e))),
  });
  flow.connect((message) => runner.handle(message));
  cleanups.push(() => flow.close());
  await flow.receive();
  expect(await flow.take("q1", () => dm("q1", "first"))).toBe("taken");
  await turnStarted;
  expect(await flow.take("q2", () => dm("q2", "second"))).toBe("taken");
  expect(await flow.take("q3", () => dm("q3", "third"))).toBe("taken");
  const refusals = told.filter((m) => m.inReplyTo.includes("q3"));
  expect(refusals).toHaveLength(1);
  expect(refusals[0]!.text).toContain("the limit is 1");
  release();
});

it("receiving: at once without a lease (start awaited, stop on stopReceiving, start again after); under a lease when the runner gives one", async () => {
  const { flow } = await setup({ redelivers: false });
  const calls: string[] = [];
  const handlers: ReceiverHandlers = { start: async () => void calls.push("start"), stop: async () => void calls.push("stop") };
  await flow.receive(handlers);
  await flow.stopReceiving();
  expect(flow.receiving).toBe(false);
  await flow.receive(handlers);
  await flow.close();
  expect(calls).toEqual(["start", "stop", "start", "stop"]);

  // A lease that grants at once, and records what the flow asks of it.
  const leaseCalls: string[] = [];
  const leased = await setup({ redelivers: false });
  leased.flow.connect((message) => leased.runner.handle(message), {
    deliveryFailed: () => {},
    receiverLease: (name) => ({
      hold: (held) => {
        leaseCalls.push(`hold ${name}`);
        void held.start();
        return async () => {
          leaseCalls.push("release");
          await held.stop();
        };
      },
    }),
  });
  const failing: ReceiverHandlers = { start: async () => void calls.push("leased start"), stop: async () => void calls.push("leased stop") };
  await leased.flow.receive(failing);
  await leased.flow.stopReceiving();
  await leased.flow.receive(failing);
  await leased.flow.stopReceiving();
  expect(leaseCalls).toEqual(["hold demo", "release", "hold demo", "release"]);
  expect(calls.slice(4)).toEqual(["leased start", "leased stop", "leased start", "leased stop"]);
});

it("a start that fails without a lease fails receive, and receive may be tried again", async () => {
  const { flow } = await setup({ redelivers: false });
  let fail = true;
  const handlers: ReceiverHandlers = {
    start: async () => {
      if (fail) throw new Error("refused");
    },
    stop: async () => {},
  };
  await expect(flow.receive(handlers)).rejects.toThrow("refused");
  expect(flow.receiving).toBe(false);
  fail = false;
  await flow.receive(handlers);
  expect(flow.receiving).toBe(true);
});
