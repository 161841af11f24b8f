/**
 * End to end: `threadline serve` as a child process with the Signal adapter, talking to the
 * local fake signal-cli REST API (test/fakes/signal: HTTP and the receive WebSocket, or
 * normal-mode polling) through `adapters.signal.apiUrl`, with the fake OpenAI-compatible
 * provider as the model. Nothing leaves 127.0.0.1.
 */
import { readFile } from "node:fs/promises";
import { hashIdentifier } from "../../src/gateway/session-context.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  SIGNAL_IDS,
  signalFixture,
  signalMessage,
  startFakeSignalServer,
  type FakeSignalOptions,
  type FakeSignalServer,
} from "../fakes/signal/fake-signal-server.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, runServe, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { imageBytesSent } from "./media-model-requests.js";
import { contentText, dialogue, requestFor, requestMatching } from "./model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-signal-e2e";
const { bot: BOT, alice: ALICE, aliceUuid: ALICE_UUID, bob: BOB, bobUuid: BOB_UUID, group: GROUP } = SIGNAL_IDS;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(options: FakeSignalOptions = {}): Promise<{ signal: FakeSignalServer; model: FakeOpenAiServer }> {
  const signal = await startFakeSignalServer(options);
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => signal.close(),
    () => model.close(),
  );
  return { signal, model };
}

function setupHome(signal: FakeSignalServer, extra: Record<string, unknown> = {}): Promise<string> {
  return makeHome({
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, signal: { apiUrl: signal.url, number: BOT, ...openUnlessRestricted(extra) } },
  });
}

/**
 * These tests rely on everyone being answered (`access: open`), unless a test restricts who
 * may talk (`allowedUsers` or its own `access`).
 */
function openUnlessRestricted(extra: Record<string, unknown>): Record<string, unknown> {
  return "allowedUsers" in extra || "access" in extra ? extra : { access: "open", ...extra };
}

function env(model: FakeOpenAiServer): Record<string, string> {
  return { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" };
}

async function started(gateway: GatewayProcess, mode: "websocket" | "polling" = "websocket"): Promise<Record<string, unknown>> {
  return waitFor(
    () =>
      gateway
        .logLines()
        .find((l) => l["platform"] === "signal" && l["bot"] === BOT && l["mode"] === mode && String(l["msg"]).startsWith("signal adapter connected")),
    {
      what: "the signal startup line",
      describe: () => gateway.output(),
    },
  );
}

/** A DM from Alice (with her number, or with it hidden: `hidden`). */
function dm(timestamp: number, message: string, hidden = false): Record<string, unknown> {
  return signalMessage(hidden ? "receive-dm-hidden-number" : "receive-dm", { timestamp, message });
}

/** A group message mentioning the bot, from Alice or Bob. */
function mention(timestamp: number, body: string, from: "alice" | "bob" = "alice"): Record<string, unknown> {
  const sender = from === "bob" ? { number: BOB, uuid: BOB_UUID, name: "Bob" } : undefined;
  return signalMessage("receive-group-mention", { timestamp, message: `\uFFFC ${body}`, ...(sender ? { sender } : {}) });
}

/** The log lines the Signal adapter wrote. */
function adapterLines(gateway: GatewayProcess): string {
  return gateway
    .logLines()
    .filter((l) => l["platform"] === "signal")
    .map((l) => JSON.stringify(l))
    .join("\n");
}

describe("threadline serve with Signal", () => {
  it(
    "starts with its number and mode; a DM keeps its context across turns, also once the sender's number is hidden; replies quote the message; typing and read receipts",
    async () => {
      const { signal, model } = await fakes();
      const home = await setupHome(signal);
      const gateway = await spawnGateway({ home, env: env(model) });
      const line = await started(gateway);
      expect(line["msg"]).toBe(`signal adapter connected as ${BOT} (websocket)`);
      await signal.waitFor(() => signal.connected, "the receive WebSocket");
      signal.push(dm(1767225600000, "my name is Zed"));
      await signal.waitFor(() => signal.sentTo(ALICE)[0], "the first reply");
      // The same person, now without their number: the UUID alone still finds the session.
      signal.push(dm(1767225660000, "what is my name?", true));
      await signal.waitFor(() => signal.sentTo(ALICE_UUID)[0], "the second reply");
      expect(dialogue(await requestFor(model, "what is my name?"))).toEqual([
        ["user", "my name is Zed"],
        ["assistant", "Reply to: my name is Zed"],
        ["user", "what is my name?"],
      ]);
      expect(signal.sent.map(({ timestamp: _t, ...m }) => m)).toEqual([
        { recipients: [ALICE], message: "Reply to: my name is Zed", text_mode: "normal", quote_timestamp: 1767225600000, quote_author: ALICE },
        { recipients: [ALICE_UUID], message: "Reply to: what is my name?", text_mode: "normal", quote_timestamp: 1767225660000, quote_author: ALICE_UUID },
      ]);
      await signal.waitFor(() => signal.typing.filter((t) => !t.on).length >= 2, "the typing indicators hidden");
      expect(signal.typing).toEqual(
        expect.arrayContaining([
          { on: true, recipient: ALICE },
          { on: false, recipient: ALICE },
          { on: true, recipient: ALICE_UUID },
          { on: false, recipient: ALICE_UUID },
        ]),
      );
      await signal.waitFor(() => signal.receipts.length >= 2, "the read receipts");
      expect(signal.receipts).toEqual([
        { recipient: ALICE, receipt_type: "read", timestamp: 1767225600000 },
        { recipient: ALICE_UUID, receipt_type: "read", timestamp: 1767225660000 },
      ]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.listRoutes()).items.map((r) => r.key)).toEqual([`agent:main:signal:dm:${ALICE}`]);
      });
      // The adapter never logs the people it talks to.
      expect(adapterLines(gateway)).not.toContain(ALICE);
      expect(adapterLines(gateway)).not.toContain(ALICE_UUID);
    },
    TEST_TIMEOUT,
  );

  it(
    "groups: no mention → ignored and not stored; mentions and a quote reply to the bot are answered, one session per person, in the group",
    async () => {
      const { signal, model } = await fakes();
      const home = await setupHome(signal);
      const gateway = await spawnGateway({ home, env: env(model) });
      await started(gateway);
      await signal.waitFor(() => signal.connected, "the receive WebSocket");
      signal.push(signalMessage("receive-group-text", { timestamp: 1767225700000, message: "nobody asked the bot" }));
      signal.push(mention(1767225710000, "alice here"));
      signal.push(mention(1767225720000, "bob here", "bob"));
      await signal.waitFor(() => signal.sentTo(GROUP).length === 2, "two group replies");
      const first = signal.sentTo(GROUP).find((m) => m.quote_timestamp === 1767225710000)!;
      // Alice replies to the bot's answer by quoting it: no mention needed.
      signal.push(
        signalMessage("receive-group-quote", {
          timestamp: 1767225730000,
          message: "and chapter two?",
          data: { quote: { id: first.timestamp, author: BOT, authorNumber: BOT, authorUuid: SIGNAL_IDS.botUuid, text: first.message, attachments: [] } },
        }),
      );
      await signal.waitFor(() => signal.sentTo(GROUP).length === 3, "the reply to the quote");
      expect(
        signal
          .sentTo(GROUP)
          .map((m) => [m.message, m.quote_author])
          .sort(),
      ).toEqual(
        [
          ["Reply to: alice here", ALICE],
          ["Reply to: bob here", BOB],
          ["Reply to: and chapter two?", ALICE],
        ].sort(),
      );
      expect(dialogue(await requestFor(model, "and chapter two?")).map(([, t]) => t)).toEqual(["alice here", "Reply to: alice here", "and chapter two?"]);
      expect(model.chatRequests().some((r) => dialogue(r).some(([, t]) => t.includes("nobody asked")))).toBe(false);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const keys = (await db.listRoutes()).items.map((r) => r.key).sort();
        expect(keys).toEqual([`agent:main:signal:group:${GROUP}:${ALICE}`, `agent:main:signal:group:${GROUP}:${BOB}`].sort());
        expect(await db.searchMessages("nobody")).toHaveLength(0);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "attachments reach the model as media; a long message is read in full from its text attachment; the WebSocket reconnects after a drop",
    async () => {
      const { signal, model } = await fakes();
      const home = await setupHome(signal);
      const gateway = await spawnGateway({ home, env: env(model) });
      await started(gateway);
      await signal.waitFor(() => signal.connected, "the receive WebSocket");
      const jpeg = await readFile(new URL("../media/fixtures/pixel.jpg", import.meta.url));
      const ogg = await readFile(new URL("../media/fixtures/voice.ogg", import.meta.url));
      signal.setAttachment("P0xLq3sEXAMPLEid.jpg", jpeg, "image/jpeg");
      signal.setAttachment("VNaud1oEXAMPLEid.aac", ogg, "audio/ogg");
      signal.push(signalMessage("receive-attachments", { timestamp: 1767225900000 }));
      const withMedia = await requestMatching(model, (t) => t.startsWith("what is on this photo?"), "the message with attachments");
      // Both attachments were fetched from the REST API: the photo went to the model as an image;
      // without provider.transcriptionModel the voice note is kept untranscribed and the chat is told.
      expect(dialogue(withMedia).at(-1)![1]).toContain("what is on this photo?");
      expect(imageBytesSent(model).map((i) => i.bytes.equals(jpeg))).toEqual([true]);
      await signal.waitFor(() => signal.sentTo(ALICE)[1], "the notice and the reply");
      expect(signal.sentTo(ALICE)[0]!.message).toMatch(/^Voice notes are not enabled here/u);
      const full = `${"Long story. ".repeat(200)}The end.`;
      signal.setAttachment("L0ngTextEXAMPLEid.txt", full);
      signal.push(signalMessage("receive-long-text", { timestamp: 1767225960000, message: full.slice(0, 2000) }));
      await requestFor(model, full);
      // The echoed reply is over Signal's 2,000 bytes: two messages, the first quoting the question.
      await signal.waitFor(() => signal.sentTo(ALICE).some((m) => m.message.endsWith("The end.")), "the long reply");
      const long = signal.sentTo(ALICE).slice(2);
      expect(long).toHaveLength(2);
      for (const part of long) expect(Buffer.byteLength(part.message, "utf8")).toBeLessThanOrEqual(2000);
      expect(long.map((m) => m.message).join(" ")).toBe(`Reply to: ${full}`);
      expect(long.map((m) => m.quote_timestamp)).toEqual([1767225960000, null]);

      signal.dropConnection();
      await waitFor(() => gateway.logLines().find((l) => String(l["msg"]).startsWith("signal: receive WebSocket reconnected")), {
        what: "the reconnect",
        describe: () => gateway.output(),
      });
      expect(gateway.logLines().some((l) => String(l["msg"]).startsWith("signal: receive WebSocket connection lost"))).toBe(true);
      expect(signal.connections).toBe(2);
      signal.push(dm(1767226000000, "after the reconnect"));
      await signal.waitFor(() => signal.sentTo(ALICE)[4], "the reply after the reconnect");
      expect(signal.sentTo(ALICE)[4]!.message).toBe("Reply to: after the reconnect");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "a send the REST API refuses (untrusted identity) is logged with the session key's hash and counted in /metrics; the reply stays stored",
    async () => {
      const { signal, model } = await fakes();
      signal.failNext("POST", /^\/v2\/send$/u, { status: 400, body: signalFixture("error-400-untrusted-identity") });
      const home = await setupHome(signal);
      const gateway = await spawnGateway({ home, env: env(model) });
      await started(gateway);
      await signal.waitFor(() => signal.connected, "the receive WebSocket");
      signal.push(dm(1767226100000, "are you there?"));
      const failed = await waitFor(() => gateway.logLines().find((l) => l["msg"] === "sending to the platform failed"), {
        what: "the send failure",
        describe: () => gateway.output(),
      });
      // The key holds the person's phone number: the log has its hash.
      expect(failed).toMatchObject({ platform: "signal", keyHash: hashIdentifier(`agent:main:signal:dm:${ALICE}`), kind: "reply" });
      const err = failed["err"] as { message: string };
      expect(err.message).toContain("the signal-cli REST API answered 400 to POST /v2/send: Unable to complete request due to untrusted recipient keys");
      expect(err.message).toContain("safety number changed");
      const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      expect(metrics).toContain('threadline_send_failures_total{platform="signal",kind="reply"} 1');
      expect(signal.sent).toEqual([]);
      // The next message goes through again.
      signal.push(dm(1767226110000, "and now?"));
      await signal.waitFor(() => signal.sentTo(ALICE)[0], "the next reply");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const route = (await db.listRoutes()).items[0]!;
        const stored = (await db.getMessages(route.sessionId)).map((m) => [m.role, contentText(m.content)]);
        expect(stored.slice(0, 2)).toEqual([
          ["user", "are you there?"],
          ["assistant", "Reply to: are you there?"],
        ]);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "SIGKILL during a turn: after the restart the reply reaches the chat exactly once",
    async () => {
      const { signal, model } = await fakes();
      let slow = true;
      model.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 60_000 } : null));
      const home = await setupHome(signal);
      const first = await spawnGateway({ home, env: env(model) });
      await started(first);
      await signal.waitFor(() => signal.connected, "the receive WebSocket");
      signal.push(dm(1767226200000, "a slow question"));
      await requestFor(model, "a slow question");
      expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
      expect(signal.sent).toEqual([]);

      slow = false;
      const restartedAt = model.requests.length;
      const second = await spawnGateway({ home, env: env(model) });
      await requestFor(model, "a slow question", restartedAt);
      await signal.waitFor(() => signal.sentTo(ALICE)[0], "the resumed reply");
      await started(second);
      await signal.waitFor(() => signal.connected, "the receive WebSocket");
      // The same message handed out again is no second turn.
      signal.push(dm(1767226200000, "a slow question"));
      signal.push(dm(1767226210000, "a later question"));
      await signal.waitFor(() => signal.sentTo(ALICE)[1], "the reply to the later question");
      // The later question is admitted after the redelivery (one chat's messages are admitted in
      // arrival order) and runs after any turn the redelivery could have started: its reply is the barrier.
      expect(signal.sentTo(ALICE).map((m) => [m.message, m.quote_timestamp, m.quote_author])).toEqual([
        ["Reply to: a slow question", 1767226200000, ALICE],
        ["Reply to: a later question", 1767226210000, ALICE],
      ]);
      expect(await second.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "polling mode against a REST API in normal mode: messages are received with GET /v1/receive and answered",
    async () => {
      const { signal, model } = await fakes({ mode: "normal" });
      const home = await setupHome(signal, { mode: "polling" });
      const gateway = await spawnGateway({ home, env: env(model) });
      await started(gateway, "polling");
      signal.push(dm(1767226300000, "hello by polling"));
      await signal.waitFor(() => signal.sentTo(ALICE)[0], "the reply");
      expect(signal.sentTo(ALICE)[0]).toMatchObject({ message: "Reply to: hello by polling", quote_timestamp: 1767226300000 });
      const polls = signal.callsOf("GET", /^\/v1\/receive\//u);
      expect(polls.length).toBeGreaterThan(0);
      expect(polls.every((c) => c.path === `/v1/receive/${BOT}` && c.query.get("timeout") === "5")).toBe(true);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses to start when the REST API runs another mode than configured, or when apiUrl or number is missing",
    async () => {
      const { signal: normal, model } = await fakes({ mode: "normal" });
      const mismatch = await runServe({ home: await setupHome(normal), env: env(model) });
      expect(mismatch.code).not.toBe(0);
      expect(mismatch.stdout + mismatch.stderr).toContain(
        `signal: the signal-cli REST API at ${normal.url} runs in normal mode, where messages are received by polling; set adapters.signal.mode: polling, or start the REST API with MODE=json-rpc`,
      );
      const { signal: jsonRpc } = await fakes();
      const other = await runServe({ home: await setupHome(jsonRpc, { mode: "polling" }), env: env(model) });
      expect(other.code).not.toBe(0);
      expect(other.stdout + other.stderr).toContain(
        "runs in json-rpc mode, where messages arrive over a WebSocket and cannot be polled; set adapters.signal.mode: websocket (the default)",
      );
      const missing = await runServe({
        home: await makeHome({ adapters: { apiServer: { enabled: false }, signal: { apiUrl: jsonRpc.url } } }),
        env: env(model),
      });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("adapters.signal.number: missing: set it to the bot's Signal number");
    },
    TEST_TIMEOUT,
  );
});
