/**
 * The Matrix adapter in-process: the REAL matrix-js-sdk against the local fake homeserver
 * (test/fakes/matrix), a real SQLite store (the sync token in its `meta` table) and the real
 * GatewayRunner.
 */
import { expect, it } from "vitest";
import type { AnswerRules } from "../../../src/adapters/chat/index.js";
import { MATRIX_MESSAGE_LIMIT, MatrixAdapter, type MatrixAdapterOptions } from "../../../src/adapters/matrix/index.js";
import type { AgentTurnInput } from "../../../src/agents/index.js";
import { adapterStateInMeta, type ReceiverHandlers } from "../../../src/gateway/index.js";
import type { SessionDB } from "../../../src/store/index.js";
import { MATRIX_IDS, matrixFixture, startFakeMatrixHomeserver, type FakeMatrixHomeserver } from "../../fakes/matrix/fake-matrix-homeserver.js";
import { TEST_RULES, adapterHarness, lastUserText, recordingLogger, tempDatabase, useCleanups, type Logged } from "../adapter-harness.js";

const { bot: BOT, alice: ALICE, bob: BOB, dm: DM, general: GENERAL, secret: SECRET } = MATRIX_IDS;

const cleanups = useCleanups();

async function database(): Promise<SessionDB> {
  const db = await tempDatabase(cleanups, "matrix");
  cleanups.push(() => db.close());
  return db;
}

interface Setup {
  fake?: FakeMatrixHomeserver;
  db?: SessionDB;
  answer?: (input: AgentTurnInput) => string;
  rules?: Partial<AnswerRules>;
  adapter?: Partial<MatrixAdapterOptions>;
}

async function setup(options: Setup = {}) {
  let fake = options.fake;
  if (fake === undefined) {
    const started = await startFakeMatrixHomeserver({ maxPollMs: 1_000 });
    cleanups.push(() => started.close());
    fake = started;
  }
  const homeserver = fake;
  const h = await adapterHarness(cleanups, {
    name: "matrix",
    db: options.db ?? (await database()),
    answer: options.answer,
    create: ({ db, logger }) =>
      MatrixAdapter.create({
        homeserverUrl: homeserver.url,
        accessToken: homeserver.token,
        rules: { ...TEST_RULES, ...options.rules },
        logger,
        state: adapterStateInMeta(db, "matrix"),
        pollTimeoutMs: 1_000,
        ...options.adapter,
      }),
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await h.stopRunner();
  };
  cleanups.push(stop);
  await h.runner.start();
  if (options.adapter?.accessToken === undefined) await fake.waitFor(() => connected(h.logger), "the startup line");
  return { ...h, fake, stop };
}

function connected(logger: { lines: Logged[] }): boolean {
  return logger.lines.some((l) => l.msg === `matrix adapter connected as ${BOT} (sync)`);
}

it("logs in with whoami and syncs; the history before the first start is not answered; a DM is answered as an HTML reply with typing around it", async () => {
  const fake = await startFakeMatrixHomeserver({ maxPollMs: 1_000 });
  cleanups.push(() => fake.close());
  fake.pushMessage(DM, ALICE, "an old message from before the bot ran");
  const { db, logger, agent } = await setup({ fake, answer: (input) => `**Hi** ${lastUserText(input)} <b>raw</b>` });
  expect(connected(logger)).toBe(true);
  expect(fake.calls.map((c) => `${c.method} ${c.path}`).slice(0, 2)).toEqual(["GET /account/whoami", `GET /user/${BOT}/account_data/m.direct`]);
  // A sync filter without presence, typing and receipts, up to 50 messages a room; the initial sync asks for 1.
  expect(fake.callsOf("POST", /\/filter$/u)[0]!.body).toMatchObject({
    presence: { not_types: ["*"] },
    room: { ephemeral: { not_types: ["*"] }, timeline: { limit: 50 } },
  });
  const initial = fake.calls.find((c) => c.path === "/sync")!;
  expect(initial.query.get("since")).toBeNull();
  expect(JSON.parse(initial.query.get("filter")!)).toMatchObject({ room: { timeline: { limit: 1 } } });
  const id = fake.pushMessage(DM, ALICE, "hello there");
  const reply = await fake.waitFor(() => fake.sentTo(DM)[0], "the reply");
  expect(reply.content).toEqual({
    msgtype: "m.text",
    body: "**Hi** hello there <b>raw</b>",
    format: "org.matrix.custom.html",
    formatted_body: "<strong>Hi</strong> hello there &lt;b&gt;raw&lt;/b&gt;",
    "m.mentions": { user_ids: [ALICE] },
    "m.relates_to": { "m.in_reply_to": { event_id: id } },
  });
  expect(agent.inputs.map(lastUserText)).toEqual(["hello there"]);
  const typing = await fake.waitFor(() => (fake.typing.length >= 2 ? fake.typing : null), "typing on and off");
  expect(typing.map((t) => [t.roomId, t.typing, t.timeout])).toEqual([
    [DM, true, 30_000],
    [DM, false, null],
  ]);
  const typingAt = fake.calls.findIndex((c) => c.path.startsWith(`/rooms/${DM}/typing/`));
  const sendAt = fake.calls.findIndex((c) => c.path.startsWith(`/rooms/${DM}/send/`));
  expect(typingAt).toBeLessThan(sendAt);
  const route = await db.getRoute(`agent:main:matrix:dm:${DM.replace(":", "%3A")}`);
  expect(route).not.toBeNull();
  const [stored] = await db.getMessages(route!.sessionId, { lastMessages: 10 });
  expect(stored).toMatchObject({ role: "user", platformMessageId: id });
  expect(await db.getMeta(`adapter_state:matrix:sync_token:${BOT}`)).toBe(String(fake.position));
  expect(logger.text()).not.toContain(fake.token);
  // No SDK noise at warn or error on a clean run.
  expect(logger.lines.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
});

it("groups: unaddressed messages, notices and the bot's own are ignored and not stored; mentions, replies to the bot and its threads are answered", async () => {
  const { fake, db, agent } = await setup();
  fake.pushMessage(GENERAL, ALICE, "nobody asked the bot");
  fake.pushMessage(GENERAL, BOB, { msgtype: "m.notice", body: "Threadline: a notice from another bot" });
  const mention = fake.pushMessage(GENERAL, ALICE, { body: "what is up?", "m.mentions": { user_ids: [BOT] } });
  const first = await fake.waitFor(() => fake.sentTo(GENERAL)[0], "the reply to the mention");
  expect(first.content["body"]).toBe("You said: what is up?");
  // A reply to the bot's message needs no mention (the fallback is stripped).
  const reply = fake.pushMessage(GENERAL, BOB, {
    body: `> <${BOT}> You said: what is up?\n\nand then?`,
    "m.relates_to": { "m.in_reply_to": { event_id: first.eventId } },
  });
  await fake.waitFor(() => fake.sentTo(GENERAL)[1], "the reply to the reply");
  // A thread the bot posted in: its later messages need no mention, and it is one session.
  const root = fake.pushMessage(GENERAL, ALICE, "a topic worth a thread");
  const inThread = (sender: string, body: string, extra: Record<string, unknown> = {}) =>
    fake.pushMessage(GENERAL, sender, {
      body,
      ...extra,
      "m.relates_to": { rel_type: "m.thread", event_id: root, is_falling_back: true, "m.in_reply_to": { event_id: root } },
    });
  inThread(ALICE, "Threadline: thoughts?");
  await fake.waitFor(() => fake.sentTo(GENERAL)[2], "the first thread reply");
  const bobsTurn = inThread(BOB, "and mine?");
  const last = await fake.waitFor(() => fake.sentTo(GENERAL)[3], "the second thread reply");
  expect(last.content["m.relates_to"]).toEqual({ rel_type: "m.thread", event_id: root, is_falling_back: true, "m.in_reply_to": { event_id: bobsTurn } });
  // Thread messages are shared: the agent is given them with their senders (issue 26, point 5).
  expect(agent.inputs.map(lastUserText)).toEqual(["what is up?", "and then?", "[Alice] thoughts?", "[Bob] and mine?"]);
  const keys = (await db.listRoutes()).items.map((r) => r.key).sort();
  const room = GENERAL.replace(":", "%3A");
  expect(keys).toEqual(
    [
      `agent:main:matrix:group:${room}:${ALICE.replace(":", "%3A")}`,
      `agent:main:matrix:group:${room}:${BOB.replace(":", "%3A")}`,
      `agent:main:matrix:thread:${room}:${root.replace(":", "%3A")}`,
    ].sort(),
  );
  expect(await db.searchMessages("nobody")).toHaveLength(0);
  expect(await db.searchMessages("notice")).toHaveLength(0);
  expect(mention).not.toBe(reply);
});

it("restart: the next run continues from the saved sync token, answers what was sent meanwhile, and recognises replies to the bot's earlier messages", async () => {
  const fake = await startFakeMatrixHomeserver({ maxPollMs: 1_000 });
  cleanups.push(() => fake.close());
  const db = await database();
  const first = await setup({ fake, db });
  fake.pushMessage(GENERAL, ALICE, "Threadline: before the restart");
  const before = await fake.waitFor(() => fake.sentTo(GENERAL)[0], "the first reply");
  await first.stop();
  const saved = await db.getMeta(`adapter_state:matrix:sync_token:${BOT}`);
  expect(saved).toBe(String(fake.position));
  fake.pushMessage(DM, ALICE, "while the gateway was down");
  fake.pushMessage(GENERAL, BOB, { body: "replying to an old bot message", "m.relates_to": { "m.in_reply_to": { event_id: before.eventId } } });
  const syncsBefore = fake.syncSinces().length;
  const second = await setup({ fake, db });
  await fake.waitFor(() => fake.sentTo(DM)[0], "the reply to what was sent meanwhile");
  await fake.waitFor(() => fake.sentTo(GENERAL)[1], "the reply to the reply");
  expect(fake.syncSinces()[syncsBefore]).toBe(saved);
  expect(second.agent.inputs.map(lastUserText).sort()).toEqual(["replying to an old bot message", "while the gateway was down"]);
  // The bot's earlier message was looked up to see who sent it.
  expect(fake.callsOf("GET", /^\/rooms\/[^/]+\/event\//u).map((c) => [c.path, c.status])).toEqual([[`/rooms/${GENERAL}/event/${before.eventId}`, 200]]);
  // The room facts came from GET /rooms/{id}/state (the SDK had no state for them after the restart).
  expect(fake.callsOf("GET", /^\/rooms\/[^/]+\/state$/u).length).toBeGreaterThan(0);
  expect(first.agent.inputs.map(lastUserText)).toEqual(["before the restart"]);
  expect(fake.sent).toHaveLength(3);
});

it("a failing /sync is retried by the SDK: the outage and the recovery are logged, and the message sent meanwhile is answered once", async () => {
  const { fake, logger, agent } = await setup();
  fake.failNext("GET", /^\/sync$/u, { status: 502, body: { errcode: "M_UNKNOWN", error: "Bad gateway" } }, 2);
  await fake.waitFor(() => logger.lines.find((l) => l.msg.startsWith("matrix: syncing with the homeserver failed")), "the outage warning");
  fake.pushMessage(DM, ALICE, "sent during the outage");
  await fake.waitFor(() => fake.sentTo(DM)[0], "the reply after the outage", 30_000);
  await fake.waitFor(() => logger.lines.find((l) => l.msg === "matrix: homeserver reachable again; syncing resumed"), "the recovery line");
  expect(agent.inputs.map(lastUserText)).toEqual(["sent during the outage"]);
  expect(logger.lines.filter((l) => l.msg.startsWith("matrix: syncing with the homeserver failed")).map((l) => l.level)).toEqual(["warn"]);
}, 60_000);

it("invites: joined from allowed users (a DM invite makes a DM room); refused from others and with autoJoin false", async () => {
  const first = await setup({ rules: { allowedUsers: [ALICE] } });
  const { fake, logger, agent } = first;
  fake.invite("!from-bob:example.org", BOB, { name: "Bob's room" });
  fake.invite("!from-alice:example.org", ALICE, { isDirect: true });
  await fake.waitFor(() => fake.joined("!from-alice:example.org"), "the join");
  expect(fake.joined("!from-bob:example.org")).toBe(false);
  expect(
    logger.lines.some((l) => l.msg === `matrix: invited to !from-bob:example.org by ${BOB}, who is not in adapters.matrix.allowedUsers; not joining`),
  ).toBe(true);
  // Invited as a DM: answered without a mention.
  const id = fake.pushMessage("!from-alice:example.org", ALICE, "hi in our new DM");
  const reply = await fake.waitFor(() => fake.sentTo("!from-alice:example.org")[0], "the DM reply");
  expect(reply.content["m.relates_to"]).toEqual({ "m.in_reply_to": { event_id: id } });
  expect(agent.inputs.map(lastUserText)).toEqual(["hi in our new DM"]);
  // Recorded in m.direct (next to the seeded DM), so it stays a DM after a restart.
  expect(fake.accountData("m.direct")).toEqual({ [ALICE]: [DM, "!from-alice:example.org"] });
  // A third member joins: the room is a group now, whatever m.direct says (issue 27): only a mention is answered.
  fake.pushEvent("!from-alice:example.org", {
    type: "m.room.member",
    sender: "@zoe:example.org",
    state_key: "@zoe:example.org",
    content: { membership: "join" },
  });
  fake.pushMessage("!from-alice:example.org", ALICE, "not for the bot now");
  fake.pushMessage("!from-alice:example.org", ALICE, { body: "Threadline: and now?", "m.mentions": { user_ids: [BOT] } });
  await fake.waitFor(() => fake.sentTo("!from-alice:example.org")[1], "the group reply");
  expect(agent.inputs.map(lastUserText)).toEqual(["hi in our new DM", "and now?"]);

  await first.stop();
  const other = await setup({ fake, adapter: { autoJoin: false } });
  fake.invite("!ignored:example.org", ALICE);
  await fake.waitFor(() => other.logger.lines.find((l) => l.msg.includes("!ignored:example.org")), "the ignored invite");
  expect(other.logger.lines.find((l) => l.msg.includes("!ignored:example.org"))!.msg).toBe(
    `matrix: invited to !ignored:example.org by ${ALICE}; not joining (adapters.matrix.autoJoin is false)`,
  );
  expect(fake.joined("!ignored:example.org")).toBe(false);
});

it("an encrypted room gets one warning; its encrypted events are ignored and nothing is sent there; everything else goes on", async () => {
  const fake = await startFakeMatrixHomeserver({ maxPollMs: 1_000 });
  cleanups.push(() => fake.close());
  fake.createRoom(SECRET, { members: [ALICE, BOT, BOB], encrypted: true });
  const { logger, adapter, agent } = await setup({ fake });
  const warning = `matrix: room ${SECRET} is end-to-end encrypted; Threadline cannot read or send there (encrypted rooms are not supported) — use an unencrypted room`;
  expect(logger.lines.filter((l) => l.msg === warning).map((l) => l.level)).toEqual(["warn"]);
  const encrypted = matrixFixture<{ type: string; content: Record<string, unknown> }>("event-encrypted");
  fake.pushEvent(SECRET, { type: encrypted.type, sender: ALICE, content: encrypted.content });
  fake.pushEvent(SECRET, { type: encrypted.type, sender: BOB, content: encrypted.content });
  fake.pushMessage(DM, ALICE, "still there?");
  await fake.waitFor(() => fake.sentTo(DM)[0], "the DM reply");
  expect(fake.sentTo(SECRET)).toEqual([]);
  expect(agent.inputs.map(lastUserText)).toEqual(["still there?"]);
  expect(logger.lines.filter((l) => l.msg === warning)).toHaveLength(1);
  await expect(adapter.send({ platform: "matrix", chatType: "group", chatId: SECRET }, { text: "hi", kind: "reply", inReplyTo: [] })).rejects.toThrow(
    `matrix: room ${SECRET} is end-to-end encrypted; Threadline does not send there (encrypted rooms are not supported)`,
  );
});

it("sends: a 429 is waited out, a lost response is retried with the same transaction id (one event), a refused send is a clear error; long replies split", async () => {
  const long = Array.from({ length: 50 }, (_, i) => `Paragraph ${i}: ${"words ".repeat(80).trim()}.`).join("\n\n");
  const { fake, logger, failures, adapter } = await setup({ answer: (input) => (lastUserText(input) === "long" ? long : `You said: ${lastUserText(input)}`) });
  fake.failNext("PUT", /^\/rooms\/[^/]+\/send\//u, { status: 429, body: { ...matrixFixture("error-limit-exceeded"), retry_after_ms: 300 } });
  fake.pushMessage(DM, ALICE, "one");
  await fake.waitFor(() => fake.sentTo(DM)[0], "the reply after the 429");
  expect(fake.callsOf("PUT", /^\/rooms\/[^/]+\/send\//u).map((c) => c.status)).toEqual([429, 200]);
  expect(logger.lines.some((l) => l.level === "warn" && l.msg === "matrix: rate limited by the homeserver; sending again in 300 ms")).toBe(true);

  fake.failNext("PUT", /^\/rooms\/[^/]+\/send\//u, { status: 502, body: { errcode: "M_UNKNOWN", error: "Bad gateway" }, apply: true });
  fake.pushMessage(DM, ALICE, "two");
  await fake.waitFor(() => fake.sentTo(DM)[1], "the reply after the lost response");
  await fake.waitFor(() => fake.callsOf("PUT", /^\/rooms\/[^/]+\/send\//u).filter((c) => c.status === 200).length === 2, "the retry");
  const attempts = fake.callsOf("PUT", /^\/rooms\/[^/]+\/send\//u).slice(2);
  expect(attempts.map((c) => c.status)).toEqual([502, 200]);
  expect(new Set(attempts.map((c) => c.path)).size).toBe(1);
  expect(fake.sentTo(DM)).toHaveLength(2);

  fake.pushMessage(DM, ALICE, "long");
  await fake.waitFor(() => fake.sentTo(DM).some((c) => String(c.content["body"]).endsWith(`Paragraph 49: ${"words ".repeat(80).trim()}.`)), "the last chunk");
  const chunks = fake.sentTo(DM).slice(2);
  expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(Buffer.byteLength(long) / MATRIX_MESSAGE_LIMIT));
  expect(chunks.map((c) => c.content["body"]).join("\n\n")).toBe(long);
  for (const chunk of chunks) expect(Buffer.byteLength(chunk.content["body"] as string)).toBeLessThanOrEqual(MATRIX_MESSAGE_LIMIT);

  fake.failNext("PUT", /^\/rooms\/[^/]+\/send\//u, { status: 403, body: matrixFixture("error-forbidden") });
  fake.pushMessage(DM, ALICE, "three");
  await fake.waitFor(() => failures.length > 0, "the send failure");
  expect(failures).toEqual(["matrix/reply"]);
  const failed = logger.lines.find((l) => l.msg === "sending to the platform failed")!;
  expect(failed.obj["key"]).toBe(`agent:main:matrix:dm:${DM.replace(":", "%3A")}`);
  expect((failed.obj["err"] as Error).message).toBe(
    `matrix: the homeserver refused the message to room ${DM} (403 M_FORBIDDEN: You do not have permission to send the event.) — the bot is not in the room (it was kicked, or left) or may not post there`,
  );
  fake.kick(GENERAL, ALICE);
  await fake.waitFor(() => !fake.joined(GENERAL), "the kick");
  await expect(adapter.send({ platform: "matrix", chatType: "group", chatId: GENERAL }, { text: "anyone?", kind: "reply", inReplyTo: [] })).rejects.toThrow(
    /^matrix: the homeserver refused the message to room !general:example\.org \(403 M_FORBIDDEN: User @threadline:example\.org not in room !general:example\.org\)/u,
  );
  expect(logger.text()).not.toContain(fake.token);
});

it("handoffs: createThread posts a root notice and answers in that thread; editMessage sends an m.replace", async () => {
  const { fake, adapter, agent } = await setup();
  const thread = await adapter.createThread({ platform: "matrix", chatType: "group", chatId: GENERAL, chatName: "General" }, "Planning the release");
  const [root] = fake.sentTo(GENERAL);
  expect(root!.content).toEqual({ msgtype: "m.notice", body: "🧵 Planning the release", "m.mentions": {} });
  expect(thread).toEqual({ platform: "matrix", chatType: "thread", chatId: GENERAL, chatName: "General", threadId: root!.eventId, parentChatId: GENERAL });
  // The bot's own thread: answered without a mention.
  fake.pushMessage(GENERAL, BOB, {
    body: "count me in",
    "m.relates_to": { rel_type: "m.thread", event_id: root!.eventId, is_falling_back: true, "m.in_reply_to": { event_id: root!.eventId } },
  });
  const reply = await fake.waitFor(() => fake.sentTo(GENERAL)[1], "the reply in the thread");
  // The handoff's thread is shared: the agent is given the message with its sender (issue 26, point 5).
  expect(agent.inputs.map(lastUserText)).toEqual(["[Bob] count me in"]);
  await adapter.editMessage(thread, reply.eventId, "edited text");
  expect(fake.sentTo(GENERAL)[2]!.content).toMatchObject({ body: "* edited text", "m.relates_to": { rel_type: "m.replace", event_id: reply.eventId } });
});

it("a refused token or a user id that does not match stops connect with a clear error and no token", async () => {
  const fake = await startFakeMatrixHomeserver({ maxPollMs: 1_000 });
  cleanups.push(() => fake.close());
  const db = await database();
  const wrong = "syt_d3Jvbmc_notTheRightTokenValue_000000";
  const refused = await MatrixAdapter.create({
    homeserverUrl: fake.url,
    accessToken: wrong,
    logger: recordingLogger(),
    state: adapterStateInMeta(db, "matrix"),
  });
  const error = await refused
    .connect(async () => ({ status: "accepted", sessionKey: "x" }))
    .then(
      () => null,
      (e: unknown) => e as Error,
    );
  expect(error?.message).toBe(
    `matrix: the homeserver at ${fake.url} refused the access token (M_UNKNOWN_TOKEN): check adapters.matrix.accessToken or MATRIX_ACCESS_TOKEN (a token stops working when its session is logged out; log in as the bot again for a new one)`,
  );
  expect(JSON.stringify(error, Object.getOwnPropertyNames(error)) + String(error?.stack)).not.toContain(wrong);
  await refused.disconnect();
  const mismatch = await MatrixAdapter.create({ homeserverUrl: fake.url, accessToken: fake.token, userId: "@other:example.org", logger: recordingLogger() });
  await expect(mismatch.connect(async () => ({ status: "accepted", sessionKey: "x" }))).rejects.toThrow(
    `matrix: the access token belongs to ${BOT}, not to adapters.matrix.userId @other:example.org: use the bot account's token, or correct (or remove) adapters.matrix.userId`,
  );
  await mismatch.disconnect();
  const notMatrix = await MatrixAdapter.create({ homeserverUrl: `${fake.url}/not-here`, accessToken: fake.token, logger: recordingLogger() });
  await expect(notMatrix.connect(async () => ({ status: "accepted", sessionKey: "x" }))).rejects.toThrow(/does not answer the Matrix Client-Server API .*404/u);
  await notMatrix.disconnect();
});

it("a standby replica sends without a sync loop; under a receiver lease it syncs only while it holds the lease, and syncs again after a stop", async () => {
  const fake = await startFakeMatrixHomeserver({ maxPollMs: 1_000 });
  cleanups.push(() => fake.close());
  const db = await database();
  const logger = recordingLogger();
  const adapter = await MatrixAdapter.create({
    homeserverUrl: fake.url,
    accessToken: fake.token,
    logger,
    state: adapterStateInMeta(db, "matrix"),
    pollTimeoutMs: 1_000,
  });
  cleanups.push(() => adapter.disconnect());
  expect(adapter.exclusiveReceiver).toBe(true);
  const taken: string[] = [];
  let held: ReceiverHandlers | null = null;
  const leases: string[] = [];
  await adapter.connect(
    async (message) => {
      taken.push(message.text);
      return { status: "accepted", sessionKey: "k" };
    },
    {
      deliveryFailed: () => {},
      receiverLease: (name) => {
        leases.push(name);
        return {
          hold: (handlers) => {
            held = handlers;
            return () => handlers.stop();
          },
        };
      },
    },
  );
  expect(leases).toEqual(["matrix"]);
  // Not holding the lease: no login, no sync, but sending works.
  const sent = await adapter.send(
    { platform: "matrix", chatType: "dm", chatId: DM, userId: ALICE },
    { text: "from the standby", kind: "reply", inReplyTo: [] },
  );
  expect(sent.messageId).toBe(fake.sentTo(DM)[0]!.eventId);
  expect(fake.callsOf("GET", /^\/sync$/u)).toEqual([]);
  expect(fake.callsOf("GET", /^\/account\/whoami$/u)).toEqual([]);
  // The lease is taken: it logs in and syncs.
  await held!.start();
  await fake.waitFor(() => connected(logger), "the startup line");
  fake.pushMessage(DM, ALICE, "first");
  await fake.waitFor(() => taken[0], "the first message");
  // The lease is lost, then taken again: what was sent meanwhile arrives after the restart.
  await held!.stop();
  fake.pushMessage(DM, ALICE, "second");
  await held!.start();
  await fake.waitFor(() => taken[1], "the message sent while stopped");
  expect(taken).toEqual(["first", "second"]);
});
