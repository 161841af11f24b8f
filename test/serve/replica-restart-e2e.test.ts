/**
 * A replica on PostgreSQL killed mid-turn and started again with the same `replicaId` (what a
 * service manager does after a crash): it takes its dead predecessor's session lease over at
 * once. The lease time is an hour here, so an answer at all means it did not wait for the
 * lease to run out. The gateway is the built bin (`npm run build` first).
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { dropSchema, TEST_PG_URL } from "../contract/postgres-server.js";
import { fakeTextReply, startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";
import { cleanupProcesses, makeHome, postWebhook, spawnGateway, startCallbackServer, withDatabaseAt, type GatewayProcess } from "./gateway-process.js";
import { contentText } from "./model-dialogue.js";

const SECRET = "e2e-restart-secret-0123456789abcdef";
const FAKE_KEY = "sk-fake-restart-key";

// The gateways stop first; the fake model and the schema go after them (onTestFinished runs after afterEach).
afterEach(cleanupProcesses);

describe("threadline serve on PostgreSQL: a replica restarted after a crash", () => {
  it("takes its dead predecessor's session lease over at once, resumes the interrupted turn, then answers the next message", async () => {
    let hang = true;
    const fake = await startFakeOpenAiServer({
      apiKey: FAKE_KEY,
      title: null,
      script: (request) => {
        const users = (request.body?.messages ?? []).filter((m) => m.role === "user");
        const last = contentText(users.at(-1)?.content);
        return last.includes("SLOW") && hang ? { ...fakeTextReply("never"), delayMs: 600_000 } : null;
      },
    });
    onTestFinished(() => fake.close());
    const callback = await startCallbackServer(SECRET);
    const schema = `tl_restart_${randomBytes(5).toString("hex")}`;
    onTestFinished(() => dropSchema(schema));
    const target = `${TEST_PG_URL}?schema=${schema}`;
    const home = await makeHome({
      database: target,
      gateway: { replicaId: "gw-restart", leaseTtlSeconds: 3600 },
      adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
      titles: { enabled: false },
    });
    const start = (): Promise<GatewayProcess> =>
      spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
    let gateway = await start();
    const post = async (text: string, messageId: string): Promise<void> => {
      const posted = await postWebhook(gateway.url, SECRET, { chatId: "c1", userId: "u1", text, messageId });
      expect(posted.status).toBeLessThan(300);
    };

    await post("hello", "r1");
    expect((await callback.replyTo("r1")).body.text).toBe("Reply to: hello");
    await post("a SLOW question", "r2");
    await waitFor(() => fake.chatRequests().some((r) => JSON.stringify(r.body).includes("SLOW")) || undefined, { what: "the slow model request" });
    const held = await withDatabaseAt(target, async (db) => {
      const [summary] = (await db.listSessions({ limit: 1 })).items;
      const key = (await db.getSession(summary!.id))!.sessionKey!;
      return { key, lease: await db.getLease(key) };
    });
    // The killed process holds the lease for the next hour.
    expect(held.lease).toMatchObject({ holder: `gw-restart@${hostname().replace(/[^\w.-]/gu, "-")}#${gateway.child.pid}` });
    expect(held.lease!.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3000);
    expect(await gateway.signal("SIGKILL")).toMatchObject({ signal: "SIGKILL" });

    hang = false;
    gateway = await start();
    await post("after the restart", "r3");
    // The interrupted turn is run again from the stored transcript, then the new message.
    expect((await callback.replyTo("r2")).body.text).toBe("Reply to: a SLOW question");
    expect((await callback.replyTo("r3")).body.text).toBe("Reply to: after the restart");
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });

    await withDatabaseAt(target, async (db) => {
      const [session] = (await db.listSessions({ limit: 10 })).items;
      const texts = (await db.getMessages(session!.id)).map((m) => `${m.role}: ${String(m.content)}`);
      expect(texts).toEqual([
        "user: hello",
        "assistant: Reply to: hello",
        "user: a SLOW question",
        "assistant: Reply to: a SLOW question",
        "user: after the restart",
        "assistant: Reply to: after the restart",
      ]);
      // The new process gave the lease it took over back when it stopped.
      expect(await db.getLease(held.key)).toBeNull();
    });
  }, 90_000);
});
