/**
 * The Telegram adapter in-process: the REAL grammY (through `apiRoot`) against the local
 * fake Bot API, a real SQLite store and the real GatewayRunner.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import type { AnswerRules } from "../../../src/adapters/chat/index.js";
import { TelegramAdapter } from "../../../src/adapters/telegram/index.js";
import type { AgentTurnInput } from "../../../src/agents/index.js";
import { HandoffError, requestHandoff } from "../../../src/gateway/index.js";
import { startFakeTelegramServer, telegramFixture, telegramUpdate } from "../../fakes/telegram/fake-telegram-server.js";
import { TEST_RULES, adapterHarness, lastUserText, serveWebhooks, recordingLogger, useCleanups } from "../adapter-harness.js";
import { waitFor } from "../../support/wait-for.js";
import { oggOpusVoice, pngImage } from "../media-bytes.js";

const cleanups = useCleanups();

async function setup(options: { answer?: (input: AgentTurnInput) => string; mode?: "polling" | "webhook"; rules?: Partial<AnswerRules> } = {}) {
  const fake = await startFakeTelegramServer();
  cleanups.push(() => fake.close());
  const h = await adapterHarness(cleanups, {
    name: "telegram",
    answer: options.answer,
    create: ({ logger }) =>
      TelegramAdapter.create({
        token: fake.token,
        apiRoot: fake.url,
        mode: options.mode ?? "polling",
        ...(options.mode === "webhook" ? { webhookUrl: "https://bot.example.test/telegram/updates", secret: "s3cret-token_value" } : {}),
        rules: { ...TEST_RULES, ...options.rules },
        logger,
        pollingTimeoutSeconds: 5,
      }),
  });
  const { http, url } = await serveWebhooks(cleanups, h);
  return { ...h, fake, http, httpUrl: url };
}

it("connects: getMe, the slash commands registered, polling started, the identity logged", async () => {
  const { fake, adapter, logger } = await setup();
  expect(adapter.username).toBe("@threadline_test_bot");
  const commands = fake.callsOf("setMyCommands")[0]!.params["commands"] as Array<{ command: string }>;
  expect(commands.map((c) => c.command)).toEqual(expect.arrayContaining(["new", "reset", "status", "sethome", "help"]));
  await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, "a getUpdates call");
  expect(logger.lines.some((l) => l.msg.includes("telegram adapter connected as @threadline_test_bot (polling)"))).toBe(true);
  expect(logger.text()).not.toContain(fake.token);
});

it("a DM is answered in HTML as a reply to the message, with typing shown first", async () => {
  const { fake, db } = await setup({ answer: (input) => `**Hi** ${lastUserText(input)} <3` });
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 5, text: "hello there" }));
  const reply = await fake.waitFor(() => fake.sentTo(111111)[0], "the reply");
  expect(reply.text).toBe("<b>Hi</b> hello there &lt;3");
  expect(reply.parse_mode).toBe("HTML");
  expect(reply.reply_to).toBe(5);
  const actionAt = fake.calls.findIndex((c) => c.method === "sendChatAction");
  const sendAt = fake.calls.findIndex((c) => c.method === "sendMessage");
  expect(actionAt).toBeGreaterThanOrEqual(0);
  expect(actionAt).toBeLessThan(sendAt);
  expect(fake.callsOf("sendChatAction")[0]!.params).toMatchObject({ chat_id: "111111", action: "typing" });
  const route = await db.getRoute("agent:main:telegram:dm:111111");
  expect(route).not.toBeNull();
});

it("groups: unaddressed messages are neither answered nor stored; a mention or a reply to the bot is; other bots are ignored", async () => {
  const { fake, db } = await setup();
  fake.pushUpdate(telegramUpdate("update-group-text", { message_id: 10 }));
  fake.pushUpdate(telegramUpdate("update-from-bot", { message_id: 11 }));
  fake.pushUpdate(telegramUpdate("update-group-mention", { message_id: 12 }));
  const reply = await fake.waitFor(() => fake.sentTo(-1001234567890)[0], "the reply to the mention");
  expect(reply.plain).toBe("You said: what is up?");
  expect(reply.reply_to).toBe(12);
  // A reply to one of the bot's messages needs no mention.
  fake.pushUpdate(
    telegramUpdate("update-group-text", {
      message_id: 13,
      text: "and then?",
      reply_to_message: {
        message_id: reply.message_id,
        from: { id: fake.me.id, is_bot: true, first_name: "Threadline Test" },
        chat: { id: -1001234567890, type: "supergroup", title: "Dev Chat" },
        date: 1,
        text: "x",
      },
    }),
  );
  await fake.waitFor(() => fake.sentTo(-1001234567890).length === 2, "the reply to the reply");
  expect(fake.sentTo(-1001234567890).map((m) => m.reply_to)).toEqual([12, 13]);
  const messages = await db.getMessages((await db.getRoute("agent:main:telegram:group:-1001234567890:222222"))!.sessionId);
  expect(messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["what is up?", "and then?"]);
  expect(await db.getRoute("agent:main:telegram:group:-1001234567890:444444")).toBeNull();
});

it("allowlists: a user not listed gets no reply and nothing is stored", async () => {
  const { fake, db } = await setup({ rules: { allowedUsers: ["999"] } });
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 1 }));
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 2, from: { id: 999 }, chat: { id: 999 } }));
  await fake.waitFor(() => fake.sentTo(999)[0], "the reply to the allowed user");
  expect(fake.sentTo(111111)).toEqual([]);
  expect(await db.getRoute("agent:main:telegram:dm:111111")).toBeNull();
});

it("a forum topic is one session for everyone in it, and replies go to the topic", async () => {
  const { fake, db } = await setup();
  fake.pushUpdate(telegramUpdate("update-forum-topic", { message_id: 20 }));
  fake.pushUpdate(telegramUpdate("update-forum-topic", { message_id: 21, from: { id: 555555, first_name: "Dan" }, text: "@threadline_test_bot me too" }));
  await fake.waitFor(() => fake.sentTo(-1009876543210).length === 2, "two replies in the topic");
  expect(fake.sentTo(-1009876543210).map((m) => m.message_thread_id)).toEqual([77, 77]);
  const route = await db.getRoute("agent:main:telegram:group:-1009876543210:77");
  expect(route).not.toBeNull();
  expect((await db.getMessages(route!.sessionId)).filter((m) => m.role === "user")).toHaveLength(2);
});

it("media are downloaded through getFile and stored with the message; a voice note without transcription gets the notice", async () => {
  const { fake, agent, db } = await setup();
  const photo = pngImage(24, 16, 4);
  const pdf = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n", "latin1");
  fake.addFile(photo, { fileId: "AgACAgQAAxkBAAIBlarge", filePath: "photos/file_1.jpg", mimeType: "image/jpeg" });
  fake.addFile(oggOpusVoice(2), { fileId: "AwACAgQAAxkBAAIBvoice", filePath: "voice/file_2.oga", mimeType: "audio/ogg" });
  fake.addFile(pdf, { fileId: "BQACAgQAAxkBAAIBdoc", filePath: "documents/file_3.pdf", mimeType: "application/pdf" });
  fake.pushUpdate(telegramUpdate("update-photo-album", { message_id: 30 }));
  await fake.waitFor(() => fake.sentTo(111111).length === 1, "the photo reply");
  fake.pushUpdate(telegramUpdate("update-voice", { message_id: 31 }));
  await fake.waitFor(() => fake.sentTo(111111).length === 2, "the voice notice");
  expect(fake.sentTo(111111)[1]!.plain).toContain("Voice notes are not enabled here");
  fake.pushUpdate(telegramUpdate("update-document", { message_id: 32 }));
  await fake.waitFor(() => fake.sentTo(111111).length === 3, "the document reply");
  // The voice note alone made no model call.
  expect(agent.inputs.map(lastUserText)).toEqual([expect.stringContaining("our whiteboard"), expect.stringContaining("please summarise")]);
  const route = await db.getRoute("agent:main:telegram:dm:111111");
  const users = (await db.getMessages(route!.sessionId)).filter((m) => m.role === "user");
  const attached = users.map((m) =>
    (m.content as Array<{ type: string; attachment?: { sha256: string; kind: string; voice?: boolean } }>)
      .filter((p) => p.type === "attachment")
      .map((p) => p.attachment!),
  );
  expect(attached.map((list) => list.map((a) => a.kind))).toEqual([["image"], ["audio"], ["file"]]);
  expect(attached[0]![0]!.sha256).toBe(createHash("sha256").update(photo).digest("hex"));
  expect(attached[1]![0]!.voice).toBe(true);
  expect(attached[2]![0]!.sha256).toBe(createHash("sha256").update(pdf).digest("hex"));
});

it("a reply Telegram cannot parse is sent again as plain text", async () => {
  const { fake } = await setup({ answer: () => "**bold** reply" });
  fake.failNext("sendMessage", { status: 400, body: telegramFixture("error-400-parse-entities") });
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 40 }));
  const reply = await fake.waitFor(() => fake.sentTo(111111)[0], "the plain reply");
  expect(reply.parse_mode).toBeNull();
  expect(reply.text).toBe("**bold** reply");
  expect(fake.callsOf("sendMessage").map((c) => c.status)).toEqual([400, 200]);
});

it("a 429 with retry_after is waited out and the send retried", async () => {
  const { fake, failures } = await setup();
  fake.failNext("sendMessage", { status: 429, body: telegramFixture("error-429") });
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 50 }));
  await fake.waitFor(() => fake.sentTo(111111)[0], "the reply after the 429", 15_000);
  expect(fake.callsOf("sendMessage").map((c) => c.status)).toEqual([429, 200]);
  expect(failures).toEqual([]);
});

it("a send that fails for good is logged with the session key and counted; the reply stays stored; the token is never logged", async () => {
  const { fake, db, logger, failures } = await setup({ answer: () => "stored anyway" });
  fake.failNext("sendMessage", { status: 403, body: { ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" } });
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 60 }));
  await fake.waitFor(() => failures.length > 0, "the send failure");
  expect(failures).toEqual(["telegram/reply"]);
  const line = logger.lines.find((l) => l.msg === "sending to the platform failed")!;
  expect(line.obj["key"]).toBe("agent:main:telegram:dm:111111");
  const route = await db.getRoute("agent:main:telegram:dm:111111");
  expect((await db.getMessages(route!.sessionId)).map((m) => m.content)).toEqual(["hello", "stored anyway"]);
  expect(logger.text()).not.toContain(fake.token);
});

it("long replies arrive as ordered chunks within 4,096 characters, code blocks reopened", async () => {
  const code = `\`\`\`js\n${Array.from({ length: 150 }, (_, i) => `console.log(${i}); // ${"x".repeat(20)}`).join("\n")}\n\`\`\``;
  const long = `${"Intro paragraph. ".repeat(100)}\n\n${code}\n\n${"Closing words. ".repeat(100)}`;
  const { fake } = await setup({ answer: (input) => (lastUserText(input) === "and now briefly" ? "brief" : long) });
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 70 }));
  await fake.waitFor(() => fake.sentTo(111111).length >= 3, "the chunks");
  // The barrier: the next message of the chat is answered only after the long reply's turn
  // (every chunk of it) is done.
  fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 71, text: "and now briefly" }));
  await fake.waitFor(() => fake.sentTo(111111).find((m) => m.reply_to === 71), "the reply to the next message");
  expect(fake.sentTo(111111).at(-1)!.plain).toBe("brief");
  const chunks = fake.sentTo(111111).slice(0, -1);
  for (const chunk of chunks) expect(chunk.plain.length).toBeLessThanOrEqual(4096);
  expect(chunks.every((c) => c.parse_mode === "HTML")).toBe(true);
  expect(chunks[0]!.reply_to).toBe(70);
  expect(chunks.slice(1).every((c) => c.reply_to === null)).toBe(true);
  const joined = chunks.map((c) => c.plain).join("\n");
  expect(joined.indexOf("Intro paragraph.")).toBeLessThan(joined.indexOf("console.log(0)"));
  expect(joined.indexOf("console.log(149)")).toBeLessThan(joined.indexOf("Closing words."));
  const codeChunks = chunks.filter((c) => c.text.includes("console.log("));
  expect(codeChunks.length).toBeGreaterThan(1);
  for (const c of codeChunks) expect(c.text).toMatch(/<pre><code class="language-js">/u);
});

it("webhook mode: setWebhook with the secret; updates without the secret header get 401, with it they are answered", async () => {
  const { fake, httpUrl } = await setup({ mode: "webhook" });
  expect(fake.webhook).toEqual({ url: "https://bot.example.test/telegram/updates", secret: "s3cret-token_value" });
  const update = { ...telegramUpdate("update-private-text", { message_id: 80, text: "via webhook" }), update_id: 9001 };
  const post = (headers: Record<string, string>) =>
    fetch(`${httpUrl}/telegram/updates`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(update) });
  expect((await post({})).status).toBe(401);
  expect((await post({ "x-telegram-bot-api-secret-token": "wrong" })).status).toBe(401);
  expect(fake.sentTo(111111)).toEqual([]);
  expect((await post({ "x-telegram-bot-api-secret-token": "s3cret-token_value" })).status).toBe(200);
  const reply = await fake.waitFor(() => fake.sentTo(111111)[0], "the reply");
  expect(reply.plain).toBe("You said: via webhook");
  // A redelivery of the same update is not a second turn: the next update of the chat, admitted
  // after it, is the one answered next.
  expect((await post({ "x-telegram-bot-api-secret-token": "s3cret-token_value" })).status).toBe(200);
  const next = { ...telegramUpdate("update-private-text", { message_id: 81, text: "after the redelivery" }), update_id: 9002 };
  const postNext = await fetch(`${httpUrl}/telegram/updates`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret-token_value" },
    body: JSON.stringify(next),
  });
  expect(postNext.status).toBe(200);
  await fake.waitFor(() => fake.sentTo(111111)[1], "the reply to the next update");
  expect(fake.sentTo(111111).map((m) => m.plain)).toEqual(["You said: via webhook", "You said: after the redelivery"]);
});

it("createThread opens a forum topic and returns its source", async () => {
  const { fake, adapter } = await setup();
  const thread = await adapter.createThread(
    { platform: "telegram", chatType: "channel", chatId: "-1009876543210", chatName: "Forum" },
    "Continued from the terminal",
  );
  expect(thread).toMatchObject({ platform: "telegram", chatType: "group", chatId: "-1009876543210", threadId: "1001" });
  expect(fake.callsOf("createForumTopic")[0]!.params).toMatchObject({ chat_id: "-1009876543210", name: "Continued from the terminal" });
});

it("a refused token fails the start with a clear message; an unreachable Bot API does not hold the start; the token is never shown", async () => {
  const fake = await startFakeTelegramServer();
  cleanups.push(() => fake.close());
  const refused = await TelegramAdapter.create({ token: "123:wrong-token-value", apiRoot: fake.url });
  const error = await refused
    .connect(async () => ({ status: "command", sessionKey: "x" }))
    .then(
      () => null,
      (e: unknown) => e as Error,
    );
  expect(error?.message).toContain("Telegram refused the bot token");
  expect(`${error?.message} ${error?.stack} ${String(error?.cause)}`).not.toContain("wrong-token-value");
  await refused.disconnect();

  const closed = await startFakeTelegramServer();
  const root = closed.url;
  await closed.close();
  const logger = recordingLogger();
  const unreachable = await TelegramAdapter.create({ token: fake.token, apiRoot: root, logger, connectTimeoutMs: 300 });
  await unreachable.connect(async () => ({ status: "command", sessionKey: "x" }));
  expect(unreachable.username).toBeNull();
  expect(logger.lines.some((l) => l.msg.includes("still connecting in the background"))).toBe(true);
  await unreachable.disconnect();
  expect(logger.text()).not.toContain(fake.token);
});

it("handoff: refused at once with a /sethome hint while telegram has no home channel; after /sethome in a forum topic it opens a new topic there", async () => {
  const { fake, db, runner } = await setup();
  const { id } = await db.createSession({ source: "cli", title: "Storage design" });
  await db.appendTurn(id, [
    { role: "user", content: "Let us design the storage layer" },
    { role: "assistant", content: "Start with the contract." },
  ]);
  const refused = await requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels: {}, timeoutMs: 60_000 }).catch(
    (e: unknown) => e as HandoffError,
  );
  expect(refused).toBeInstanceOf(HandoffError);
  expect((refused as HandoffError).reason).toBe("no_home_channel");
  expect((refused as HandoffError).message).toContain("send /sethome in that telegram chat");

  fake.pushUpdate(telegramUpdate("update-forum-topic", { message_id: 90, text: "/sethome", entities: [{ offset: 0, length: 8, type: "bot_command" }] }));
  const notice = await fake.waitFor(() => fake.sentTo(-1009876543210)[0], "the /sethome notice");
  expect(notice.plain).toBe("This chat is now the telegram home channel: a /handoff from the terminal opens a new thread here.");
  expect(notice.message_thread_id).toBe(77);

  const pending = requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels: {}, timeoutMs: 20_000, pollMs: 20 });
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
  expect(outcome).toMatchObject({
    status: "completed",
    platform: "telegram",
    chatId: "-1009876543210",
    threadId: "1001",
    sessionKey: "agent:main:telegram:group:-1009876543210:1001",
  });
  expect(fake.callsOf("createForumTopic")[0]!.params).toMatchObject({ chat_id: "-1009876543210", name: "Storage design" });
  const summary = await fake.waitFor(() => fake.sentTo(-1009876543210, 1001)[0], "the summary in the new topic");
  expect(summary.plain).toContain("You said:");
});

it("polling survives the Bot API going away: it pauses with growing back-off and takes updates again when it is back", async () => {
  const { fake, logger } = await setup();
  await fake.waitFor(() => fake.callsOf("getUpdates").length > 0, "polling");
  const port = Number(new URL(fake.url).port);
  await fake.close();
  await fake.waitFor(() => logger.lines.filter((l) => l.msg.includes("cannot reach the Bot API")).length >= 2, "two failed polls", 15_000);
  const pauses = logger.lines.filter((l) => l.msg.includes("cannot reach the Bot API")).map((l) => l.obj["retryInSeconds"]);
  expect(pauses.slice(0, 2)).toEqual([1, 2]);
  const back = await startFakeTelegramServer({ port });
  cleanups.push(() => back.close());
  back.pushUpdate(telegramUpdate("update-private-text", { message_id: 100, text: "are you back?" }));
  const reply = await back.waitFor(() => back.sentTo(111111)[0], "the reply after the outage", 20_000);
  expect(reply.plain).toBe("You said: are you back?");
  expect(logger.text()).not.toContain(fake.token);
});
