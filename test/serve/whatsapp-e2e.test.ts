/**
 * End to end: `threadline serve` as a child process with the WhatsApp adapter, its Graph API
 * calls going to the local fake (test/fakes/whatsapp) through `adapters.whatsapp.apiUrl`, and
 * webhooks built from the documented payloads, signed with the app secret and POSTed by the
 * test to the gateway's `/whatsapp/webhook` route; the fake OpenAI-compatible provider is the
 * model. Nothing leaves 127.0.0.1.
 */
import { hashIdentifier } from "../../src/gateway/session-context.js";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer, type FakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { messageIdOf, postWhatsAppWebhook, whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, runServe, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-whatsapp-e2e";
const APP_SECRET = "5f0e1d2c3b4a59687f6e5d4c3b2a1908";
const VERIFY_TOKEN = "threadline-verify-7f3a9c";
const USER = "16505551234";
const OTHER = "16505550000";
const GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD";
const BUSINESS = "15550783881";
/** A German mobile number and the business-scoped user id Meta gives its owner. */
const PHONE = "4915123456789";
const BSUID = "DE.1502576394655843";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<{ whatsapp: FakeWhatsAppServer; model: FakeOpenAiServer }> {
  const whatsapp = await startFakeWhatsAppServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => whatsapp.close(),
    () => model.close(),
  );
  return { whatsapp, model };
}

function setupHome(whatsapp: FakeWhatsAppServer, extra: Record<string, unknown> = {}): Promise<string> {
  return makeHome({
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, whatsapp: { apiUrl: whatsapp.url, phoneNumberId: FAKE_PHONE_NUMBER_ID, ...openUnlessRestricted(extra) } },
  });
}

/**
 * These tests rely on everyone being answered (`access: open`), unless a test restricts who
 * may talk (`allowedUsers` or its own `access`).
 */
function openUnlessRestricted(extra: Record<string, unknown>): Record<string, unknown> {
  return "allowedUsers" in extra || "access" in extra ? extra : { access: "open", ...extra };
}

function env(whatsapp: FakeWhatsAppServer, model: FakeOpenAiServer): Record<string, string> {
  return {
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: FAKE_KEY,
    THREADLINE_MODEL: "fake-model",
    WHATSAPP_ACCESS_TOKEN: whatsapp.accessToken,
    WHATSAPP_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
  };
}

function webhookUrl(gateway: GatewayProcess): string {
  return `${gateway.url}/whatsapp/webhook`;
}

/** POSTs a signed notification and expects Meta's 200. */
async function deliver(gateway: GatewayProcess, payload: Record<string, unknown>): Promise<void> {
  const answer = await postWhatsAppWebhook(webhookUrl(gateway), payload, { appSecret: APP_SECRET });
  expect(answer.status).toBe(200);
}

/** A text message from `from` (the phone, as written) with optional BSUID fields. */
function dm(body: string, options: { from?: string | undefined; bsuid?: string; name?: string } = {}): Record<string, unknown> {
  const from = "from" in options ? options.from : USER;
  return whatsappWebhook("webhook-text", {
    message: { from, from_user_id: options.bsuid, text: { body } },
    contact: { wa_id: from, user_id: options.bsuid, profile: { name: options.name ?? "Sheena Nelson" } },
  });
}

function group(body: string, from = USER, context?: Record<string, unknown>): Record<string, unknown> {
  return whatsappWebhook("webhook-group-text", { message: { from, text: { body }, context }, contact: { wa_id: from } });
}

function expectNoSecrets(gateway: GatewayProcess, whatsapp: FakeWhatsAppServer): void {
  for (const secret of [whatsapp.accessToken, APP_SECRET, VERIFY_TOKEN]) expect(gateway.output()).not.toContain(secret);
}

async function metrics(gateway: GatewayProcess): Promise<string> {
  return fetch(`${gateway.url}/metrics`).then((r) => r.text());
}

describe("threadline serve with WhatsApp", () => {
  it(
    "starts with the business number; the GET handshake answers the challenge only for the right token; a DM keeps its context; a redelivered webhook is no second turn; secrets never appear",
    async () => {
      const { whatsapp, model } = await fakes();
      const home = await setupHome(whatsapp);
      const gateway = await spawnGateway({ home, env: env(whatsapp, model) });
      await waitFor(
        () =>
          gateway
            .logLines()
            .find(
              (l) =>
                l["platform"] === "whatsapp" &&
                l["mode"] === "webhook" &&
                l["msg"] === `whatsapp adapter connected as +1 555-078-3881 (${FAKE_PHONE_NUMBER_ID}) (webhook)`,
            ),
        {
          what: "the whatsapp startup line",
          describe: () => gateway.output(),
        },
      );
      const handshake = (token: string, mode = "subscribe") =>
        fetch(`${webhookUrl(gateway)}?${new URLSearchParams({ "hub.mode": mode, "hub.verify_token": token, "hub.challenge": "1158201444" })}`);
      const right = await handshake(VERIFY_TOKEN);
      expect(right.status).toBe(200);
      expect(await right.text()).toBe("1158201444");
      const wrong = await handshake("not-the-verify-token");
      expect(wrong.status).toBe(403);
      expect(await wrong.text()).not.toContain("1158201444");
      expect((await handshake(VERIFY_TOKEN, "unsubscribe")).status).toBe(403);

      const first = dm("my name is Zed");
      await deliver(gateway, first);
      await whatsapp.waitFor(() => whatsapp.sentTo(USER)[0], "the first reply");
      // Meta resends a notification it saw no 200 for in time: no second turn.
      await deliver(gateway, first);
      const second = dm("what is my name?");
      await deliver(gateway, second);
      await whatsapp.waitFor(() => whatsapp.sentTo(USER)[1], "the second reply");
      expect(dialogue(await requestFor(model, "what is my name?"))).toEqual([
        ["user", "my name is Zed"],
        ["assistant", "Reply to: my name is Zed"],
        ["user", "what is my name?"],
      ]);
      // The second message is admitted after the resent one (one chat's messages are admitted in
      // arrival order) and runs after any turn the resend could have started: its reply is the barrier.
      expect(whatsapp.sentTo(USER).map((m) => [m.body, m.replyTo, m.recipientType])).toEqual([
        ["Reply to: my name is Zed", messageIdOf(first), "individual"],
        ["Reply to: what is my name?", messageIdOf(second), "individual"],
      ]);
      expect(whatsapp.reads.map((r) => r.messageId)).toContain(messageIdOf(first));
      expect(whatsapp.reads.every((r) => r.typing)).toBe(true);
      expect(model.chatRequests()).toHaveLength(2);
      const scraped = await metrics(gateway);
      for (const secret of [whatsapp.accessToken, APP_SECRET, VERIFY_TOKEN]) expect(scraped).not.toContain(secret);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.listRoutes()).items.map((r) => r.key)).toEqual([`agent:main:whatsapp:dm:${USER}`]);
      });
      expectNoSecrets(gateway, whatsapp);
    },
    TEST_TIMEOUT,
  );

  it(
    "groups: no mention → ignored and not stored; mentions answered with one session per person; a reply to the bot's message needs no mention",
    async () => {
      const { whatsapp, model } = await fakes();
      const home = await setupHome(whatsapp);
      const gateway = await spawnGateway({ home, env: env(whatsapp, model) });
      await deliver(gateway, group("nobody asked the bot"));
      await deliver(gateway, group(`@${BUSINESS} sheena here`));
      await deliver(gateway, group(`@${BUSINESS} other person here`, OTHER));
      await whatsapp.waitFor(() => whatsapp.sentTo(GROUP).length === 2, "two group replies");
      expect(whatsapp.sentTo(GROUP).every((m) => m.recipientType === "group")).toBe(true);
      const toSheena = whatsapp.sentTo(GROUP).find((m) => m.body === "Reply to: sheena here")!;
      await deliver(gateway, group("and a follow-up", USER, { from: BUSINESS, id: toSheena.wamid }));
      await whatsapp.waitFor(() => whatsapp.sentTo(GROUP)[2], "the reply to the follow-up");
      // Per person: Sheena's session holds her two messages, not the other person's.
      expect(dialogue(await requestFor(model, "and a follow-up"))).toEqual([
        ["user", "sheena here"],
        ["assistant", "Reply to: sheena here"],
        ["user", "and a follow-up"],
      ]);
      expect(dialogue(await requestFor(model, "other person here"))).toEqual([["user", "other person here"]]);
      expect(model.chatRequests().some((r) => dialogue(r).some(([, t]) => t.includes("nobody asked")))).toBe(false);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const keys = (await db.listRoutes()).items.map((r) => r.key).sort();
        expect(keys).toEqual([`agent:main:whatsapp:group:${GROUP}:${OTHER}`, `agent:main:whatsapp:group:${GROUP}:${USER}`].sort());
        expect(await db.searchMessages("nobody")).toHaveLength(0);
      });
      expectNoSecrets(gateway, whatsapp);
    },
    TEST_TIMEOUT,
  );

  it(
    "one person, four spellings: +49 151 2345 6789, a JID, phone + BSUID, then the BSUID alone all land in one session; the model sees the whole dialogue; the BSUID-only message is answered by recipient",
    async () => {
      const { whatsapp, model } = await fakes();
      const home = await setupHome(whatsapp);
      const gateway = await spawnGateway({ home, env: env(whatsapp, model) });
      // 1. The number as a person writes it — the Cloud API itself sends digits, but a BSP or
      //    bridge relaying webhooks may forward the number as displayed.
      await deliver(gateway, dm("one: my name is Zed", { from: "+49 151 2345 6789" }));
      await whatsapp.waitFor(() => whatsapp.sentTo(PHONE)[0], "reply 1");
      // 2. The JID form WhatsApp-Web-based bridges use.
      await deliver(gateway, dm("two: I live in Berlin", { from: `${PHONE}@s.whatsapp.net` }));
      await whatsapp.waitFor(() => whatsapp.sentTo(PHONE)[1], "reply 2");
      // 3. The Cloud API's 2026 form: the phone and the business-scoped user id together.
      await deliver(gateway, dm("three: I like tea", { from: PHONE, bsuid: BSUID }));
      await whatsapp.waitFor(() => whatsapp.sentTo(PHONE)[2], "reply 3");
      // 4. A username user: the BSUID alone.
      const fourth = dm("four: what do you know about me?", { from: undefined, bsuid: BSUID });
      await deliver(gateway, fourth);
      const answer = await whatsapp.waitFor(() => whatsapp.sentTo(BSUID)[0], "reply 4 (by BSUID)");
      expect(answer).toMatchObject({ to: null, recipient: BSUID, recipientType: "individual", replyTo: messageIdOf(fourth) });
      expect(dialogue(await requestFor(model, "four: what do you know about me?"))).toEqual([
        ["user", "one: my name is Zed"],
        ["assistant", "Reply to: one: my name is Zed"],
        ["user", "two: I live in Berlin"],
        ["assistant", "Reply to: two: I live in Berlin"],
        ["user", "three: I like tea"],
        ["assistant", "Reply to: three: I like tea"],
        ["user", "four: what do you know about me?"],
      ]);
      expect(whatsapp.sentTo(PHONE).map((m) => m.body)).toEqual([
        "Reply to: one: my name is Zed",
        "Reply to: two: I live in Berlin",
        "Reply to: three: I like tea",
      ]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.listRoutes()).items.map((r) => r.key)).toEqual([`agent:main:whatsapp:dm:${PHONE}`]);
        const sessions = await db.listSessions();
        expect(sessions.items ?? sessions).toHaveLength(1);
        const route = await db.getRoute(`agent:main:whatsapp:dm:${PHONE}`);
        const stored = await db.getMessages(route!.sessionId);
        expect(stored.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
          "one: my name is Zed",
          "two: I live in Berlin",
          "three: I like tea",
          "four: what do you know about me?",
        ]);
      });
      expectNoSecrets(gateway, whatsapp);
    },
    TEST_TIMEOUT,
  );

  it(
    "a POST without a signature, with a wrong one, or signed with another secret gets 401 and starts nothing",
    async () => {
      const { whatsapp, model } = await fakes();
      const home = await setupHome(whatsapp);
      const gateway = await spawnGateway({ home, env: env(whatsapp, model) });
      const url = webhookUrl(gateway);
      expect((await postWhatsAppWebhook(url, dm("unsigned"))).status).toBe(401);
      expect(
        (await postWhatsAppWebhook(url, dm("mis-signed"), { signature: "sha256=0000000000000000000000000000000000000000000000000000000000000000" })).status,
      ).toBe(401);
      expect((await postWhatsAppWebhook(url, dm("other secret"), { appSecret: "another-app-secret-0123456789ab" })).status).toBe(401);
      expect((await postWhatsAppWebhook(url, dm("sha1"), { signature: "sha1=abcdef" })).status).toBe(401);
      await deliver(gateway, dm("signed"));
      await whatsapp.waitFor(() => whatsapp.sentTo(USER)[0], "the reply to the signed message");
      // The refused POSTs were answered 401 before the signed one was sent: had any been taken, it
      // would have been admitted first in the chat, and answered before the signed one.
      expect(whatsapp.sentTo(USER).map((m) => m.body)).toEqual(["Reply to: signed"]);
      expect(model.chatRequests()).toHaveLength(1);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        for (const word of ["unsigned", "mis-signed", "other secret", "sha1"]) expect(await db.searchMessages(word)).toHaveLength(0);
      });
      expectNoSecrets(gateway, whatsapp);
    },
    TEST_TIMEOUT,
  );

  it(
    "delivery failures: a failed status (131047) is logged with the session key's hash in plain words and counted; a send refused with 131047 is logged and counted; the gateway goes on",
    async () => {
      const { whatsapp, model } = await fakes();
      const home = await setupHome(whatsapp);
      const gateway = await spawnGateway({ home, env: env(whatsapp, model) });
      await deliver(gateway, dm("hello"));
      const reply = await whatsapp.waitFor(() => whatsapp.sentTo(USER)[0], "the reply");
      await deliver(gateway, whatsappWebhook("webhook-status-delivered", { status: { id: reply.wamid } }));
      await deliver(gateway, whatsappWebhook("webhook-status-failed", { status: { id: reply.wamid } }));
      const line = await waitFor(() => gateway.logLines().find((l) => String(l["msg"]).startsWith("whatsapp: a message was not delivered")), {
        what: "the delivery failure line",
        describe: () => gateway.output(),
      });
      expect(line).toMatchObject({
        level: 50,
        platform: "whatsapp",
        // The key holds the person's phone number: the log has its hash.
        keyHash: hashIdentifier(`agent:main:whatsapp:dm:${USER}`),
        messageId: reply.wamid,
        reason: "131047",
        msg: "whatsapp: a message was not delivered: the customer has not written in 24 hours; only a template message can reach them (error 131047)",
      });
      expect(await metrics(gateway)).toContain('threadline_delivery_failures_total{platform="whatsapp",reason="131047"} 1');

      whatsapp.failNext({ status: 400, body: "error-131047" });
      await deliver(gateway, dm("are you there?"));
      const refused = await waitFor(() => gateway.logLines().find((l) => l["msg"] === "sending to the platform failed"), {
        what: "the send failure line",
        describe: () => gateway.output(),
      });
      expect(refused["keyHash"]).toBe(hashIdentifier(`agent:main:whatsapp:dm:${USER}`));
      expect(refused["key"]).toBeUndefined();
      expect(JSON.stringify(refused["err"])).toContain("the customer has not written in 24 hours; only a template message can reach them");
      expect(await metrics(gateway)).toContain('threadline_send_failures_total{platform="whatsapp",kind="reply"} 1');
      await deliver(gateway, dm("and now?"));
      await whatsapp.waitFor(() => whatsapp.sentTo(USER).find((m) => m.body === "Reply to: and now?"), "the reply after the refusal");
      // Status callbacks are never user messages.
      expect(model.chatRequests().map((r) => dialogue(r).at(-1)?.[1])).toEqual(["hello", "are you there?", "and now?"]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoSecrets(gateway, whatsapp);
    },
    TEST_TIMEOUT,
  );

  it(
    "SIGKILL during a turn: after the restart the reply reaches the chat exactly once (Meta's redelivery is no second turn)",
    async () => {
      const { whatsapp, model } = await fakes();
      let slow = true;
      model.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 60_000 } : null));
      const home = await setupHome(whatsapp);
      const first = await spawnGateway({ home, env: env(whatsapp, model) });
      const question = dm("a slow question");
      await deliver(first, question);
      await requestFor(model, "a slow question");
      expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
      expect(whatsapp.sentTo(USER)).toEqual([]);

      slow = false;
      const restartedAt = model.requests.length;
      const second = await spawnGateway({ home, env: env(whatsapp, model) });
      await requestFor(model, "a slow question", restartedAt);
      await whatsapp.waitFor(() => whatsapp.sentTo(USER)[0], "the resumed reply");
      await deliver(second, question);
      await deliver(second, dm("a later question"));
      await whatsapp.waitFor(() => whatsapp.sentTo(USER)[1], "the reply to the later question");
      // The later question is admitted after the redelivery (one chat's messages are admitted in
      // arrival order) and runs after any turn the redelivery could have started: its reply is the barrier.
      expect(whatsapp.sentTo(USER).map((m) => m.body)).toEqual(["Reply to: a slow question", "Reply to: a later question"]);
      expect(await second.stop()).toEqual({ code: 0, signal: null });
      expectNoSecrets(first, whatsapp);
      expectNoSecrets(second, whatsapp);
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses to start without its secrets, naming the keys and variables (exit 2); a refused token stops the start without printing it",
    async () => {
      const { whatsapp, model } = await fakes();
      const home = await setupHome(whatsapp);
      const missing = await runServe({
        home,
        env: { ...env(whatsapp, model), WHATSAPP_ACCESS_TOKEN: undefined, WHATSAPP_APP_SECRET: undefined, WHATSAPP_VERIFY_TOKEN: undefined },
      });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(
        "adapters.whatsapp.accessToken: missing: set it in the config file or in the WHATSAPP_ACCESS_TOKEN environment variable",
      );
      expect(missing.stderr).toContain("adapters.whatsapp.appSecret: missing");
      expect(missing.stderr).toContain("adapters.whatsapp.verifyToken: missing");
      const wrong = "EAAnotTheRightAccessToken000111";
      const refused = await runServe({ home, env: { ...env(whatsapp, model), WHATSAPP_ACCESS_TOKEN: wrong } });
      expect(refused.code).not.toBe(0);
      const output = refused.stderr + refused.stdout;
      expect(output).toContain("whatsapp: Meta refused the access token (190)");
      expect(output).not.toContain(wrong);
      expect(output).not.toContain(APP_SECRET);
      expect(output).not.toContain(VERIFY_TOKEN);
    },
    TEST_TIMEOUT,
  );
});
