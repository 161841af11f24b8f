/**
 * The WhatsApp adapter in-process: its webhook route on a real Fastify server receiving
 * signed POSTs, its Graph API calls going to the local fake (test/fakes/whatsapp), a real
 * SQLite store and the real GatewayRunner.
 */
import { hashIdentifier } from "../../../src/gateway/session-context.js";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import type { AnswerRules } from "../../../src/adapters/chat/index.js";
import { WhatsAppAdapter } from "../../../src/adapters/whatsapp/index.js";
import type { AgentTurnInput } from "../../../src/agents/index.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer } from "../../fakes/whatsapp/fake-whatsapp-server.js";
import { messageIdOf, postWhatsAppWebhook, whatsappWebhook } from "../../fakes/whatsapp/whatsapp-webhooks.js";
import { TEST_RULES, adapterHarness, lastUserText, serveWebhooks, useCleanups } from "../adapter-harness.js";

const APP_SECRET = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const VERIFY_TOKEN = "verify-me-please-0001";
const USER = "16505551234";
const GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD";

const cleanups = useCleanups();

async function setup(options: { answer?: (input: AgentTurnInput) => string; rules?: Partial<AnswerRules>; readReceipts?: boolean } = {}) {
  const fake = await startFakeWhatsAppServer();
  cleanups.push(() => fake.close());
  const h = await adapterHarness(cleanups, {
    name: "whatsapp",
    answer: options.answer,
    create: ({ logger }) =>
      new WhatsAppAdapter({
        accessToken: fake.accessToken,
        appSecret: APP_SECRET,
        verifyToken: VERIFY_TOKEN,
        phoneNumberId: FAKE_PHONE_NUMBER_ID,
        apiUrl: fake.url,
        rules: { ...TEST_RULES, ...options.rules },
        readReceipts: options.readReceipts ?? true,
        logger,
        maxRetries: 2,
        retryMinDelayMs: 20,
      }),
  });
  const url = `${(await serveWebhooks(cleanups, h)).url}/whatsapp/webhook`;
  const deliver = async (payload: Record<string, unknown>): Promise<void> => {
    const answer = await postWhatsAppWebhook(url, payload, { appSecret: APP_SECRET });
    expect(answer.status).toBe(200);
  };
  return { ...h, fake, sendFailures: h.failures, url, deliver };
}

function dm(body: string, edit: Record<string, unknown> = {}): Record<string, unknown> {
  return whatsappWebhook("webhook-text", { message: { text: { body }, ...edit } });
}

it("connects: the business number is looked up and logged; a DM is answered as a quoting reply after a read receipt with typing", async () => {
  const { fake, adapter, agent, logger, deliver } = await setup();
  expect(adapter.identity).toBe(`+1 555-078-3881 (${FAKE_PHONE_NUMBER_ID})`);
  expect(
    logger.lines.some(
      (l) =>
        l.msg === `whatsapp adapter connected as +1 555-078-3881 (${FAKE_PHONE_NUMBER_ID}) (webhook)` &&
        l.obj["mode"] === "webhook" &&
        l.obj["verifiedName"] === "Threadline Test",
    ),
  ).toBe(true);
  const payload = dm("hello there");
  await deliver(payload);
  const reply = await fake.waitFor(() => fake.sentTo(USER)[0], "the reply");
  expect(reply).toMatchObject({ body: "You said: hello there", recipientType: "individual", recipient: null, replyTo: messageIdOf(payload) });
  expect(fake.reads[0]).toEqual({ messageId: messageIdOf(payload), typing: true });
  expect(agent.inputs.map(lastUserText)).toEqual(["hello there"]);
  expect(logger.text()).not.toContain(fake.accessToken);
});

it("read receipts off: nothing is marked read", async () => {
  const { fake, deliver } = await setup({ readReceipts: false });
  await deliver(dm("quietly"));
  await fake.waitFor(() => fake.sentTo(USER)[0], "the reply");
  expect(fake.reads).toEqual([]);
});

it("replies are WhatsApp formatting, split at 4,096 characters with only the first chunk quoting; notices are plain", async () => {
  const long = Array.from({ length: 50 }, (_, i) => `**Part ${i}** ${"text ".repeat(30).trim()}`).join("\n\n");
  const { fake, deliver } = await setup({ answer: (input) => (lastUserText(input) === "long" ? long : "**bold** and [docs](https://x.dev)") });
  await deliver(dm("short"));
  expect((await fake.waitFor(() => fake.sentTo(USER)[0], "the formatted reply")).body).toBe("*bold* and docs (https://x.dev)");
  const payload = dm("long");
  await deliver(payload);
  await fake.waitFor(() => fake.sentTo(USER).length >= 3, "the chunks");
  // The barrier: the next message of the chat is answered only after the long reply's turn
  // (every chunk of it) is done.
  const after = dm("short again");
  await deliver(after);
  await fake.waitFor(() => fake.sentTo(USER).find((m) => m.replyTo === messageIdOf(after)), "the reply after the chunks");
  expect(fake.sentTo(USER).at(-1)!.body).toBe("*bold* and docs (https://x.dev)");
  const chunks = fake.sentTo(USER).slice(1, -1);
  expect(chunks.length).toBeGreaterThanOrEqual(2);
  for (const chunk of chunks) expect(chunk.body.length).toBeLessThanOrEqual(4096);
  expect(chunks.map((c) => c.replyTo)).toEqual([messageIdOf(payload), ...chunks.slice(1).map(() => null)]);
  expect(chunks[0]!.body.startsWith("*Part 0* text")).toBe(true);
  await deliver(dm("/status"));
  const status = await fake.waitFor(() => fake.sentTo(USER).find((m) => m.body.includes("Session")), "the /status notice");
  expect(status.body).not.toMatch(/^\*/u);
});

it("an image is fetched by its media id and kept with the message; reactions and status callbacks are no user messages; notifications for another number are ignored", async () => {
  const { fake, agent, db, deliver } = await setup();
  const jpeg = await readFile(new URL("../../media/fixtures/pixel.jpg", import.meta.url));
  fake.setMedia("1003383421387256", { bytes: jpeg, mimeType: "image/jpeg" });
  await deliver(whatsappWebhook("webhook-image"));
  await fake.waitFor(() => fake.sentTo(USER)[0], "the reply to the image");
  expect(fake.downloads).toEqual([{ mediaId: "1003383421387256", authorized: true, status: 200 }]);
  // The test agent takes no images: it reads the caption and the image's placeholder.
  expect(lastUserText(agent.inputs[0]!)).toContain("Is this the right one?");
  expect(lastUserText(agent.inputs[0]!)).toContain("[image: image/jpeg");
  const sha256 = createHash("sha256").update(jpeg).digest("hex");
  expect(Buffer.from((await db.readMedia(sha256))!).equals(jpeg)).toBe(true);
  await deliver(whatsappWebhook("webhook-reaction"));
  await deliver(whatsappWebhook("webhook-status-delivered"));
  await deliver(dm("an ordinary message"));
  await deliver(whatsappWebhook("webhook-text", { message: { text: { body: "not ours" } }, metadata: { phone_number_id: "999" } }));
  await deliver(dm("last one"));
  await fake.waitFor(() => fake.sentTo(USER)[2], "the reply to the last one");
  expect(agent.inputs.map(lastUserText).slice(1)).toEqual(["an ordinary message", "last one"]);
  expect(await db.searchMessages("ours")).toHaveLength(0);
});

it("a redelivered message (same wamid) gets no second turn", async () => {
  const { fake, agent, deliver } = await setup();
  const payload = dm("once please");
  await deliver(payload);
  await fake.waitFor(() => fake.sentTo(USER)[0], "the reply");
  await deliver(payload);
  await deliver(dm("next"));
  await fake.waitFor(() => fake.sentTo(USER)[1], "the next reply");
  expect(agent.inputs.map(lastUserText)).toEqual(["once please", "next"]);
});

it("a 429 and a throughput error are waited out and retried; a 131047 refusal is logged in plain words and counted, and the gateway goes on", async () => {
  const { fake, logger, sendFailures, deliver } = await setup();
  fake.failNext({ status: 429, body: "error-130429", retryAfter: 0 });
  fake.failNext({ status: 400, body: "error-130429" });
  await deliver(dm("retry me"));
  await fake.waitFor(() => fake.sentTo(USER)[0], "the retried reply");
  expect(fake.calls.filter((c) => c.method === "POST" && c.body?.["type"] === "text").map((c) => c.status)).toEqual([429, 400, 200]);
  fake.failNext({ status: 400, body: "error-131047" });
  await deliver(dm("too late"));
  await fake.waitFor(() => sendFailures.length > 0, "the send failure");
  expect(sendFailures).toEqual(["whatsapp/reply"]);
  const line = logger.lines.find((l) => l.msg === "sending to the platform failed")!;
  // The key holds the person's phone number: the log has its hash.
  expect(line.obj["key"]).toBeUndefined();
  expect(line.obj["keyHash"]).toBe(hashIdentifier(`agent:main:whatsapp:dm:${USER}`));
  expect((line.obj["err"] as Error).message).toBe(
    "whatsapp: the Graph API refused the request (131047 Re-engagement message): the customer has not written in 24 hours; only a template message can reach them",
  );
  await deliver(dm("still alive?"));
  await fake.waitFor(() => fake.sentTo(USER).some((m) => m.body === "You said: still alive?"), "the reply after the failure");
  expect(logger.text()).not.toContain(fake.accessToken);
});

it("a failed status for a sent reply is a delivery failure with the session key and the reason; delivered statuses and repeats are not", async () => {
  const { fake, logger, deliveryFailures, agent, deliver } = await setup();
  await deliver(dm("hi"));
  const reply = await fake.waitFor(() => fake.sentTo(USER)[0], "the reply");
  await deliver(whatsappWebhook("webhook-status-delivered", { status: { id: reply.wamid } }));
  const failed = whatsappWebhook("webhook-status-failed", { status: { id: reply.wamid } });
  await deliver(failed);
  await deliver(failed);
  const line = await fake.waitFor(
    () => logger.lines.find((l) => l.level === "error" && l.msg.startsWith("whatsapp: a message was not delivered")),
    "the failure line",
  );
  expect(line.msg).toBe(
    "whatsapp: a message was not delivered: the customer has not written in 24 hours; only a template message can reach them (error 131047)",
  );
  expect(line.obj).toMatchObject({ platform: "whatsapp", keyHash: hashIdentifier(`agent:main:whatsapp:dm:${USER}`), messageId: reply.wamid, reason: "131047" });
  expect(logger.text()).not.toContain(USER);
  // The barrier: a message delivered after the statuses, answered in turn.
  await deliver(dm("after the statuses"));
  await fake.waitFor(() => fake.sentTo(USER)[1], "the reply after the statuses");
  expect(deliveryFailures).toEqual(["whatsapp/131047"]);
  expect(logger.lines.filter((l) => l.msg.startsWith("whatsapp: a message was not delivered"))).toHaveLength(1);
  expect(agent.inputs.map(lastUserText)).toEqual(["hi", "after the statuses"]);
});

it("groups: answered when mentioned or replied to, per person; allowlists take any spelling of a number", async () => {
  const { fake, agent, deliver } = await setup({ rules: { allowedUsers: ["+1 (650) 555-1234"] } });
  await deliver(whatsappWebhook("webhook-group-text", { message: { text: { body: "nobody asked" } } }));
  await deliver(whatsappWebhook("webhook-group-text", { message: { text: { body: "@15550783881 what now?" } } }));
  const reply = await fake.waitFor(() => fake.sentTo(GROUP)[0], "the group reply");
  expect(reply.recipientType).toBe("group");
  await deliver(whatsappWebhook("webhook-group-text", { message: { text: { body: "and then?" }, context: { from: "15550783881", id: reply.wamid } } }));
  await fake.waitFor(() => fake.sentTo(GROUP)[1], "the reply to the reply");
  await deliver(
    whatsappWebhook("webhook-group-text", { message: { from: "16505550000", text: { body: "@15550783881 stranger" } }, contact: { wa_id: "16505550000" } }),
  );
  // The barrier: an allowed mention delivered after the stranger's, answered in turn.
  await deliver(whatsappWebhook("webhook-group-text", { message: { text: { body: "@15550783881 one more" } } }));
  await fake.waitFor(() => fake.sentTo(GROUP)[2], "the reply to the last mention");
  expect(agent.inputs.map(lastUserText)).toEqual(["what now?", "and then?", "one more"]);
});

it("a refused token or an unknown phone number id stops the start with a clear error that shows no secret", async () => {
  const { fake } = await setup();
  const handler = async () => ({ status: "command" as const, sessionKey: "x" });
  const wrong = new WhatsAppAdapter({
    accessToken: "EAAwrongWrongWrongToken0000",
    appSecret: APP_SECRET,
    verifyToken: VERIFY_TOKEN,
    phoneNumberId: FAKE_PHONE_NUMBER_ID,
    apiUrl: fake.url,
  });
  const refused = await wrong.connect(handler).then(
    () => null,
    (e: unknown) => e as Error,
  );
  expect(refused?.message).toMatch(/^whatsapp: Meta refused the access token \(190\): check adapters\.whatsapp\.accessToken or WHATSAPP_ACCESS_TOKEN/u);
  expect(`${refused?.message} ${refused?.stack} ${String(refused?.cause)}`).not.toContain("EAAwrongWrongWrongToken0000");
  const unknown = new WhatsAppAdapter({
    accessToken: fake.accessToken,
    appSecret: APP_SECRET,
    verifyToken: VERIFY_TOKEN,
    phoneNumberId: "999",
    apiUrl: fake.url,
  });
  const missing = await unknown.connect(handler).then(
    () => null,
    (e: unknown) => e as Error,
  );
  expect(missing?.message).toMatch(/^whatsapp: Meta does not know the phone number id 999/u);
});

it("a refusal with a code the adapter does not explain shows Meta's own words once", async () => {
  const { fake, logger, sendFailures, deliver } = await setup();
  fake.failNext({ status: 400, body: "error-100-body-too-long" });
  await deliver(dm("anything"));
  await fake.waitFor(() => sendFailures.length > 0, "the send failure");
  const line = logger.lines.find((l) => l.msg === "sending to the platform failed")!;
  expect((line.obj["err"] as Error).message).toBe(
    "whatsapp: the Graph API refused the request (100): Param text['body'] must be at most 4096 characters long.",
  );
});
