/**
 * Automatic compression through a real `threadline serve` (issue 28): messages come in
 * through the webhook adapter, the provider is the fake OpenAI-compatible server in this
 * process. Its script answers summary requests with the facts (`WORD-123`) they carry, and
 * can hang on them. The gateway is the built bin (`npm run build` first).
 */
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiRequest, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";
import { dropSchema, TEST_PG_URL } from "../contract/postgres-server.js";
import type { SessionDB } from "../../src/store/index.js";
import {
  BIN,
  cleanupProcesses,
  makeHome,
  postWebhook,
  spawnGateway,
  startCallbackServer,
  withDatabase,
  withDatabaseAt,
  type CallbackServer,
  type GatewayProcess,
} from "./gateway-process.js";
import { contentText } from "./model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const SECRET = "e2e-compression-secret-0123456789";
const FAKE_KEY = "sk-fake-compression-key";

const fakes: FakeOpenAiServer[] = [];
const schemas: string[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** The PostgreSQL database of the running test (`null`: the home's SQLite file). */
let pgTarget: string | null = null;

/** The config's `database` for a backend: the default SQLite file, or a fresh PostgreSQL schema. */
function databaseFor(backend: "sqlite" | "postgres"): { database?: string } {
  pgTarget = null;
  if (backend === "sqlite") return {};
  const schema = `tl_cmp_${randomBytes(5).toString("hex")}`;
  schemas.push(schema);
  pgTarget = `${TEST_PG_URL}?schema=${schema}`;
  return { database: pgTarget };
}

/** Opens the test's database (the home's SQLite file, or its PostgreSQL schema). */
async function withDb<T>(home: string, use: (db: SessionDB) => Promise<T>): Promise<T> {
  return pgTarget === null ? withDatabase(home, use) : withDatabaseAt(pgTarget, use);
}

/** The text of a request's last user message. */
function lastUserText(request: FakeOpenAiRequest): string {
  const users = (request.body?.messages ?? []).filter((m) => m.role === "user");
  return contentText(users.at(-1)?.content);
}

const isSummaryRequest = (request: FakeOpenAiRequest): boolean => lastUserText(request).startsWith("Summarise our conversation so far");

interface Model {
  fake: FakeOpenAiServer;
  /** Summary requests hang (until the client goes away) while set. */
  hang: boolean;
  /** For each summary request: how many replies the chat had been delivered, and how many messages it had sent, when it arrived. */
  deliveredAtSummary: Array<{ replies: number; posted: number }>;
}

/** What the chat has seen: its callback server and how many (non-command) messages it sent. */
interface Chat {
  callback: CallbackServer | null;
  posted: number;
}

async function startModel(chat: Chat): Promise<Model> {
  const model: Model = { fake: null as unknown as FakeOpenAiServer, hang: false, deliveredAtSummary: [] };
  model.fake = await startFakeOpenAiServer({
    apiKey: FAKE_KEY,
    title: null,
    script: (request) => {
      if (!isSummaryRequest(request)) return null;
      const replies = (chat.callback?.deliveries ?? []).filter((d) => d.body.kind === "reply" && !d.body.text.startsWith("Title set")).length;
      model.deliveredAtSummary.push({ replies, posted: chat.posted });
      if (model.hang) return { ...fakeTextReply("never"), delayMs: 600_000 };
      const facts = [...new Set(lastUserText(request).match(/\b[A-Z]+-\d+\b/gu) ?? [])];
      return fakeTextReply(`Facts: ${facts.join(", ") || "none"}`);
    },
  });
  fakes.push(model.fake);
  return model;
}

async function startServe(home: string, model: Model): Promise<GatewayProcess> {
  return spawnGateway({ home, env: { OPENAI_BASE_URL: model.fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
}

for (const backend of ["sqlite", "postgres"] as const)
  describe(`threadline serve: automatic compression (issue 28, ${backend})`, () => {
    it(
      "compressions form a lineage t, t #2, t #3 with stored, searchable summaries; early facts reach late requests through them",
      async () => {
        const chat: Chat = { callback: null, posted: 0 };
        const model = await startModel(chat);
        const callback = (chat.callback = await startCallbackServer(SECRET));
        const home = await makeHome({
          ...databaseFor(backend),
          adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
          titles: { enabled: false },
          compression: { hardMessageLimit: 10, protectFirstN: 1, protectLastN: 2 },
        });
        const gateway = await startServe(home, model);
        let n = 0;
        const say = async (text: string): Promise<string> => {
          const messageId = `m${++n}`;
          if (!text.startsWith("/")) chat.posted += 1;
          const posted = await postWebhook(gateway.url, SECRET, { chatId: "c1", userId: "u1", text, messageId });
          expect(posted.status).toBeLessThan(300);
          return (await callback.replyTo(messageId)).body.text;
        };
        const notices = (): string[] => callback.deliveries.map((d) => d.body.text).filter((t) => t.startsWith("Context compressed"));
        await say("hello");
        await say("/title t");
        await say("remember the launch code ZEBRA-42");
        for (let i = 0; notices().length < 2 && i < 30; i++) {
          await say(`filler message ${i}`);
          // A compression runs in the background; the next message never waits for it.
          if (model.deliveredAtSummary.length > notices().length)
            await waitFor(() => notices().length === model.deliveredAtSummary.length || undefined, { what: "the compression notice" });
        }
        expect(notices()).toEqual(['Context compressed: continuing in "t #2".', 'Context compressed: continuing in "t #3".']);
        expect(model.deliveredAtSummary.length).toBe(2);
        // Early facts reach a late request through the summary.
        expect(await say("what was the code?")).toBe("Reply to: what was the code?");
        const late = model.fake
          .chatRequests()
          .filter((r) => !isSummaryRequest(r))
          .at(-1)!;
        const given = (late.body?.messages ?? []).filter((m) => m.role !== "system").map((m) => contentText(m.content));
        expect(given[0]).toMatch(/^\[Summary of the earlier conversation \(session \S+\)\]\nFacts: ZEBRA-42$/u);
        expect(given.some((t) => t.startsWith("remember the launch code"))).toBe(false);
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
        const tipId = await withDb(home, async (db) => {
          const page = await db.listSessions({ limit: 10 });
          const tip = page.items.find((s) => s.title === "t #3")!;
          const chain = [...(await db.getAncestors(tip.id)).reverse(), (await db.getSession(tip.id))!];
          expect(chain.map((s) => [s.title, s.endReason])).toEqual([
            ["t", "compression"],
            ["t #2", "compression"],
            ["t #3", null],
          ]);
          for (const child of chain.slice(1)) {
            const [summary] = await db.getMessages(child.id);
            expect(summary).toMatchObject({ role: "user", platformMessageId: `summary:${child.parentSessionId}` });
            expect(summary!.content).toContain("ZEBRA-42");
          }
          expect((await db.searchMessages("ZEBRA")).some((hit) => hit.sessionId === tip.id)).toBe(true);
          // Exported with its session, marked as the summary it is.
          const exported: Array<{ messages: Array<{ content: unknown; platformMessageId: string | null }> }> = [];
          for await (const record of db.exportSessions({ sessionId: tip.id })) exported.push(record as never);
          expect(exported[0]!.messages[0]).toMatchObject({ platformMessageId: `summary:${chain[1]!.id}` });
          return tip.id;
        });
        // `threadline sessions show` labels it as the summary of the session it compressed.
        const shown = await promisify(execFile)(process.execPath, [BIN, "sessions", "show", tipId], {
          env: { ...process.env, THREADLINE_HOME: home, THREADLINE_DB: pgTarget ?? undefined, THREADLINE_CONFIG: undefined, NO_COLOR: "1" },
          timeout: 30_000,
        }).catch((error: unknown) => error as { stdout: string });
        expect(shown.stdout).toMatch(/summary of the earlier conversation \(\S+\)/u);
        expect(shown.stdout).toContain("Facts: ZEBRA-42");
      },
      TEST_TIMEOUT,
    );

    it(
      "a hanging summary holds no reply back; killed during it: no half-made child, and after a restart the next turn compresses again",
      async () => {
        const chat: Chat = { callback: null, posted: 0 };
        const model = await startModel(chat);
        const callback = (chat.callback = await startCallbackServer(SECRET));
        const home = await makeHome({
          ...databaseFor(backend),
          adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
          titles: { enabled: false },
          compression: { hardMessageLimit: 10, protectFirstN: 1, protectLastN: 2 },
        });
        model.hang = true;
        let gateway = await startServe(home, model);
        let n = 0;
        const say = async (text: string): Promise<string> => {
          const messageId = `k${++n}`;
          if (!text.startsWith("/")) chat.posted += 1;
          const posted = await postWebhook(gateway.url, SECRET, { chatId: "c2", userId: "u2", text, messageId });
          expect(posted.status).toBeLessThan(300);
          return (await callback.replyTo(messageId)).body.text;
        };
        for (let i = 0; i < 6; i++) await say(`message ${i} PUMA-${i}`);
        await waitFor(() => model.fake.chatRequests().some(isSummaryRequest) || undefined, { what: "the hanging summary request" });
        // The reply that triggered it was delivered, and a message sent while the summary hangs is answered.
        expect(model.deliveredAtSummary[0]!.posted).toBe(6);
        expect(callback.deliveries.filter((d) => d.body.kind === "reply")).toHaveLength(6);
        expect(await say("while the summary hangs")).toBe("Reply to: while the summary hangs");
        expect(await gateway.signal("SIGKILL")).toMatchObject({ signal: "SIGKILL" });
        const before = await withDb(home, async (db) => {
          const sessions = (await db.listSessions({ limit: 10 })).items;
          expect(sessions).toHaveLength(1);
          const only = (await db.getSession(sessions[0]!.id))!;
          expect(only.endedAt).toBeNull();
          expect(await db.getDescendants(only.id)).toEqual([]);
          return only;
        });
        model.hang = false;
        gateway = await startServe(home, model);
        expect(await say("after the restart")).toBe("Reply to: after the restart");
        await callback.waitFor((d) => d.body.text.startsWith("Context compressed"), "the compression after the restart");
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
        await withDb(home, async (db) => {
          expect((await db.getSession(before.id))!.endReason).toBe("compression");
          const [child] = await db.getDescendants(before.id);
          const messages = await db.getMessages(child!.id);
          expect(messages[0]!.content).toMatch(/Facts: .*PUMA-2/u);
          expect(messages.at(-1)!.content).toBe("Reply to: after the restart");
        });
      },
      TEST_TIMEOUT,
    );
  });
