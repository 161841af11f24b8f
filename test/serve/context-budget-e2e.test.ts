/**
 * The token budget through a real `threadline serve` (issue 28), on SQLite and PostgreSQL: the
 * fake model enforces a context window the way OpenAI does (a request over it gets 400
 * `context_length_exceeded`), counting each request with the model's tokenizer, and reports
 * `usage.prompt_tokens`. A conversation of long messages never sends a request over the
 * window; short messages are no longer cut at 40; a provider that counts more than we do
 * corrects later budgets; the startup log says which window is used. The gateway is the built
 * bin (`npm run build` first).
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { tokenCounterFor, type TokenCounter } from "../../src/context/token-count.js";
import type { ConversationMessage } from "../../src/store/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { startFakeOpenAiServer, type FakeOpenAiRequest, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import {
  cleanupProcesses,
  makeHome,
  postWebhook,
  spawnGateway,
  startCallbackServer,
  withDatabase,
  type CallbackServer,
  type GatewayProcess,
} from "./gateway-process.js";
import { contentText, dialogue } from "./model-dialogue.js";

const TEST_TIMEOUT = 180_000;
const SECRET = "e2e-context-budget-secret-0123456789";
const FAKE_KEY = "sk-fake-context-budget-key";
const MODEL = "gpt-4o-mini";

const fakes: FakeOpenAiServer[] = [];
const schemas: string[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** What the fake model measured of one request. */
interface Measured {
  tokens: number;
  refused: boolean;
}

/**
 * A fake model with a window of `window` tokens: it counts each request with the model's
 * tokenizer (messages, and the tools' JSON), times `factor` (a provider whose tokenizer
 * splits text into more tokens than the gateway's count), refuses a request over the window
 * as OpenAI does, and otherwise answers "ok <n>" with the prompt tokens it counted.
 */
async function windowedModel(window: number, factor = 1, summaries = false): Promise<{ fake: FakeOpenAiServer; measured: Map<number, Measured> }> {
  const counter: TokenCounter = await tokenCounterFor(MODEL);
  const measured = new Map<number, Measured>();
  let n = 0;
  const fake = await startFakeOpenAiServer({
    apiKey: FAKE_KEY,
    title: null,
    script: (request) => {
      if (request.kind !== "chat") return null;
      const messages = (request.body?.messages ?? []) as unknown as ConversationMessage[];
      const tools = request.body?.["tools"];
      const counted = counter.countMessages(messages) + (tools === undefined ? 0 : counter.count(JSON.stringify(tools)));
      const tokens = Math.ceil(counted * factor);
      const refused = tokens > window;
      measured.set(request.index, { tokens, refused });
      if (refused) {
        return {
          status: 400,
          json: {
            error: {
              message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
              type: "invalid_request_error",
              param: "messages",
              code: "context_length_exceeded",
            },
          },
        };
      }
      n += 1;
      const lastUser = [...messages].reverse().find((m) => m.role === "user");
      if (summaries && contentText(lastUser?.content ?? null).startsWith("Summarise our conversation so far")) {
        // A summary carries the facts (WORD-123) it was given, as a model's summary would.
        const facts = [...new Set(contentText(lastUser!.content).match(/\b[A-Z]+-\d+\b/gu) ?? [])];
        const content = `Facts: ${facts.join(", ") || "none"}`;
        return {
          json: {
            id: `chatcmpl-${n}`,
            object: "chat.completion",
            created: 0,
            model: MODEL,
            choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
            usage: { prompt_tokens: tokens, completion_tokens: 5, total_tokens: tokens + 5 },
          },
        };
      }
      return {
        json: {
          id: `chatcmpl-${n}`,
          object: "chat.completion",
          created: 0,
          model: MODEL,
          choices: [{ index: 0, message: { role: "assistant", content: `ok ${n}` }, finish_reason: "stop" }],
          usage: { prompt_tokens: tokens, completion_tokens: 2, total_tokens: tokens + 2 },
        },
      };
    },
  });
  fakes.push(fake);
  return { fake, measured };
}

interface Setup {
  gateway: GatewayProcess;
  callback: CallbackServer;
  home: string;
  send(text: string, messageId: string): Promise<CallbackServer["deliveries"][number]>;
}

async function setup(
  backend: "sqlite" | "postgres",
  fake: FakeOpenAiServer,
  provider: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Setup> {
  let database: Record<string, unknown> = {};
  if (backend === "postgres") {
    await requirePostgres();
    const schema = `tl_ctx_${randomBytes(5).toString("hex")}`;
    schemas.push(schema);
    database = { database: `${TEST_PG_URL}?schema=${schema}` };
  }
  const callback = await startCallbackServer(SECRET);
  const home = await makeHome({
    ...database,
    adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
    titles: { enabled: false },
    // The budget alone: automatic compression (on by default) is tested in compression-e2e.
    compression: { enabled: false },
    provider: { baseUrl: fake.url, apiKey: FAKE_KEY, model: MODEL, ...provider },
    ...extra,
  });
  const gateway = await spawnGateway({ home });
  const send: Setup["send"] = async (text, messageId) => {
    const posted = await postWebhook(gateway.url, SECRET, { chatId: "dm-ctx", userId: "u-ctx", userName: "Ann", text, messageId });
    expect(posted.status).toBeLessThan(300);
    return callback.replyTo(messageId);
  };
  return { gateway, callback, home, send };
}

/** `count` words of filler text, distinct per `tag`. */
function words(tag: string, count: number): string {
  return Array.from({ length: count }, (_v, i) => `${tag}${i % 50}`).join(" ");
}

function systemText(request: FakeOpenAiRequest): string {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === "system")
    .map((m) => contentText(m.content))
    .join("\n");
}

for (const backend of ["sqlite", "postgres"] as const) {
  describe(`threadline serve: the context budget (issue 28, ${backend})`, () => {
    it(
      "a conversation of long messages never sends a request over the model's window, and a message longer than the window is still answered",
      async () => {
        const window = 4096;
        const { fake, measured } = await windowedModel(window);
        const { gateway, send } = await setup(backend, fake, { contextWindow: window });
        // Each message is about 800 tokens: the old window of 40 messages would have sent them all.
        for (let i = 0; i < 12; i++) {
          const reply = await send(`fact ${i}: ${words(`w${i}x`, 200)}`, `long-${i}`);
          expect(reply.body.kind, `turn ${i}: ${reply.body.text}`).toBe("reply");
        }
        // One message larger than the whole window: cut in the middle with a marker, never refused.
        const huge = await send(`HUGE-START ${words("h", 9000)} HUGE-END`, "huge");
        expect(huge.body.kind, String(huge.body.text)).toBe("reply");

        const chats = fake.chatRequests();
        expect(chats.length).toBe(13);
        for (const request of chats) {
          const m = measured.get(request.index)!;
          expect(m.refused, `request ${request.index}: ${m.tokens} tokens`).toBe(false);
          expect(m.tokens).toBeLessThanOrEqual(window);
        }
        // The window filled up: older messages were left out, and the model was told so.
        const last = chats[11]!;
        expect(dialogue(last).at(-1)?.[1]).toMatch(/^fact 11: /u);
        expect(dialogue(last).some(([, text]) => text.startsWith("fact 0: "))).toBe(false);
        expect(systemText(last)).toMatch(/\d+ earlier messages of this conversation are not shown/u);
        // The huge message went alone, cut.
        const cut = dialogue(chats[12]!);
        expect(cut).toHaveLength(1);
        expect(cut[0]![1]).toMatch(/^HUGE-START [\s\S]*part of this message was cut[\s\S]* HUGE-END$/u);
        // The startup log said which window and where it came from.
        expect(gateway.output()).toContain(`context window: ${window} tokens for ${MODEL} (from the configuration)`);
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      },
      TEST_TIMEOUT,
    );

    it(
      "with automatic compression (the default), no request of any kind goes over the window, and an early fact reaches a late request through the summaries",
      async () => {
        const window = 4096;
        const { fake, measured } = await windowedModel(window, 1, true);
        const { gateway, send, callback } = await setup(backend, fake, { contextWindow: window }, { compression: { enabled: true } });
        const notices = (): string[] => callback.deliveries.map((d) => String(d.body.text)).filter((t) => t.startsWith("Context compressed"));
        expect((await send(`remember the launch code ZEBRA-42. ${words("z", 60)}`, "c-0")).body.kind).toBe("reply");
        for (let i = 1; i < 80 && notices().length < 2; i++) {
          const reply = await send(`fact ${i}: ${words(`v${i}q`, 60)}`, `c-${i}`);
          expect(reply.body.kind, `turn ${i}: ${reply.body.text}`).toBe("reply");
        }
        expect(notices().length).toBe(2);
        const last = await send("what was the launch code?", "c-last");
        expect(last.body.kind).toBe("reply");
        // Turns, the agent's memory turns before each compression, and the summaries: none over the window.
        for (const request of fake.chatRequests()) {
          const m = measured.get(request.index)!;
          expect(m.refused, `request ${request.index}: ${m.tokens} tokens`).toBe(false);
        }
        // The last request starts from the second summary; the fact reaches it (kept verbatim in the
        // protected head, protectFirstN, or folded into the summaries).
        const final = fake.chatRequests().findLast((request) => dialogue(request).at(-1)?.[1] === "what was the launch code?")!;
        expect(dialogue(final)[0]![1]).toMatch(/^\[Summary of the earlier conversation \(session \S+\)\]\n/u);
        expect(dialogue(final).some(([, text]) => text.includes("ZEBRA-42"))).toBe(true);
        expect(measured.get(final.index)!.tokens).toBeLessThanOrEqual(window);
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      },
      TEST_TIMEOUT,
    );

    it(
      "short messages are no longer cut at 40: the 31st exchange still sees the first fact",
      async () => {
        const { fake, measured } = await windowedModel(128_000);
        const { gateway, send, home } = await setup(backend, fake, {});
        let sessionId = "";
        for (let i = 0; i < 31; i++) {
          const reply = await send(`fact ${i}: the code word is word${i}`, `short-${i}`);
          expect(reply.body.kind).toBe("reply");
          sessionId = reply.body.sessionId!;
        }
        const last = fake.chatRequests().at(-1)!;
        const said = dialogue(last);
        expect(said).toHaveLength(61);
        expect(said[0]).toEqual(["user", "fact 0: the code word is word0"]);
        expect(systemText(last)).not.toMatch(/not shown/u);
        expect(measured.get(last.index)!.refused).toBe(false);
        // The window came from the table of well-known models.
        expect(gateway.output()).toContain(`context window: 128000 tokens for ${MODEL} (from the table of well-known models)`);
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
        await withDatabase(home, async () => {});
        expect(sessionId).not.toBe("");
      },
      TEST_TIMEOUT,
    );

    it(
      "a provider that counts more tokens than the gateway corrects later budgets, and gateway.historyLimit still caps the messages",
      async () => {
        const window = 4096;
        // The provider's tokenizer yields 1.6 times the gateway's count.
        const { fake, measured } = await windowedModel(window, 1.6);
        const { gateway, send } = await setup(backend, fake, { contextWindow: window });
        // A short first turn fits even uncorrected; the provider reports its count.
        expect((await send("hello there", "cal-0")).body.kind).toBe("reply");
        for (let i = 1; i < 10; i++) {
          const reply = await send(`fact ${i}: ${words(`c${i}y`, 150)}`, `cal-${i}`);
          expect(reply.body.kind, `turn ${i}: ${reply.body.text}`).toBe("reply");
        }
        for (const request of fake.chatRequests()) expect(measured.get(request.index)!.refused, `request ${request.index}`).toBe(false);
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });

        // historyLimit: an extra cap, in whole turns.
        const capped = await windowedModel(128_000);
        const second = await setup(backend, capped.fake, {}, { gateway: { historyLimit: 6 } });
        for (let i = 0; i < 8; i++) expect((await second.send(`short ${i}`, `cap-${i}`)).body.kind).toBe("reply");
        const said = dialogue(capped.fake.chatRequests().at(-1)!);
        // The newest turn (1 message) plus two older exchanges: 5 messages, never half a turn.
        expect(said.map(([, text]) => text)).toEqual(["short 5", "ok 6", "short 6", "ok 7", "short 7"]);
        expect(await second.gateway.stop()).toEqual({ code: 0, signal: null });
      },
      TEST_TIMEOUT,
    );
  });
}

describe("threadline serve: the default window is logged as a warning", () => {
  it(
    "an unknown model without provider.contextWindow gets 8192 tokens, and the log says to set it",
    async () => {
      const { fake } = await windowedModel(128_000);
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({
        adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
        titles: { enabled: false },
        provider: { baseUrl: fake.url, apiKey: FAKE_KEY, model: "my-finetune" },
      });
      const gateway = await spawnGateway({ home });
      const line = gateway.logLines().find((l) => String(l["msg"]).startsWith("context window:"));
      expect(line).toMatchObject({ level: 40, model: "my-finetune", contextWindow: 8192, source: "default" });
      expect(String(line!["msg"])).toContain("set provider.contextWindow");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );
});
