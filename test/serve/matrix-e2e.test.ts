/**
 * End to end: `threadline serve` as a child process with the Matrix adapter (the real
 * matrix-js-sdk), talking to the local fake homeserver (test/fakes/matrix) through
 * `adapters.matrix.homeserverUrl`, with the fake OpenAI-compatible provider as the model.
 * Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MATRIX_IDS, matrixFixture, startFakeMatrixHomeserver, type FakeMatrixHomeserver } from "../fakes/matrix/fake-matrix-homeserver.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, runServe, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-matrix-e2e";
const { bot: BOT, alice: ALICE, bob: BOB, dm: DM, general: GENERAL, secret: SECRET } = MATRIX_IDS;
/** A room id or user id as a session key component (`:` escaped). */
const k = (id: string): string => id.replaceAll(":", "%3A");

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<{ matrix: FakeMatrixHomeserver; model: FakeOpenAiServer }> {
  const matrix = await startFakeMatrixHomeserver({ maxPollMs: 2_000 });
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => matrix.close(),
    () => model.close(),
  );
  return { matrix, model };
}

function setupHome(matrix: FakeMatrixHomeserver, extra: Record<string, unknown> = {}): Promise<string> {
  return makeHome({
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, matrix: { homeserverUrl: matrix.url, ...openUnlessRestricted(extra) } },
  });
}

/**
 * These tests rely on everyone being answered (`access: open`), unless a test restricts who
 * may talk (`allowedUsers` or its own `access`).
 */
function openUnlessRestricted(extra: Record<string, unknown>): Record<string, unknown> {
  return "allowedUsers" in extra || "access" in extra ? extra : { access: "open", ...extra };
}

function env(matrix: FakeMatrixHomeserver, model: FakeOpenAiServer): Record<string, string> {
  return { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", MATRIX_ACCESS_TOKEN: matrix.token };
}

async function started(gateway: GatewayProcess): Promise<void> {
  await waitFor(
    () =>
      gateway
        .logLines()
        .find((l) => l["platform"] === "matrix" && l["bot"] === BOT && l["mode"] === "sync" && l["msg"] === `matrix adapter connected as ${BOT} (sync)`),
    {
      what: "the matrix startup line",
      describe: () => gateway.output(),
    },
  );
}

function bodies(matrix: FakeMatrixHomeserver, roomId: string): string[] {
  return matrix.sentTo(roomId).map((s) => String(s.content["body"]));
}

function expectNoToken(gateway: GatewayProcess, matrix: FakeMatrixHomeserver): void {
  expect(gateway.output()).not.toContain(matrix.token);
}

describe("threadline serve with Matrix", () => {
  it(
    "starts with the adapter and its identity; the history before the first start is not answered; a DM keeps its context, replies are HTML replies; the token never appears",
    async () => {
      const { matrix, model } = await fakes();
      matrix.pushMessage(DM, ALICE, "an old message nobody should answer");
      const home = await setupHome(matrix);
      const gateway = await spawnGateway({ home, env: env(matrix, model) });
      await started(gateway);
      const first = matrix.pushMessage(DM, ALICE, "my name is **Zed**");
      await matrix.waitFor(() => matrix.sentTo(DM)[0], "the first reply");
      const second = matrix.pushMessage(DM, ALICE, "what is my name?");
      await matrix.waitFor(() => matrix.sentTo(DM)[1], "the second reply");
      expect(dialogue(await requestFor(model, "what is my name?"))).toEqual([
        ["user", "my name is **Zed**"],
        ["assistant", "Reply to: my name is **Zed**"],
        ["user", "what is my name?"],
      ]);
      expect(matrix.sentTo(DM).map((s) => s.content)).toEqual([
        {
          msgtype: "m.text",
          body: "Reply to: my name is **Zed**",
          format: "org.matrix.custom.html",
          formatted_body: "Reply to: my name is <strong>Zed</strong>",
          "m.mentions": { user_ids: [ALICE] },
          "m.relates_to": { "m.in_reply_to": { event_id: first } },
        },
        {
          msgtype: "m.text",
          body: "Reply to: what is my name?",
          format: "org.matrix.custom.html",
          formatted_body: "Reply to: what is my name?",
          "m.mentions": { user_ids: [ALICE] },
          "m.relates_to": { "m.in_reply_to": { event_id: second } },
        },
      ]);
      expect(model.chatRequests().some((r) => dialogue(r).some(([, t]) => t.includes("nobody should answer")))).toBe(false);
      expect(matrix.typing.filter((t) => t.roomId === DM && t.typing).length).toBeGreaterThanOrEqual(2);
      // Typing is turned off after each reply (not awaited by the send, so looked for).
      await matrix.waitFor(() => matrix.typing.filter((t) => t.roomId === DM && !t.typing).length === 2, "typing turned off twice");
      const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      expect(metrics).not.toContain(matrix.token);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.listRoutes()).items.map((r) => r.key)).toEqual([`agent:main:matrix:dm:${k(DM)}`]);
        expect(await db.searchMessages("nobody")).toHaveLength(0);
      });
      expectNoToken(gateway, matrix);
    },
    TEST_TIMEOUT,
  );

  it(
    "group room: no mention → ignored and not stored; mentions from two people → one session each; a thread is one shared session",
    async () => {
      const { matrix, model } = await fakes();
      const home = await setupHome(matrix);
      const gateway = await spawnGateway({ home, env: env(matrix, model) });
      await started(gateway);
      matrix.pushMessage(GENERAL, ALICE, "nobody asked the bot");
      matrix.pushMessage(GENERAL, ALICE, { body: "alice here", "m.mentions": { user_ids: [BOT] } });
      matrix.pushMessage(GENERAL, BOB, "Threadline: bob here");
      await matrix.waitFor(() => matrix.sentTo(GENERAL).length === 2, "two room replies");
      const root = matrix.pushMessage(GENERAL, ALICE, "a topic for a thread");
      const thread = (sender: string, body: string): string =>
        matrix.pushMessage(GENERAL, sender, {
          body,
          "m.relates_to": { rel_type: "m.thread", event_id: root, is_falling_back: true, "m.in_reply_to": { event_id: root } },
        });
      thread(ALICE, "Threadline: thread from alice");
      await matrix.waitFor(() => matrix.sentTo(GENERAL).length === 3, "the first thread reply");
      const bobs = thread(BOB, "thread from bob");
      await matrix.waitFor(() => matrix.sentTo(GENERAL).length === 4, "the second thread reply");
      expect(bodies(matrix, GENERAL).slice(0, 2).sort()).toEqual(["Reply to: alice here", "Reply to: bob here"]);
      expect(matrix.sentTo(GENERAL)[3]!.content["m.relates_to"]).toEqual({
        rel_type: "m.thread",
        event_id: root,
        is_falling_back: true,
        "m.in_reply_to": { event_id: bobs },
      });
      // The thread is shared: each message of a turn reaches the model with its sender (issue 26, point 5).
      expect(dialogue(await requestFor(model, "[Bob] thread from bob")).map(([, t]) => t)).toEqual([
        "thread from alice",
        "Reply to: [Alice] thread from alice",
        "[Bob] thread from bob",
      ]);
      expect(model.chatRequests().some((r) => dialogue(r).some(([, t]) => t.includes("nobody asked") || t.includes("a topic for")))).toBe(false);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const keys = (await db.listRoutes()).items.map((r) => r.key).sort();
        expect(keys).toEqual(
          [
            `agent:main:matrix:group:${k(GENERAL)}:${k(ALICE)}`,
            `agent:main:matrix:group:${k(GENERAL)}:${k(BOB)}`,
            `agent:main:matrix:thread:${k(GENERAL)}:${k(root)}`,
          ].sort(),
        );
        expect(await db.searchMessages("nobody")).toHaveLength(0);
      });
      expectNoToken(gateway, matrix);
    },
    TEST_TIMEOUT,
  );

  it(
    "an invite is accepted and the new DM answered; with autoJoin: false an invite is left alone",
    async () => {
      const { matrix, model } = await fakes();
      const home = await setupHome(matrix);
      const gateway = await spawnGateway({ home, env: env(matrix, model) });
      await started(gateway);
      matrix.invite("!new-dm:example.org", BOB, { isDirect: true });
      await matrix.waitFor(() => matrix.joined("!new-dm:example.org"), "the join");
      matrix.pushMessage("!new-dm:example.org", BOB, "hello from the new DM");
      await matrix.waitFor(() => matrix.sentTo("!new-dm:example.org")[0], "the reply in the new DM");
      expect(bodies(matrix, "!new-dm:example.org")).toEqual(["Reply to: hello from the new DM"]);
      expect(gateway.logLines().some((l) => l["msg"] === `matrix: joined !new-dm:example.org (invited by ${BOB})`)).toBe(true);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });

      const quietHome = await setupHome(matrix, { autoJoin: false });
      const quiet = await spawnGateway({ home: quietHome, env: env(matrix, model) });
      await started(quiet);
      matrix.invite("!not-joined:example.org", ALICE);
      await waitFor(() => quiet.logLines().find((l) => String(l["msg"]).includes("!not-joined:example.org")), {
        what: "the ignored invite",
        describe: () => quiet.output(),
      });
      expect(quiet.logLines().find((l) => String(l["msg"]).includes("!not-joined:example.org"))!["msg"]).toBe(
        `matrix: invited to !not-joined:example.org by ${ALICE}; not joining (adapters.matrix.autoJoin is false)`,
      );
      expect(matrix.joined("!not-joined:example.org")).toBe(false);
      expect(matrix.callsOf("POST", /not-joined/u)).toEqual([]);
      expect(await quiet.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "an encrypted room: one warning at startup, its encrypted messages ignored, no crash, other rooms answered",
    async () => {
      const { matrix, model } = await fakes();
      matrix.createRoom(SECRET, { members: [ALICE, BOT, BOB], encrypted: true });
      const home = await setupHome(matrix);
      const gateway = await spawnGateway({ home, env: env(matrix, model) });
      await started(gateway);
      const warning = `matrix: room ${SECRET} is end-to-end encrypted; Threadline cannot read or send there (encrypted rooms are not supported) — use an unencrypted room`;
      await waitFor(() => gateway.logLines().find((l) => l["msg"] === warning), { what: "the encrypted-room warning", describe: () => gateway.output() });
      const encrypted = matrixFixture<{ type: string; content: Record<string, unknown> }>("event-encrypted");
      matrix.pushEvent(SECRET, { type: encrypted.type, sender: ALICE, content: encrypted.content });
      matrix.pushMessage(DM, ALICE, "are you still alive?");
      await matrix.waitFor(() => matrix.sentTo(DM)[0], "the DM reply");
      expect(matrix.sentTo(SECRET)).toEqual([]);
      expect(
        gateway
          .logLines()
          .filter((l) => l["msg"] === warning)
          .map((l) => l["level"]),
      ).toEqual([40]);
      expect(gateway.exitStatus).toBeNull();
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, matrix);
    },
    TEST_TIMEOUT,
  );

  it(
    "a refused send (the bot was kicked: 403 M_FORBIDDEN) is logged with the session key and counted; the reply stays stored",
    async () => {
      const { matrix, model } = await fakes();
      let release!: () => void;
      const kicked = new Promise<void>((resolve) => (release = resolve));
      model.setScript(async (request) => {
        if (request.kind === "chat") await kicked;
        return null;
      });
      const home = await setupHome(matrix);
      const gateway = await spawnGateway({ home, env: env(matrix, model) });
      await started(gateway);
      matrix.pushMessage(GENERAL, ALICE, "Threadline: answer after my kick");
      await requestFor(model, "answer after my kick");
      matrix.kick(GENERAL, BOB);
      release();
      const failed = await waitFor(() => gateway.logLines().find((l) => l["msg"] === "sending to the platform failed"), {
        what: "the send failure",
        describe: () => gateway.output(),
      });
      expect(failed["key"]).toBe(`agent:main:matrix:group:${k(GENERAL)}:${k(ALICE)}`);
      expect(failed["platform"]).toBe("matrix");
      expect((failed["err"] as { message: string }).message).toBe(
        `matrix: the homeserver refused the message to room ${GENERAL} (403 M_FORBIDDEN: User ${BOT} not in room ${GENERAL}) — the bot is not in the room (it was kicked, or left) or may not post there`,
      );
      const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      expect(metrics).toContain('threadline_send_failures_total{platform="matrix",kind="reply"} 1');
      expect(matrix.sentTo(GENERAL)).toEqual([]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const route = await db.getRoute(`agent:main:matrix:group:${k(GENERAL)}:${k(ALICE)}`);
        const messages = await db.getMessages(route!.sessionId, { lastMessages: 10 });
        expect(messages.map((m) => [m.role, m.content])).toEqual([
          ["user", "answer after my kick"],
          ["assistant", "Reply to: answer after my kick"],
        ]);
      });
      expectNoToken(gateway, matrix);
    },
    TEST_TIMEOUT,
  );

  it(
    "SIGKILL during a turn: after the restart the reply reaches the room exactly once, and syncing continues from the saved token",
    async () => {
      const { matrix, model } = await fakes();
      let slow = true;
      model.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 60_000 } : null));
      const home = await setupHome(matrix);
      const first = await spawnGateway({ home, env: env(matrix, model) });
      await started(first);
      const question = matrix.pushMessage(DM, ALICE, "a slow question");
      await requestFor(model, "a slow question");
      expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
      expect(matrix.sentTo(DM)).toEqual([]);
      const saved = await withDatabase(home, (db) => db.getMeta(`adapter_state:matrix:sync_token:${BOT}`));
      expect(saved).not.toBeNull();

      slow = false;
      const restartedAt = model.requests.length;
      const syncsBefore = matrix.syncSinces().length;
      const second = await spawnGateway({ home, env: env(matrix, model) });
      await requestFor(model, "a slow question", restartedAt);
      await matrix.waitFor(() => matrix.sentTo(DM)[0], "the resumed reply");
      await started(second);
      expect(matrix.syncSinces()[syncsBefore]).toBe(saved);
      const later = matrix.pushMessage(DM, ALICE, "a later question");
      await matrix.waitFor(() => matrix.sentTo(DM)[1], "the reply to the later question");
      expect(await second.stop()).toEqual({ code: 0, signal: null });
      expect(
        matrix.sentTo(DM).map((s) => [s.content["body"], (s.content["m.relates_to"] as { "m.in_reply_to": { event_id: string } })["m.in_reply_to"].event_id]),
      ).toEqual([
        ["Reply to: a slow question", question],
        ["Reply to: a later question", later],
      ]);
      expect(model.chatRequests().filter((r) => dialogue(r).at(-1)?.[1] === "a later question")).toHaveLength(1);
      expectNoToken(first, matrix);
      expectNoToken(second, matrix);
    },
    TEST_TIMEOUT,
  );

  it(
    "messages sent while the gateway was stopped are answered after the restart (the sync token is kept in the database); nothing is answered twice",
    async () => {
      const { matrix, model } = await fakes();
      const home = await setupHome(matrix);
      const first = await spawnGateway({ home, env: env(matrix, model) });
      await started(first);
      matrix.pushMessage(DM, ALICE, "before the stop");
      await matrix.waitFor(() => matrix.sentTo(DM)[0], "the first reply");
      expect(await first.stop()).toEqual({ code: 0, signal: null });
      const saved = await withDatabase(home, (db) => db.getMeta(`adapter_state:matrix:sync_token:${BOT}`));
      expect(saved).toBe(String(matrix.position));

      matrix.pushMessage(DM, ALICE, "sent while you were away");
      matrix.pushMessage(GENERAL, BOB, "Threadline: me too, while you were away");
      const syncsBefore = matrix.syncSinces().length;
      const second = await spawnGateway({ home, env: env(matrix, model) });
      await started(second);
      await matrix.waitFor(() => matrix.sentTo(DM)[1] && matrix.sentTo(GENERAL)[0], "the replies to what was sent meanwhile");
      expect(matrix.syncSinces()[syncsBefore]).toBe(saved);
      expect(await second.stop()).toEqual({ code: 0, signal: null });
      expect(bodies(matrix, DM)).toEqual(["Reply to: before the stop", "Reply to: sent while you were away"]);
      expect(bodies(matrix, GENERAL)).toEqual(["Reply to: me too, while you were away"]);
      expect(model.chatRequests().filter((r) => dialogue(r).at(-1)?.[1] === "before the stop")).toHaveLength(1);
      expectNoToken(first, matrix);
      expectNoToken(second, matrix);
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses to start without a homeserver URL or token, naming the keys (exit 2); a refused token stops the start without printing it",
    async () => {
      const { matrix, model } = await fakes();
      const bare = await makeHome({ adapters: { apiServer: { enabled: false }, matrix: {} } });
      const missing = await runServe({ home: bare, env: { ...env(matrix, model), MATRIX_ACCESS_TOKEN: undefined } });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("adapters.matrix.homeserverUrl: missing: set the http(s) base URL of the bot account's homeserver");
      expect(missing.stderr).toContain("adapters.matrix.accessToken: missing: set it in the config file or in the MATRIX_ACCESS_TOKEN environment variable");
      const home = await setupHome(matrix);
      const wrong = "syt_d3Jvbmc_notTheRightTokenValue_000000";
      const refused = await runServe({ home, env: { ...env(matrix, model), MATRIX_ACCESS_TOKEN: wrong } });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr + refused.stdout).toContain(`matrix: the homeserver at ${matrix.url} refused the access token (M_UNKNOWN_TOKEN)`);
      expect(refused.stderr + refused.stdout).not.toContain(wrong);
    },
    TEST_TIMEOUT,
  );
});
