/**
 * Two real `threadline serve` replicas on one PostgreSQL schema (fresh per test) with a chat
 * platform configured against its local fake: the same inbound message delivered to both
 * replicas (a webhook POSTed to each, as a load balancer's retry or a platform's redelivery
 * does) is stored once and answered once; after the replica that took it is killed (SIGKILL),
 * the other answers the next message, once, and nothing is lost.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { DISCORD_IDS, discordMessage, startFakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer, type FakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { postWhatsAppWebhook, whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, type GatewayProcess } from "./gateway-process.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-replicas-e2e";
const LEASE_TTL_SECONDS = 2;

const schemas: string[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(requirePostgres);
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});
afterAll(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** A fresh schema's database URL (dropped after the file), and a handle on it for the test's checks. */
async function freshDatabase(): Promise<{ url: string; db: SessionDB }> {
  const schema = `tl_reppl_${randomBytes(5).toString("hex")}`;
  schemas.push(schema);
  const url = `${TEST_PG_URL}?schema=${schema}`;
  const db = await openSessionDB(url);
  closers.push(() => db.close());
  return { url, db };
}

async function model(): Promise<FakeOpenAiServer> {
  const server = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(() => server.close());
  return server;
}

/** One replica: its own home and replica id, the shared database, leases on with a short TTL. */
async function replica(name: string, database: string, adapters: Record<string, unknown>, env: Record<string, string>): Promise<GatewayProcess> {
  const home = await makeHome({
    titles: { enabled: false },
    gateway: { replicaId: name, leases: "on", leaseTtlSeconds: LEASE_TTL_SECONDS, drainTimeoutSeconds: 1 },
    adapters: { apiServer: { enabled: false }, ...adapters },
  });
  return spawnGateway({ home, args: ["--db", database], env: { THREADLINE_MODEL: "fake-model", OPENAI_API_KEY: FAKE_KEY, ...env }, timeoutMs: 60_000 });
}

/** The user messages stored for the test's conversations, in order, across every session. */
async function storedUserTexts(db: SessionDB): Promise<string[]> {
  const out: string[] = [];
  for (const session of (await db.listSessions({ limit: 100 })).items) {
    for (const m of await db.getMessages(session.id)) if (m.role === "user") out.push(String(m.content));
  }
  return out;
}

describe("replicas on PostgreSQL with a webhook platform (WhatsApp)", () => {
  const APP_SECRET = "5f0e1d2c3b4a59687f6e5d4c3b2a1908";
  const USER = "16505551234";

  function dm(body: string): Record<string, unknown> {
    return whatsappWebhook("webhook-text", {
      message: { from: USER, text: { body } },
      contact: { wa_id: USER, profile: { name: "Sheena Nelson" } },
    });
  }

  async function deliver(gateway: GatewayProcess, payload: Record<string, unknown>): Promise<number> {
    return (await postWhatsAppWebhook(`${gateway.url}/whatsapp/webhook`, payload, { appSecret: APP_SECRET })).status;
  }

  async function start(): Promise<{ whatsapp: FakeWhatsAppServer; db: SessionDB; a: GatewayProcess; b: GatewayProcess }> {
    const whatsapp = await startFakeWhatsAppServer();
    closers.push(() => whatsapp.close());
    const provider = await model();
    const { url, db } = await freshDatabase();
    const adapters = { whatsapp: { apiUrl: whatsapp.url, phoneNumberId: FAKE_PHONE_NUMBER_ID, access: "open" } };
    const env = {
      OPENAI_BASE_URL: provider.url,
      WHATSAPP_ACCESS_TOKEN: whatsapp.accessToken,
      WHATSAPP_APP_SECRET: APP_SECRET,
      WHATSAPP_VERIFY_TOKEN: "threadline-verify-7f3a9c",
    };
    const [a, b] = await Promise.all([replica("replica-a", url, adapters, env), replica("replica-b", url, adapters, env)]);
    return { whatsapp, db, a, b };
  }

  it(
    "the same webhook POSTed to both replicas is stored and answered once; after one replica is killed (SIGKILL), the other answers the next message once",
    async () => {
      const { whatsapp, db, a, b } = await start();
      const replies = (): string[] => whatsapp.sentTo(USER).map((m) => m.body);

      // One message, delivered to both replicas at once (Meta's retry that a load balancer sent elsewhere).
      const first = dm("first question");
      expect(await Promise.all([deliver(a, first), deliver(b, first)])).toEqual([200, 200]);
      await whatsapp.waitFor(() => replies().length >= 1 && replies(), "the reply to the first message");
      // And again to each, one after the other (a late retry).
      expect(await deliver(b, first)).toBe(200);
      expect(await deliver(a, first)).toBe(200);
      // A barrier: the next message's reply comes after anything the first one caused.
      expect(await deliver(a, dm("second question"))).toBe(200);
      await whatsapp.waitFor(() => replies().some((r) => r.includes("second question")), "the reply to the second message");
      expect(replies()).toEqual([expect.stringContaining("first question"), expect.stringContaining("second question")]);
      expect(await storedUserTexts(db)).toEqual(["first question", "second question"]);

      // Replica A (it took the second message) dies; B goes on.
      await a.kill();
      const survivor = b;
      const third = dm("third question");
      expect(await deliver(survivor, third)).toBe(200);
      await whatsapp.waitFor(() => replies().some((r) => r.includes("third question")), "the reply to the third message");
      // Redelivered to the survivor: still one answer (a barrier message follows).
      expect(await deliver(survivor, third)).toBe(200);
      expect(await deliver(survivor, dm("fourth question"))).toBe(200);
      await whatsapp.waitFor(() => replies().some((r) => r.includes("fourth question")), "the reply to the fourth message");
      expect(replies()).toHaveLength(4);
      expect(await storedUserTexts(db)).toEqual(["first question", "second question", "third question", "fourth question"]);
    },
    TEST_TIMEOUT,
  );
});

/**
 * A connection platform: every replica connects to the fake Discord gateway, which sends each
 * event to every session of the token, as Discord does. With the receiver lease (adapters call
 * `AdapterEvents.receiverLease`), one replica holds `receiver:discord` and connects, the other
 * stands by; without it both receive and the inbound claim keeps the answer single. Either way
 * the same message is answered once, and after the receiving replica is killed the other one
 * receives (within the lease time) and answers once.
 */
describe("replicas on PostgreSQL with a connection platform (Discord)", () => {
  it(
    "a DM delivered to every connected replica is stored and answered once; after the receiving replica is killed, the other receives and answers once",
    async () => {
      const discord = await startFakeDiscordServer({ everySession: true });
      closers.push(() => discord.close());
      const provider = await model();
      const { url, db } = await freshDatabase();
      const adapters = { discord: { apiUrl: discord.url, access: "open" } };
      const env = { OPENAI_BASE_URL: provider.url, DISCORD_BOT_TOKEN: discord.token };
      const a = await replica("replica-a", url, adapters, env);
      const b = await replica("replica-b", url, adapters, env);
      const replies = (): string[] => discord.sentTo(DISCORD_IDS.dm).map((m) => m.content);
      await discord.waitFor(() => discord.connected, "a gateway connection");
      const dm = (id: string, content: string): Record<string, unknown> => discordMessage("message-dm", { id, content });
      /** The replica that receives: the holder of `receiver:discord`, or A when the adapters receive without the lease. */
      const receiving = async (): Promise<GatewayProcess> => {
        const holder = (await db.getLease("receiver:discord"))?.holder ?? "";
        return holder.startsWith("replica-b@") ? b : a;
      };
      // Both replicas connected (each session gets every event), or one holds the receiver lease and the other stands by.
      await waitFor(async () => discord.connectedSessions === ((await db.getLease("receiver:discord")) === null ? 2 : 1), {
        what: "both replicas connected, or one receiving under the lease",
        describe: () => `${discord.connectedSessions} sessions connected`,
      });
      discord.pushMessage(dm("1500000000000000101", "first question"));
      await discord.waitFor(() => replies().some((r) => r.includes("first question")), "the reply to the first message");
      // A barrier: the second message's reply comes after anything the first one caused.
      discord.pushMessage(dm("1500000000000000102", "second question"));
      await discord.waitFor(() => replies().some((r) => r.includes("second question")), "the reply to the second message");
      expect(replies()).toEqual([expect.stringContaining("first question"), expect.stringContaining("second question")]);
      expect(await storedUserTexts(db)).toEqual(["first question", "second question"]);

      const killed = await receiving();
      const connectedBefore = discord.connectedSessions;
      await killed.kill();
      // The fake sees the killed replica's connection close (until then it still counts it, and a
      // message pushed meanwhile would go to the dead connection only).
      await discord.waitFor(() => discord.connectedSessions < connectedBefore, "the killed replica's gateway connection to close");
      // The other replica receives (it was connected already, or it connects once the lease has run out).
      await discord.waitFor(() => discord.connectedSessions === 1, "the surviving replica's gateway connection", LEASE_TTL_SECONDS * 1000 + 20_000);
      discord.pushMessage(dm("1500000000000000103", "third question"));
      await discord.waitFor(() => replies().some((r) => r.includes("third question")), "the reply to the third message");
      discord.pushMessage(dm("1500000000000000104", "fourth question"));
      await discord.waitFor(() => replies().some((r) => r.includes("fourth question")), "the reply to the fourth message");
      expect(replies()).toHaveLength(4);
      expect(await storedUserTexts(db)).toEqual(["first question", "second question", "third question", "fourth question"]);
    },
    TEST_TIMEOUT,
  );
});
