/**
 * End to end: ONE `threadline serve` child process configured for WhatsApp, Signal and Matrix
 * at once, each talking to its local fake (test/fakes/whatsapp: the Graph API, with signed
 * webhooks POSTed by the test; test/fakes/signal: the signal-cli REST API and its receive
 * WebSocket; test/fakes/matrix: a homeserver subset) through its base URL setting, with the
 * fake OpenAI-compatible provider as the model. The secrets come from the environment.
 * Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MATRIX_IDS, startFakeMatrixHomeserver, type FakeMatrixHomeserver } from "../fakes/matrix/fake-matrix-homeserver.js";
import { SIGNAL_IDS, signalMessage, startFakeSignalServer, type FakeSignalServer } from "../fakes/signal/fake-signal-server.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer, type FakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { postWhatsAppWebhook, whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-platforms-part2-e2e";
const APP_SECRET = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const VERIFY_TOKEN = "threadline-verify-part2";
const WHATSAPP_USER = "16505551234";

interface Fakes {
  whatsapp: FakeWhatsAppServer;
  signal: FakeSignalServer;
  matrix: FakeMatrixHomeserver;
  model: FakeOpenAiServer;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<Fakes> {
  const whatsapp = await startFakeWhatsAppServer();
  closers.push(() => whatsapp.close());
  const signal = await startFakeSignalServer();
  closers.push(() => signal.close());
  const matrix = await startFakeMatrixHomeserver({ maxPollMs: 2_000 });
  closers.push(() => matrix.close());
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(() => model.close());
  return { whatsapp, signal, matrix, model };
}

/** One DM sender per platform. */
function senders(gateway: GatewayProcess, { signal, matrix }: Fakes) {
  let signalTimestamp = 1767225600000;
  return {
    whatsapp: async (body: string): Promise<void> => {
      const payload = whatsappWebhook("webhook-text", { message: { from: WHATSAPP_USER, text: { body } }, contact: { wa_id: WHATSAPP_USER } });
      const answer = await postWhatsAppWebhook(`${gateway.url}/whatsapp/webhook`, payload, { appSecret: APP_SECRET });
      expect(answer.status).toBe(200);
    },
    signal: async (body: string): Promise<void> => {
      signalTimestamp += 60_000;
      signal.push(signalMessage("receive-dm", { timestamp: signalTimestamp, message: body }));
    },
    matrix: async (body: string): Promise<void> => {
      matrix.pushMessage(MATRIX_IDS.dm, MATRIX_IDS.alice, body);
    },
  };
}

function replies({ whatsapp, signal, matrix }: Fakes): { whatsapp: string[]; signal: string[]; matrix: string[] } {
  return {
    whatsapp: whatsapp.sentTo(WHATSAPP_USER).map((m) => m.body),
    signal: signal.sentTo(SIGNAL_IDS.alice).map((m) => m.message),
    matrix: matrix.sentTo(MATRIX_IDS.dm).map((e) => String(e.content["body"])),
  };
}

async function waitForReplies(f: Fakes, count: number, what: string): Promise<void> {
  await waitFor(
    () => {
      const now = replies(f);
      return now.whatsapp.length >= count && now.signal.length >= count && now.matrix.length >= count;
    },
    { what, timeoutMs: 30_000, describe: () => JSON.stringify(replies(f)) },
  );
}

describe("threadline serve with WhatsApp, Signal and Matrix at once", () => {
  it(
    "lists each adapter with its mode and identity; a DM on each platform keeps its own context; SIGTERM exits 0 without printing a secret",
    async () => {
      const f = await fakes();
      const home = await makeHome({
        titles: { enabled: false },
        adapters: {
          apiServer: { enabled: false },
          // The test relies on everyone being answered.
          whatsapp: { apiUrl: f.whatsapp.url, phoneNumberId: FAKE_PHONE_NUMBER_ID, access: "open" },
          signal: { apiUrl: f.signal.url, number: SIGNAL_IDS.bot, access: "open" },
          matrix: { homeserverUrl: f.matrix.url, access: "open" },
        },
      });
      const gateway = await spawnGateway({
        home,
        env: {
          OPENAI_BASE_URL: f.model.url,
          OPENAI_API_KEY: FAKE_KEY,
          THREADLINE_MODEL: "fake-model",
          WHATSAPP_ACCESS_TOKEN: f.whatsapp.accessToken,
          WHATSAPP_APP_SECRET: APP_SECRET,
          WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
          MATRIX_ACCESS_TOKEN: f.matrix.token,
        },
      });

      // 1. One startup line per adapter: its mode and who it is.
      for (const [platform, mode] of [
        ["whatsapp", "webhook"],
        ["signal", "websocket"],
        ["matrix", "sync"],
      ] as const) {
        const line = await waitFor(
          () =>
            gateway
              .logLines()
              .find((l) => l["platform"] === platform && l["mode"] === mode && String(l["msg"]).startsWith(`${platform} adapter connected as `)),
          {
            what: `the ${platform} startup line`,
            describe: () => gateway.output(),
          },
        );
        expect(line["msg"]).toBe(`${platform} adapter connected as ${String(line["bot"])} (${mode})`);
      }
      expect(gateway.logLines().find((l) => l["platform"] === "signal" && String(l["msg"]).startsWith("signal adapter connected"))?.["bot"]).toBe(
        SIGNAL_IDS.bot,
      );
      expect(gateway.logLines().find((l) => l["platform"] === "matrix" && String(l["msg"]).startsWith("matrix adapter connected"))?.["bot"]).toBe(
        MATRIX_IDS.bot,
      );
      await f.signal.waitFor(() => f.signal.connected, "the signal receive WebSocket");

      // 2. Two turns on each platform, each answered on its own platform with its own context.
      const send = senders(gateway, f);
      await Promise.all([send.whatsapp("my name is Wanda (whatsapp)"), send.signal("my name is Sid (signal)"), send.matrix("my name is Max (matrix)")]);
      await waitForReplies(f, 1, "the first reply on each platform");
      await Promise.all([send.whatsapp("what is my name? (whatsapp)"), send.signal("what is my name? (signal)"), send.matrix("what is my name? (matrix)")]);
      await waitForReplies(f, 2, "the second reply on each platform");
      for (const [platform, name] of [
        ["whatsapp", "Wanda"],
        ["signal", "Sid"],
        ["matrix", "Max"],
      ] as const) {
        expect(dialogue(await requestFor(f.model, `what is my name? (${platform})`))).toEqual([
          ["user", `my name is ${name} (${platform})`],
          ["assistant", `Reply to: my name is ${name} (${platform})`],
          ["user", `what is my name? (${platform})`],
        ]);
      }
      expect(replies(f)).toEqual({
        whatsapp: ["Reply to: my name is Wanda (whatsapp)", "Reply to: what is my name? (whatsapp)"],
        signal: ["Reply to: my name is Sid (signal)", "Reply to: what is my name? (signal)"],
        matrix: ["Reply to: my name is Max (matrix)", "Reply to: what is my name? (matrix)"],
      });

      const secrets = [f.whatsapp.accessToken, APP_SECRET, VERIFY_TOKEN, f.matrix.token];
      const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      for (const secret of secrets) expect(metrics).not.toContain(secret);

      // 3. A graceful stop; three sessions, each under its own platform's key.
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const routes = (await db.listRoutes()).items;
        expect(routes.map((r) => r.key).sort()).toEqual(
          [
            `agent:main:whatsapp:dm:${WHATSAPP_USER}`,
            `agent:main:signal:dm:${SIGNAL_IDS.alice}`,
            `agent:main:matrix:dm:${MATRIX_IDS.dm.replaceAll(":", "%3A")}`,
          ].sort(),
        );
        expect(new Set(routes.map((r) => r.sessionId)).size).toBe(3);
        expect((await db.listSessions()).items.map((s) => s.source).sort()).toEqual(["matrix", "signal", "whatsapp"]);
      });
      const output = gateway.output();
      expect(output).toContain("gateway stopped");
      for (const secret of secrets) expect(output).not.toContain(secret);
    },
    TEST_TIMEOUT,
  );
});
