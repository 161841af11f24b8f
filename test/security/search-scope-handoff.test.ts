/**
 * Threat (issue 27, point 3): a session handed off from the terminal (stored as `source: cli`
 * with the operator's id) and continued in a chat: anyone posting in the handoff chat searched
 * as the operator, through all of the operator's terminal sessions. The tool now searches as
 * the person posting: they find their own sessions of that chat, none of the operator's.
 *
 * A real `threadline serve` child with the webhook adapter and a shared home channel, the
 * terminal side's `requestHandoff` from this process on the same database (SQLite and
 * PostgreSQL), and the fake provider calling `session_search` on cue.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { requestHandoff } from "../../src/gateway/index.js";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, databaseOf, makeHome, postWebhook, spawnGateway, startCallbackServer } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-handoff-scope";
const SECRET = "handoff-scope-secret-0123456789";
const HOME_CHAT = "home-chat";
const OPERATOR = "operator";

const BACKENDS = (["sqlite", "postgres"] as const).filter((name) => {
  const selected = process.env["THREADLINE_STORES"]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return !selected || selected.length === 0 || selected.includes(name);
});

const open: SessionDB[] = [];
const fakes: FakeOpenAiServer[] = [];
const schemas: string[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close().catch(() => {})));
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

describe("security: session_search in a handed-off session searches as the person posting", () => {
  it.each(BACKENDS)(
    "%s: someone posting in the handoff channel never finds the operator's other terminal sessions",
    async (backend) => {
      const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
      fakes.push(model);
      const callback = await startCallbackServer(SECRET);
      const config: Record<string, unknown> = {
        titles: { enabled: false },
        adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
        homeChannels: { webhook: { chatId: HOME_CHAT, name: "Home", chatType: "channel" } },
        sessions: { groupSessionsPerUser: false },
      };
      let schema: string | null = null;
      if (backend === "postgres") {
        await requirePostgres();
        schema = `tl_hs_${randomBytes(5).toString("hex")}`;
        schemas.push(schema);
        config["database"] = `${TEST_PG_URL}?schema=${schema}`;
      }
      const home = await makeHome(config);
      const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
      const db = schema === null ? await openSessionDB(databaseOf(home)) : await openSessionDB(TEST_PG_URL, { schema, poolSize: 2 });
      open.push(db);

      // Mallory talked in the home channel before (her own session of that chat).
      const before = await postWebhook(gateway.url, SECRET, {
        chatId: HOME_CHAT,
        chatType: "channel",
        userId: "mallory",
        text: "mallory: the tamarind shipment is late",
        messageId: "h1",
      });
      expect(before.status).toBe(202);
      const mallorysOld = String(((await callback.replyTo("h1")).body as { sessionId?: string }).sessionId);

      // The operator's terminal sessions: an older private one, and the one handed off.
      const secret = await db.createSession({ source: "cli", userId: OPERATOR, chatType: "dm", title: "Private" });
      await db.appendTurn(secret.id, [
        { role: "user", content: "the tamarind vault code is 4417-ochre" },
        { role: "assistant", content: "Noted." },
      ]);
      const handed = await db.createSession({ source: "cli", userId: OPERATOR, chatType: "dm", title: "Release plan" });
      await db.appendTurn(handed.id, [
        { role: "user", content: "Plan the 1.0 release" },
        { role: "assistant", content: "Freeze the API first." },
      ]);
      const outcome = await requestHandoff(
        db,
        { sessionId: handed.id, platform: "webhook" },
        { homeChannels: { webhook: { chatId: HOME_CHAT, name: "Home" } }, timeoutMs: 30_000, pollMs: 100 },
      );
      expect(outcome.status).toBe("completed");
      await callback.waitFor((d) => d.body.inReplyTo.includes(`handoff:${outcome.id}`), "the handoff summary");

      // Mallory posts in the handoff channel; her model searches.
      model.enqueue(fakeToolCallReply([{ name: "session_search", arguments: JSON.stringify({ query: "tamarind" }) }]), fakeTextReply("Searched."));
      const ack = await postWebhook(gateway.url, SECRET, {
        chatId: HOME_CHAT,
        chatType: "channel",
        userId: "mallory",
        text: "anything about tamarind?",
        messageId: "h2",
      });
      expect(ack.status).toBe(202);
      const reply = await callback.replyTo("h2");
      expect((reply.body as { sessionId?: string }).sessionId).toBe(handed.id);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });

      const found = (await db.getMessages(handed.id))
        .filter((m) => m.role === "tool")
        .map((m) => String(m.content))
        .join("\n");
      expect(found).not.toMatch(/vault code/u);
      expect(found).toMatch(/tamarind shipment is late/u);
      expect(found).toContain(mallorysOld);
    },
    TEST_TIMEOUT,
  );
});
