/**
 * The Discord adapter in-process: the REAL discord.js (REST through `apiUrl`, the gateway
 * from GET /gateway/bot or `gatewayUrl`) against the local fake Discord, a real SQLite
 * store and the real GatewayRunner.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import type { AnswerRules } from "../../../src/adapters/chat/index.js";
import { DiscordAdapter } from "../../../src/adapters/discord/index.js";
import type { AgentTurnInput } from "../../../src/agents/index.js";
import { DISCORD_IDS, discordFixture, discordMessage, startFakeDiscordServer, type FakeDiscordOptions } from "../../fakes/discord/fake-discord-server.js";
import { freePort } from "../../serve/gateway-process.js";
import type { ReceiverHandlers } from "../../../src/gateway/index.js";
import { TEST_RULES, adapterHarness, lastUserText, recordingLogger, useCleanups } from "../adapter-harness.js";
import { pngImage } from "../media-bytes.js";

const cleanups = useCleanups();

async function setup(
  options: {
    answer?: (input: AgentTurnInput) => string;
    rules?: Partial<AnswerRules>;
    fake?: FakeDiscordOptions;
    gatewayUrl?: (fakeGateway: string) => string;
  } = {},
) {
  const fake = await startFakeDiscordServer(options.fake);
  cleanups.push(() => fake.close());
  const h = await adapterHarness(cleanups, {
    name: "discord",
    answer: options.answer,
    create: ({ logger }) =>
      DiscordAdapter.create({
        token: fake.token,
        apiUrl: fake.url,
        cdnUrl: fake.cdnUrl,
        gatewayUrl: options.gatewayUrl?.(fake.gatewayUrl) ?? null,
        rules: { ...TEST_RULES, ...options.rules },
        logger,
      }),
  });
  await h.runner.start();
  cleanups.push(h.stop);
  return { ...h, fake };
}

it("connects over JSON without compression: IDENTIFY with the four intents, READY, the identity logged; the token never shown", async () => {
  const { fake, adapter, logger } = await setup({ fake: { heartbeatIntervalMs: 300 } });
  expect(adapter.username).toBe("@threadline_test");
  expect(adapter.messageContentIntent).toBe(true);
  const query = fake.connectionQueries[0]!;
  expect(Object.fromEntries(query)).toEqual({ v: "10", encoding: "json" });
  const identify = fake.gatewayOps.find((o) => o.op === 2)!.d as { intents: number; token: string };
  // Guilds (1), GuildMessages (1 << 9), DirectMessages (1 << 12), MessageContent (1 << 15).
  expect(identify.intents).toBe(1 | (1 << 9) | (1 << 12) | (1 << 15));
  await fake.waitFor(() => fake.gatewayOps.some((o) => o.op === 1), "a heartbeat");
  expect(logger.lines.some((l) => l.msg === "discord adapter connected as @threadline_test (gateway)")).toBe(true);
  expect(logger.text()).not.toContain(fake.token);
});

it("a DM is answered as a reply with mentions disabled, typing shown first; the session key is the DM channel", async () => {
  const { fake, db } = await setup({ answer: (input) => `**Hi** ${lastUserText(input)} @everyone` });
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000101", content: "hello there" }));
  const reply = await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm)[0], "the reply");
  expect(reply.content).toBe("**Hi** hello there @everyone");
  expect(reply.reply_to).toBe("1500000000000000101");
  expect(reply.allowed_mentions).toEqual({ parse: [], replied_user: true });
  const typingAt = fake.calls.findIndex((c) => c.path === `/channels/${DISCORD_IDS.dm}/typing`);
  const sendAt = fake.calls.findIndex((c) => c.method === "POST" && c.path === `/channels/${DISCORD_IDS.dm}/messages`);
  expect(typingAt).toBeGreaterThanOrEqual(0);
  expect(typingAt).toBeLessThan(sendAt);
  const route = await db.getRoute(`agent:main:discord:dm:${DISCORD_IDS.dm}`);
  expect(route).not.toBeNull();
  const [stored] = await db.getMessages(route!.sessionId, { lastMessages: 10 });
  expect(stored).toMatchObject({ role: "user", platformMessageId: "1500000000000000101" });
});

it("guild channels: unaddressed messages, other bots and the bot's own messages are ignored and not stored; mentions and replies to the bot are answered", async () => {
  const { fake, db, agent } = await setup();
  fake.pushMessage(discordMessage("message-guild", { id: "1500000000000000201" }));
  fake.pushMessage(discordMessage("message-from-bot", { id: "1500000000000000202" }));
  fake.pushMessage(discordMessage("message-guild-mention", { id: "1500000000000000203", content: `<@${DISCORD_IDS.bot}> what is up?` }));
  const reply = await fake.waitFor(() => fake.sentTo(DISCORD_IDS.general)[0], "the reply to the mention");
  expect(reply.content).toBe("You said: what is up?");
  expect(reply.reply_to).toBe("1500000000000000203");
  // A reply to the bot's message needs no mention.
  fake.pushMessage(
    discordMessage("message-guild", {
      id: "1500000000000000204",
      content: "and then?",
      type: 19,
      message_reference: { message_id: reply.id, channel_id: DISCORD_IDS.general, guild_id: DISCORD_IDS.guild },
      referenced_message: {
        id: reply.id,
        channel_id: DISCORD_IDS.general,
        author: discordFixture("user-me"),
        content: reply.content,
        timestamp: new Date().toISOString(),
        type: 0,
        mentions: [],
        attachments: [],
        embeds: [],
      },
    }),
  );
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.general).length === 2, "the reply to the reply");
  expect(agent.inputs.map(lastUserText)).toEqual(["what is up?", "and then?"]);
  const keys = (await db.listRoutes()).items.map((r) => r.key);
  expect(keys).toEqual([`agent:main:discord:group:${DISCORD_IDS.general}:${DISCORD_IDS.alice}`]);
  expect(await db.searchMessages("humans")).toHaveLength(0);
  expect(await db.searchMessages("beep")).toHaveLength(0);
});

it("threads: one shared session keyed by parent and thread; guild id, topic and names carried; attachments are stored with the message", async () => {
  const { fake, db, agent } = await setup();
  fake.pushMessage(discordMessage("message-thread", { id: "1500000000000000301", content: `<@${DISCORD_IDS.bot}> from alice` }));
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.thread)[0], "the first thread reply");
  // The bot is in the thread now: no mention needed, and another user shares the session.
  fake.pushMessage(
    discordMessage("message-thread", {
      id: "1500000000000000302",
      content: "from dan",
      mentions: [],
      author: { id: DISCORD_IDS.dan, username: "dan", global_name: "Dan" },
    }),
  );
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.thread)[1], "the second thread reply");
  const second = agent.inputs[1]!;
  expect(second.messages.filter((m) => m.role !== "system").map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  const keys = (await db.listRoutes()).items.map((r) => r.key);
  expect(keys).toEqual([`agent:main:discord:thread:${DISCORD_IDS.general}:${DISCORD_IDS.thread}`]);
  const route = await db.getRoute(keys[0]!);
  expect(route!.origin).toMatchObject({
    platform: "discord",
    chatType: "thread",
    chatId: DISCORD_IDS.general,
    threadId: DISCORD_IDS.thread,
    scopeId: DISCORD_IDS.guild,
    chatTopic: "Where we talk to the bot",
    chatName: "general",
  });

  const png = pngImage(16, 16, 9);
  const pdf = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n", "latin1");
  const attachments = [
    fake.addAttachment(png, { filename: "cat.png", contentType: "image/png" }),
    fake.addAttachment(pdf, { filename: "notes.pdf", contentType: "application/pdf" }),
  ];
  fake.pushMessage(discordMessage("message-attachment", { id: "1500000000000000303", attachments }));
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm)[0], "the reply to the attachments");
  expect(lastUserText(agent.inputs.at(-1)!)).toContain("what is in this picture?");
  const dm = await db.getRoute(`agent:main:discord:dm:${DISCORD_IDS.dm}`);
  const stored = (await db.getMessages(dm!.sessionId)).find((m) => m.role === "user")!;
  const parts = (stored.content as Array<{ type: string; attachment?: { sha256: string; kind: string; fileName?: string | null } }>).filter(
    (p) => p.type === "attachment",
  );
  expect(parts.map((p) => [p.attachment!.kind, p.attachment!.fileName, p.attachment!.sha256])).toEqual([
    ["image", "cat.png", createHash("sha256").update(png).digest("hex")],
    ["file", "notes.pdf", createHash("sha256").update(pdf).digest("hex")],
  ]);
});

it("allowlists: a user or channel not listed is neither answered nor stored", async () => {
  const { fake, db } = await setup({ rules: { allowedUsers: [DISCORD_IDS.dan] } });
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000401", content: "let me in" }));
  fake.pushMessage(
    discordMessage("message-guild-mention", {
      id: "1500000000000000402",
      content: `<@${DISCORD_IDS.bot}> dan asks`,
      author: { id: DISCORD_IDS.dan, username: "dan", global_name: "Dan" },
    }),
  );
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.general)[0], "the reply to dan");
  expect(fake.sentTo(DISCORD_IDS.dm)).toEqual([]);
  expect(await db.searchMessages("let me in")).toHaveLength(0);
});

it("a 6,000-character reply arrives as ordered chunks within 2,000 without breaking the code block; a 429 is waited out and retried", async () => {
  const code = Array.from({ length: 80 }, (_, i) => `console.log(${i});`).join("\n");
  const long = `${"Intro words here. ".repeat(100)}\n\n\`\`\`js\n${code}\n\`\`\`\n\n${"Closing words. ".repeat(200)}`;
  expect(long.length).toBeGreaterThan(5000);
  const { fake } = await setup({ answer: () => long });
  fake.failNext("POST", /^\/channels\/\d+\/messages$/u, {
    status: 429,
    body: discordFixture("error-429"),
    headers: { "retry-after": "0.3", "x-ratelimit-scope": "user" },
  });
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000501", content: "write a lot" }));
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm).length >= 4, "the chunks");
  const chunks = fake.sentTo(DISCORD_IDS.dm);
  for (const chunk of chunks) expect(chunk.content.length).toBeLessThanOrEqual(2000);
  for (const chunk of chunks) expect((chunk.content.match(/```/gu) ?? []).length % 2).toBe(0);
  expect(chunks.map((c) => c.reply_to)).toEqual(["1500000000000000501", ...chunks.slice(1).map(() => null)]);
  expect(
    chunks
      .map((c) => c.content)
      .join("\n")
      .replace(/\n```\n```js\n/gu, "\n"),
  ).toContain(code);
  expect(fake.callsOf("POST", /^\/channels\/\d+\/messages$/u)[0]!.status).toBe(429);
});

it("a dropped gateway connection is RESUMEd: missed messages are replayed once, none lost, none duplicated", async () => {
  const { fake, agent, logger } = await setup();
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000601", content: "before the drop" }));
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm)[0], "the first reply");
  fake.dropConnection();
  // Sent while the bot is disconnected: replayed by the RESUME.
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000602", content: "while dropped" }));
  await fake.waitFor(() => fake.gatewayOps.find((o) => o.op === 6), "the RESUME");
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm)[1], "the reply to the replayed message");
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000603", content: "after the resume" }));
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm)[2], "the reply after the resume");
  const resume = fake.gatewayOps.find((o) => o.op === 6)!;
  expect(resume.connection).toBe(2);
  expect(resume.d).toMatchObject({ session_id: "fake-session-1" });
  expect(fake.gatewayOps.filter((o) => o.op === 2)).toHaveLength(1);
  // "after the resume" came after the replay, in the same DM: a second turn of a replayed
  // message would have run (and been answered) before it.
  expect(agent.inputs.map(lastUserText)).toEqual(["before the drop", "while dropped", "after the resume"]);
  expect(fake.sentTo(DISCORD_IDS.dm).map((m) => m.reply_to)).toEqual(["1500000000000000601", "1500000000000000602", "1500000000000000603"]);
  expect(logger.lines.some((l) => l.msg.startsWith("discord: gateway connection resumed"))).toBe(true);
});

it("a redelivered message id (a replay) is no second turn", async () => {
  const { fake, agent } = await setup();
  const message = discordMessage("message-dm", { id: "1500000000000000701", content: "only once" });
  fake.pushMessage(message);
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm)[0], "the reply");
  fake.pushMessage(message);
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000702", content: "next" }));
  await fake.waitFor(() => fake.sentTo(DISCORD_IDS.dm)[1], "the second reply");
  // "next" is admitted after the redelivery (one chat's messages are admitted in arrival
  // order): a turn of the redelivery would have run, and been answered, before it.
  expect(agent.inputs.map(lastUserText)).toEqual(["only once", "next"]);
  expect(fake.sentTo(DISCORD_IDS.dm)).toHaveLength(2);
});

it("createThread opens a public thread in the channel; messages there are answered without a mention", async () => {
  const { fake, adapter, agent } = await setup();
  const source = await adapter.createThread(
    { platform: "discord", chatType: "channel", chatId: DISCORD_IDS.general, chatName: "general" },
    "Handoff: my session",
  );
  expect(fake.threads).toHaveLength(1);
  const thread = fake.threads[0]!;
  expect(thread).toMatchObject({ parent_id: DISCORD_IDS.general, name: "Handoff: my session", type: 11 });
  expect(source).toEqual({
    platform: "discord",
    chatType: "thread",
    chatId: DISCORD_IDS.general,
    chatName: "general",
    threadId: thread["id"],
    parentChatId: DISCORD_IDS.general,
  });
  await adapter.send(source, { text: "Continuing here.", kind: "reply", inReplyTo: [] });
  expect(fake.sentTo(String(thread["id"]))[0]!.content).toBe("Continuing here.");
  fake.pushMessage(discordMessage("message-thread", { id: "1500000000000000801", channel_id: thread["id"], content: "no mention needed", mentions: [] }));
  await fake.waitFor(() => fake.sentTo(String(thread["id"]))[1], "the reply in the new thread");
  // A thread is shared: the agent is given the message with its sender (issue 26, point 5).
  expect(agent.inputs.map(lastUserText)).toEqual(["[Alice Doe] no mention needed"]);
});

it("a send that fails for good is logged with the session key and counted; the token never appears", async () => {
  const { fake, failures, logger } = await setup();
  fake.failNext("POST", /^\/channels\/\d+\/messages$/u, { status: 403, body: { message: "Missing Permissions", code: 50013 } });
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000901", content: "answer me" }));
  await fake.waitFor(() => failures.length > 0 || null, "the counted failure");
  expect(failures).toEqual(["discord/reply"]);
  const line = logger.lines.find((l) => l.msg === "sending to the platform failed")!;
  expect(line.obj["key"]).toBe(`agent:main:discord:dm:${DISCORD_IDS.dm}`);
  expect(logger.text()).not.toContain(fake.token);
});

it("without the Message Content intent: a warning at startup, the intent not requested, mentions still answered", async () => {
  const { fake, adapter, logger } = await setup({ fake: { messageContent: false } });
  expect(adapter.messageContentIntent).toBe(false);
  const identify = fake.gatewayOps.find((o) => o.op === 2)!.d as { intents: number };
  expect(identify.intents & (1 << 15)).toBe(0);
  expect(logger.lines.find((l) => l.level === "warn" && l.msg.includes("Message Content intent is not enabled"))).toBeDefined();
  fake.pushMessage(discordMessage("message-guild-mention", { id: "1500000000000001001", content: `<@${DISCORD_IDS.bot}> still works` }));
  const reply = await fake.waitFor(() => fake.sentTo(DISCORD_IDS.general)[0], "the reply to the mention");
  expect(reply.content).toBe("You said: still works");
});

it("gatewayUrl replaces the URL GET /gateway/bot names", async () => {
  const nowhere = `ws://127.0.0.1:${await freePort()}/gateway`;
  const { fake, adapter } = await setup({ fake: { advertisedGatewayUrl: nowhere }, gatewayUrl: (real) => real });
  expect(adapter.username).toBe("@threadline_test");
  expect(fake.connectionQueries).toHaveLength(1);
});

it("a refused token fails the connect with a clear error that does not contain it", async () => {
  const fake = await startFakeDiscordServer();
  cleanups.push(() => fake.close());
  const wrong = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gwrong.not-the-right-token-value-000000";
  const adapter = await DiscordAdapter.create({ token: wrong, apiUrl: fake.url });
  const error = await adapter
    .connect(async () => ({ status: "accepted", sessionKey: "x" }))
    .then(
      () => null,
      (e: Error) => e,
    );
  expect(error?.message).toMatch(/^discord: Discord refused the bot token/u);
  expect(JSON.stringify({ message: error?.message, stack: error?.stack, cause: String(error?.cause) })).not.toContain(wrong);
  await adapter.disconnect();
});

it("a standby replica sends through REST without a gateway login; under a receiver lease it connects only while it holds the lease, and again after a stop", async () => {
  const fake = await startFakeDiscordServer();
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = await DiscordAdapter.create({ token: fake.token, apiUrl: fake.url, rules: TEST_RULES, logger });
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
          expect(name).toBe("discord");
          held = handlers;
          return () => handlers.stop();
        },
      }),
    },
  );
  const dm = { platform: "discord", chatType: "dm" as const, chatId: DISCORD_IDS.dm };
  await adapter.send(dm, { text: "from the standby", kind: "reply", inReplyTo: [] });
  expect(fake.sentTo(DISCORD_IDS.dm).map((m) => m.content)).toEqual(["from the standby"]);
  expect(fake.gatewayOps).toEqual([]);
  expect(fake.callsOf("GET", /^\/gateway\/bot$/u)).toEqual([]);
  const connections = (): number => logger.lines.filter((l) => l.msg === "discord adapter connected as @threadline_test (gateway)").length;
  await held!.start();
  expect(connections()).toBe(1);
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000901", content: "first" }));
  await fake.waitFor(() => taken[0], "the first message");
  // The lease is lost: the connection closes, sending still works; taken again: it connects again.
  await held!.stop();
  await fake.waitFor(() => !fake.connected || undefined, "the closed connection");
  await adapter.send(dm, { text: "while stopped", kind: "reply", inReplyTo: [] });
  await held!.start();
  expect(connections()).toBe(2);
  fake.pushMessage(discordMessage("message-dm", { id: "1500000000000000902", content: "second" }));
  await fake.waitFor(() => taken[1], "the message after the restart");
  expect(taken).toEqual(["first", "second"]);
  expect(fake.sentTo(DISCORD_IDS.dm).map((m) => m.content)).toEqual(["from the standby", "while stopped"]);
  expect(logger.text()).not.toContain(fake.token);
});
