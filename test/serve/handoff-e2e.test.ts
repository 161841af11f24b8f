/**
 * End-to-end tests of the cross-platform handoff: a REAL `threadline serve` child (the built
 * bin, `npm run build` first) with the webhook adapter and `homeChannels.webhook`, a callback
 * server recording its signed replies, and the terminal side (`requestHandoff`) called from
 * this test process on a CLI session in the same SQLite file. Success (the summary reply
 * reaches the home channel chat, its key routes to the same session, the record completes,
 * the next message there continues the session) and each failure mode: no home channel, a
 * running turn, no gateway running (timeout; a gateway started later does not run it), and
 * the gateway failing it (a platform it has a home channel for but no adapter).
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { HandoffError, requestHandoff, type HandoffOutcome } from "../../src/gateway/index.js";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { cleanupProcesses, databaseOf, makeHome, postWebhook, spawnGateway, startCallbackServer, type CallbackServer } from "./gateway-process.js";

const TEST_TIMEOUT = 60_000;
const SECRET = "e2e-handoff-secret-0123456789";
const HOME_CHAT = "home-chat";
const HOME_KEY = `agent:main:webhook:channel:${HOME_CHAT}`;

const open: SessionDB[] = [];
const schemas: string[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close().catch(() => {})));
  await cleanupProcesses();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** The backends of the success test (`THREADLINE_STORES` narrows them). */
const BACKENDS = (["sqlite", "postgres"] as const).filter((name) => {
  const selected = process.env["THREADLINE_STORES"]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return !selected || selected.length === 0 || selected.includes(name);
});

/** A fresh PostgreSQL schema for a gateway and the test: its `database:` URL. */
async function postgresTarget(): Promise<{ url: string; schema: string }> {
  await requirePostgres();
  const schema = `tl_ho_${randomBytes(5).toString("hex")}`;
  schemas.push(schema);
  return { url: `${TEST_PG_URL}?schema=${schema}`, schema };
}

/** A gateway config: webhook adapter to `callback`, home channels as given, shared channel sessions. */
function gatewayConfig(callback: CallbackServer, homeChannels: Record<string, unknown>): Record<string, unknown> {
  return {
    adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
    homeChannels,
    sessions: { groupSessionsPerUser: false },
  };
}

/** The test's own handle on a home's database (closed after the test). */
async function database(home: string): Promise<SessionDB> {
  const db = await openSessionDB(databaseOf(home));
  open.push(db);
  return db;
}

/** A terminal session with one exchange. */
async function cliSession(db: SessionDB): Promise<string> {
  const { id } = await db.createSession({ source: "cli", title: "Release plan" });
  await db.appendTurn(id, [
    { role: "user", content: "Plan the 1.0 release" },
    { role: "assistant", content: "Freeze the API, then write the migration guide." },
  ]);
  return id;
}

async function handoffError(call: Promise<unknown>): Promise<HandoffError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HandoffError);
  return error as HandoffError;
}

describe("threadline serve: cross-platform handoff (webhook home channel)", () => {
  it.each(BACKENDS)(
    "%s: hands a CLI session off: the summary goes to the home channel, its key routes to the same session, the record completes",
    async (backend) => {
      const callback = await startCallbackServer(SECRET);
      // The home chat is a channel whose session everyone shares (its kind said in the config).
      const config = gatewayConfig(callback, { webhook: { chatId: HOME_CHAT, name: "Home", chatType: "channel" } });
      const pg = backend === "postgres" ? await postgresTarget() : null;
      if (pg !== null) config["database"] = pg.url;
      const home = await makeHome(config);
      const gateway = await spawnGateway({ home });
      let db: SessionDB;
      if (pg === null) {
        db = await database(home);
      } else {
        db = await openSessionDB(TEST_PG_URL, { schema: pg.schema, poolSize: 2 });
        open.push(db);
      }
      const id = await cliSession(db);

      const outcome = await requestHandoff(
        db,
        { sessionId: id, platform: "webhook" },
        { homeChannels: { webhook: { chatId: HOME_CHAT, name: "Home" } }, timeoutMs: 20_000, pollMs: 100 },
      );
      expect(outcome).toEqual<HandoffOutcome>({
        id: outcome.id,
        status: "completed",
        platform: "webhook",
        chatId: HOME_CHAT,
        threadId: null,
        sessionKey: HOME_KEY,
      });

      const summary = await callback.waitFor((d) => d.body.inReplyTo.includes(`handoff:${outcome.id}`), "the handoff summary");
      expect(summary.signatureValid).toBe(true);
      expect(summary.body).toMatchObject({ chatId: HOME_CHAT, threadId: null, kind: "reply", sessionId: id });
      expect(summary.body.text).toMatch(
        /^Echo: \[System note: This conversation was handed off from the terminal to webhook; summarise where things stand and what is next/,
      );

      expect((await db.getRoute(HOME_KEY))?.sessionId).toBe(id);
      expect(await db.getHandoff(outcome.id)).toMatchObject({
        status: "completed",
        reason: null,
        claimedBy: expect.any(String),
        chatId: HOME_CHAT,
        threadId: null,
        sessionKey: HOME_KEY,
      });
      const session = await db.getSession(id);
      expect(session).toMatchObject({ source: "cli", endedAt: null, title: "Release plan" });
      expect((await db.getMessages(id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);

      // The conversation continues in the home channel, in the same session.
      const ack = await postWebhook(gateway.url, SECRET, {
        chatId: HOME_CHAT,
        userId: "alice",
        chatType: "channel",
        text: "what is next?",
        messageId: "m-next",
      });
      expect(ack.status).toBe(202);
      expect(ack.body).toMatchObject({ sessionKey: HOME_KEY });
      const next = await callback.replyTo("m-next");
      // The channel is shared: the agent is given the sender prefix (issue 26, point 5), and echoes it.
      expect(next.body).toMatchObject({ text: "Echo: [alice] what is next?", sessionId: id, chatId: HOME_CHAT });
      expect((await db.getMessages(id)).length).toBe(6);
      expect(gateway.logLines().some((line) => line["msg"] === "handoff completed")).toBe(true);

      await gateway.stop();
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses without a home channel or while a turn runs; the gateway fails a platform it has no adapter for, with the reason",
    async () => {
      const callback = await startCallbackServer(SECRET);
      const homes = { webhook: { chatId: HOME_CHAT }, telegram: { chatId: "-100123" } };
      const home = await makeHome(gatewayConfig(callback, homes));
      const gateway = await spawnGateway({ home });
      const db = await database(home);
      const id = await cliSession(db);
      const before = { session: await db.getSession(id), messages: await db.getMessages(id) };

      const none = await handoffError(requestHandoff(db, { sessionId: id, platform: "slack" }, { homeChannels: homes }));
      expect(none.reason).toBe("no_home_channel");
      expect(none.message).toContain("Set homeChannels.slack.chatId in ~/.threadline/config.yaml");
      expect(none.message).toContain("threadline config set homeChannels.slack.chatId <id>");

      const busy = await handoffError(requestHandoff(db, { sessionId: id, platform: "webhook" }, { homeChannels: homes, turnRunning: true }));
      expect(busy.reason).toBe("turn_running");

      // The gateway's refusal comes before the requester's own 30 s deadline: the reason is "failed", not "timeout".
      const failed = await handoffError(requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels: homes, timeoutMs: 30_000, pollMs: 100 }));
      expect(failed.reason).toBe("failed");
      expect(failed.message).toMatch(/could not hand this session off to telegram: no telegram adapter is connected to the running gateway/);
      expect(await db.getHandoff(failed.handoffId!)).toMatchObject({
        status: "failed",
        reason: expect.stringMatching(/no telegram adapter/),
        claimedBy: expect.any(String),
      });

      // Nothing of it touched the terminal session or any chat.
      expect({ session: await db.getSession(id), messages: await db.getMessages(id) }).toEqual(before);
      expect((await db.listRoutes()).items).toEqual([]);
      expect(callback.deliveries).toEqual([]);
      await gateway.stop();
    },
    TEST_TIMEOUT,
  );

  it(
    "no gateway running: the terminal times out with a clear message, the record fails (timeout), the session is intact and a later gateway leaves it",
    async () => {
      const callback = await startCallbackServer(SECRET);
      const homes = { webhook: { chatId: HOME_CHAT, chatType: "channel" as const } };
      const home = await makeHome(gatewayConfig(callback, homes));
      const db = await database(home);
      const id = await cliSession(db);
      const before = { session: await db.getSession(id), messages: await db.getMessages(id) };

      const error = await handoffError(requestHandoff(db, { sessionId: id, platform: "webhook" }, { homeChannels: homes, timeoutMs: 1_500, pollMs: 100 }));
      expect(error.reason).toBe("timeout");
      expect(error.message).toMatch(/No running gateway took the handoff to webhook within 1\.5 s\. Start one with `threadline serve`/);
      expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed", reason: "timeout", claimedBy: null });
      expect({ session: await db.getSession(id), messages: await db.getMessages(id) }).toEqual(before);

      // A gateway that starts now does not run the abandoned handoff. The barrier: a handoff of
      // another session, requested after the start, that this gateway carries out. Its handoff
      // passes take every pending record, one after the other, so had it taken the abandoned one,
      // that would have been carried out by the time the new one completes.
      const gateway = await spawnGateway({ home });
      const { id: other } = await db.createSession({ source: "cli", title: "Another plan" });
      await db.appendTurn(other, [
        { role: "user", content: "Plan the 1.1 release" },
        { role: "assistant", content: "Collect the feedback on 1.0 first." },
      ]);
      const barrier = await requestHandoff(db, { sessionId: other, platform: "webhook" }, { homeChannels: homes, timeoutMs: 20_000, pollMs: 100 });
      expect(barrier).toMatchObject({ status: "completed", sessionKey: HOME_KEY });
      await callback.waitFor((d) => d.body.inReplyTo.includes(`handoff:${barrier.id}`), "the summary of the later handoff");
      expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed", reason: "timeout", claimedBy: null });
      // Every delivery and the home channel's route belong to the later handoff's session.
      expect(callback.deliveries.map((d) => d.body.sessionId)).toEqual([other]);
      expect((await db.getRoute(HOME_KEY))?.sessionId).toBe(other);
      expect({ session: await db.getSession(id), messages: await db.getMessages(id) }).toEqual(before);
      await gateway.stop();
    },
    TEST_TIMEOUT,
  );
});
