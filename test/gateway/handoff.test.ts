/**
 * Cross-platform handoff, in process: `requestHandoff` (the terminal side) against a
 * `GatewayRunner` with `LocalAdapter`s (the gateway side, `processHandoffs`), on both
 * backends. Covers the thread path (an adapter with `createThread`), the home-channel
 * path, refusals, the timeout (a late gateway does not run it), gateway-side failures
 * (no adapter, a failing thread, a failing summary turn) and `SessionRouter.bindKeyToSession`.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import { AgentError, EchoAgent, type Agent, type AgentTurnInput } from "../../src/agents/index.js";
import {
  GatewayRunner,
  HandoffError,
  requestHandoff,
  SessionRouter,
  type HandoffOutcome,
  type HomeChannels,
  type SessionSource,
} from "../../src/gateway/index.js";
import { handoffNotice } from "../../src/gateway/handoff-worker.js";
import type { SessionDB } from "../../src/store/index.js";
import { checkHandoffResult, type CheckedHandoffResult } from "../../src/store/handoff-input.js";
import { Sql, withDefaultUser } from "../../src/store/postgres/postgres-connection.js";
import * as pgHandoffs from "../../src/store/postgres/postgres-handoffs.js";
import { SqliteConnection } from "../../src/store/sqlite/sqlite-connection.js";
import * as sqliteHandoffs from "../../src/store/sqlite/sqlite-handoffs.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend, type TestDatabase } from "./backends.js";

/** An agent that answers like the echo agent, or fails when told to. */
class SwitchAgent implements Agent {
  readonly name = "switch";
  readonly inputs: AgentTurnInput[] = [];
  constructor(private readonly state: { fail: boolean }) {}
  async runTurn(input: AgentTurnInput) {
    this.inputs.push(input);
    if (this.state.fail) throw new AgentError("provider answered 500", { status: 500 });
    return new EchoAgent().runTurn(input);
  }
}

/** Calls `processHandoffs` until `done` settles (a gateway polling while the terminal waits). */
async function serveWhile<T>(runner: GatewayRunner, homes: HomeChannels, done: Promise<T>, options = {}): Promise<T> {
  let settled = false;
  const finished = done.finally(() => {
    settled = true;
  });
  finished.catch(() => {});
  await waitFor(
    async () => {
      await runner.processHandoffs(homes, options);
      return settled;
    },
    { what: "the terminal's handoff request to settle", intervalMs: 20 },
  );
  return finished;
}

/**
 * Runs the store's own finishHandoff statements for `id` on another connection to the test's
 * database, in a transaction left open while `whileOpen` runs (PostgreSQL: it holds the row
 * lock; SQLite: the write lock of the file), then commits.
 */
async function withOpenCompletion(
  target: TestDatabase["target"],
  id: string,
  result: CheckedHandoffResult,
  whileOpen: (holderPid: number | null) => Promise<void>,
): Promise<void> {
  if (target.schema === undefined) {
    const raw = new Database(target.url);
    try {
      raw.exec("BEGIN IMMEDIATE");
      sqliteHandoffs.finishHandoff(new SqliteConnection(raw), id, result);
      await whileOpen(null);
      raw.exec("COMMIT");
    } finally {
      if (raw.inTransaction) raw.exec("ROLLBACK");
      raw.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: withDefaultUser(target.url) });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${target.schema}"`);
    await client.query("BEGIN");
    await pgHandoffs.finishHandoff(new Sql(client), id, result);
    await whileOpen((client as unknown as { processID: number }).processID);
    await client.query("COMMIT");
  } finally {
    await client.end();
  }
}

/** Whether a PostgreSQL session waits for `holderPid`'s lock in finishHandoff (its `SELECT … FOR UPDATE` of the handoff). */
async function handoffFinishWaiting(target: TestDatabase["target"], holderPid: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: withDefaultUser(target.url) });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE 'SELECT status FROM handoffs WHERE id = $1 FOR UPDATE%'",
      [holderPid],
    );
    return (rows[0] as { n: number }).n > 0;
  } finally {
    await client.end();
  }
}

async function cliSession(db: SessionDB): Promise<string> {
  const { id } = await db.createSession({ source: "cli", title: "Storage design" });
  await db.appendTurn(id, [
    { role: "user", content: "Let us design the storage layer" },
    { role: "assistant", content: "Start with the contract, then two backends." },
  ]);
  return id;
}

async function expectHandoffError(call: Promise<unknown>, reason: HandoffError["reason"], message?: RegExp): Promise<HandoffError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HandoffError);
  const handoff = error as HandoffError;
  expect(handoff.reason).toBe(reason);
  if (message) expect(handoff.message).toMatch(message);
  return handoff;
}

forEachBackend((backend) => {
  async function setup(options: { threads?: boolean; agent?: () => Agent; extraAdapters?: LocalAdapter[]; sharedChannels?: boolean } = {}) {
    const { db, target } = await backend.fresh();
    const store = new SessionRouter({ db, keySettings: { groupSessionsPerUser: options.sharedChannels !== true } });
    const local = new LocalAdapter(options.threads === undefined ? {} : { threads: options.threads });
    const runner = new GatewayRunner({
      store,
      agentFactory: options.agent ?? (() => new EchoAgent()),
      adapters: [local, ...(options.extraAdapters ?? [])],
    });
    await runner.start();
    return { db, target, store, local, runner };
  }

  it("thread path: a thread in the home channel routes to the same session, gets the summary, and the record completes", async () => {
    const { db, local, runner, store } = await setup({ threads: true });
    const id = await cliSession(db);
    const homes: HomeChannels = { local: { chatId: "home", name: "Home", threadsSupported: true } };
    const outcome = await serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 }));

    expect(outcome).toEqual<HandoffOutcome>({
      id: outcome.id,
      status: "completed",
      platform: "local",
      chatId: "home",
      threadId: "thread-1",
      sessionKey: "agent:main:local:channel:home:thread-1",
    });
    expect(local.threads).toHaveLength(1);
    expect(local.threads[0]).toMatchObject({ title: "Storage design", parent: { platform: "local", chatType: "channel", chatId: "home", chatName: "Home" } });
    // The summary reply went to the thread, answering the synthetic message.
    const reply = local.sent.find((d) => d.message.kind === "reply")!;
    expect(reply.source).toMatchObject({ chatId: "home", threadId: "thread-1" });
    expect(reply.message).toMatchObject({ sessionId: id, inReplyTo: [`handoff:${outcome.id}`] });
    expect(reply.message.text).toBe(`Echo: ${handoffNotice("local")}`);
    expect(handoffNotice("local")).toMatch(/handed off from the terminal to local; summarise where things stand and what is next/);
    // Same session id, still live; the transcript continues.
    expect((await db.getRoute(outcome.sessionKey))?.sessionId).toBe(id);
    const session = await db.getSession(id);
    expect(session).toMatchObject({ endedAt: null, source: "cli", title: "Storage design" });
    expect((await db.getMessages(id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(await db.getHandoff(outcome.id)).toMatchObject({
      status: "completed",
      claimedBy: expect.any(String),
      chatId: "home",
      threadId: "thread-1",
      sessionKey: outcome.sessionKey,
    });
    // A message in the thread continues the very same session.
    await local.receive("and now?", { chatType: "channel", chatId: "home", threadId: "thread-1", userId: "alice" });
    // A thread is shared: the agent is given the message with its sender (issue 26, point 5), and echoes that.
    const next = await local.nextMessage((d) => d.message.text === "Echo: [Local user] and now?");
    expect(next.message.sessionId).toBe(id);
    expect((await store.getEntry(outcome.sessionKey))?.sessionId).toBe(id);
  });

  it("home-channel path: without createThread (or threadsSupported) the home channel itself is bound, DM-style when its kind is not given", async () => {
    for (const [threads, threadsSupported] of [
      [false, true],
      [true, false],
    ] as const) {
      const { db, local, runner } = await setup({ threads });
      const id = await cliSession(db);
      const homes: HomeChannels = { local: { chatId: "home", threadsSupported } };
      const outcome = await serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 }));
      expect(outcome).toMatchObject({ chatId: "home", threadId: null, sessionKey: "agent:main:local:dm:home" });
      expect(local.threads).toEqual([]);
      const reply = local.sent.find((d) => d.message.kind === "reply")!;
      expect(reply.source).toMatchObject({ platform: "local", chatType: "dm", chatId: "home" });
      expect(reply.source.threadId ?? null).toBeNull();
      expect((await db.getRoute(outcome.sessionKey))?.sessionId).toBe(id);
    }
  });

  it("an ended CLI session is reopened; a different session the (shared) home channel had is ended with session_switch", async () => {
    const { db, local, runner } = await setup({ sharedChannels: true });
    await local.receive("earlier chat", { chatType: "channel", chatId: "home" });
    const earlier = (await local.nextMessage()).message.sessionId!;
    expect((await db.getRoute("agent:main:local:channel:home"))?.sessionId).toBe(earlier);
    const id = await cliSession(db);
    await db.endSession(id, "cli_exit");
    const homes: HomeChannels = { local: { chatId: "home", chatType: "channel" } };
    const outcome = await serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 }));
    expect(outcome.sessionKey).toBe("agent:main:local:channel:home");
    expect((await db.getRoute(outcome.sessionKey))?.sessionId).toBe(id);
    expect((await db.getSession(id))?.endedAt).toBeNull();
    expect(await db.getSession(earlier)).toMatchObject({ endReason: "session_switch" });
    // With shared channel sessions, anyone's next message in the home channel continues it.
    await local.receive("what next?", { chatType: "channel", chatId: "home", userId: "bob" });
    // The agent is given the sender prefix of a shared session (issue 26, point 5), and echoes it.
    expect((await local.nextMessage((d) => d.message.text === "Echo: [Local user] what next?")).message.sessionId).toBe(id);
  });

  it("refusals: no home channel (naming the config key and command), a running turn; nothing is recorded", async () => {
    const { db } = await setup();
    const id = await cliSession(db);
    const before = await db.getMessages(id);
    const none = await expectHandoffError(
      requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels: { local: { chatId: "home" } } }),
      "no_home_channel",
    );
    expect(none.message).toContain("homeChannels.telegram.chatId");
    expect(none.message).toContain("~/.threadline/config.yaml");
    expect(none.message).toContain("threadline config set homeChannels.telegram.chatId <id>");
    expect(none.handoffId).toBeNull();
    const custom = await expectHandoffError(
      requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels: {}, configPath: "/etc/tl.yaml" }),
      "no_home_channel",
    );
    expect(custom.message).toContain("/etc/tl.yaml");
    // An inherited property is not a home channel.
    await expectHandoffError(requestHandoff(db, { sessionId: id, platform: "toString" }, { homeChannels: {} }), "no_home_channel");
    const busy = await expectHandoffError(
      requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: { local: { chatId: "home" } }, turnRunning: true }),
      "turn_running",
      /turn is still running/,
    );
    expect(busy.handoffId).toBeNull();
    expect(await db.claimHandoff({ platforms: ["telegram", "local"], holder: "probe" })).toBeNull();
    expect(await db.getMessages(id)).toEqual(before);
  });

  it("an unknown session fails at once", async () => {
    const { db } = await setup();
    await expectHandoffError(requestHandoff(db, { sessionId: "nope", platform: "local" }, { homeChannels: { local: { chatId: "home" } } }), "failed", /nope/);
  });

  it("timeout: no gateway took it; the record fails with reason timeout, a late gateway does not run it, the session is intact", async () => {
    const { db, local, runner } = await setup();
    const id = await cliSession(db);
    const before = { session: await db.getSession(id), messages: await db.getMessages(id) };
    const started = Date.now();
    const error = await expectHandoffError(
      requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: { local: { chatId: "home" } }, timeoutMs: 300, pollMs: 20 }),
      "timeout",
      /No running gateway took the handoff to local within 0\.3 s.*threadline serve.*unchanged/s,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed", reason: "timeout", claimedBy: null });
    expect(await runner.processHandoffs({ local: { chatId: "home" } })).toBe(0);
    expect(local.sent).toEqual([]);
    expect(await db.getRoute("agent:main:local:dm:home")).toBeNull();
    expect({ session: await db.getSession(id), messages: await db.getMessages(id) }).toEqual(before);
  });

  it("timeout while a gateway runs it: cancelled (failed: timeout); a completion that lands first wins", async () => {
    const { db, target } = await setup();
    const id = await cliSession(db);
    const homes: HomeChannels = { local: { chatId: "home" } };
    // A gateway claims it but never finishes.
    const slow = requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, timeoutMs: 400, pollMs: 10 });
    let claimed = null;
    while (claimed === null) claimed = await db.claimHandoff({ platforms: ["local"], holder: "slow-gw" });
    const error = await expectHandoffError(slow, "timeout", /gateway \(slow-gw\) took the handoff to local but did not finish it within 0\.4 s/);
    expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed", reason: "timeout", claimedBy: "slow-gw" });
    await expect(db.finishHandoff(claimed.id, { status: "completed", chatId: "home", sessionKey: "agent:main:local:channel:home" })).rejects.toThrow(
      /already failed/,
    );

    // The gateway's completion commits just before the terminal gives up: the outcome is returned.
    // A real race: another gateway's connection runs the store's own finishHandoff in a transaction it
    // keeps open (PostgreSQL: it holds the row lock; SQLite: the write lock of the file) while the terminal
    // times out and tries to mark the handoff failed; then it commits. The terminal polls once, at its
    // deadline (pollMs > timeoutMs), and that poll cannot see the uncommitted completion.
    const racing = requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, timeoutMs: 1_000, pollMs: 60_000 });
    let fast = null;
    while (fast === null) fast = await db.claimHandoff({ platforms: ["local"], holder: "fast-gw" });
    // The terminal set its deadline when the handoff was created, before this claim returned.
    const deadline = Date.now() + 1_000;
    const completion = { status: "completed", chatId: "home", sessionKey: "agent:main:local:channel:home" } as const;
    await withOpenCompletion(target, fast.id, checkHandoffResult(completion, Date.now() / 1000), async (holderPid) => {
      if (holderPid === null) {
        // SQLite shows no waiter: wait until the terminal's deadline (and so its one poll) is past.
        await waitFor(() => Date.now() > deadline + 100, { what: "the terminal's handoff deadline to pass" });
      } else {
        await waitFor(() => handoffFinishWaiting(target, holderPid), { what: "the terminal's finishHandoff to wait on the handoff's row lock" });
      }
    });
    const won = await racing;
    expect(won).toMatchObject({ status: "completed", chatId: "home", threadId: null, sessionKey: "agent:main:local:channel:home" });
    expect(await db.getHandoff(won.id)).toMatchObject({ status: "completed", claimedBy: "fast-gw" });
  });

  it("a gateway with the home channel but no connected adapter fails the handoff (after the grace) with the reason", async () => {
    const { db, runner } = await setup();
    const id = await cliSession(db);
    const homes: HomeChannels = { local: { chatId: "home" }, telegram: { chatId: "-100" } };
    const request = requestHandoff(db, { sessionId: id, platform: "telegram" }, { homeChannels: homes, pollMs: 10, timeoutMs: 10_000 });
    // Within the grace it is left for a gateway that serves telegram.
    expect(await runner.processHandoffs(homes, { unservedGraceSeconds: 60 })).toBe(0);
    expect(await runner.processHandoffs(homes, { unservedGraceSeconds: null })).toBe(0);
    const error = await expectHandoffError(serveWhile(runner, homes, request, { unservedGraceSeconds: 0 }), "failed");
    expect(error.message).toMatch(/could not hand this session off to telegram: no telegram adapter is connected/);
    expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed", claimedBy: expect.any(String) });
    expect((await db.getSession(id))?.endedAt).toBeNull();
  });

  it("a failing createThread fails the handoff with its message; nothing is bound", async () => {
    const { db, local, runner } = await setup({ threads: true });
    (local as { createThread?: unknown }).createThread = async () => {
      throw new Error("403 not allowed to create threads");
    };
    const id = await cliSession(db);
    const homes: HomeChannels = { local: { chatId: "home", threadsSupported: true } };
    const error = await expectHandoffError(
      serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 })),
      "failed",
      /creating a thread in the local home channel failed: 403 not allowed/,
    );
    expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed", reason: expect.stringMatching(/403/) });
    expect((await db.listRoutes()).items).toEqual([]);
  });

  it("a summary turn that fails: the handoff fails, the synthetic message is hidden again, the new binding is removed", async () => {
    const state = { fail: true };
    const { db, local, runner } = await setup({ agent: () => new SwitchAgent(state) });
    const id = await cliSession(db);
    const before = await db.getMessages(id);
    const homes: HomeChannels = { local: { chatId: "home" } };
    const error = await expectHandoffError(
      serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 })),
      "failed",
      /ended without a reply/,
    );
    expect(local.sent.map((d) => d.message.kind)).toEqual(["error"]);
    expect(await db.getMessages(id)).toEqual(before);
    expect(await db.getRoute("agent:main:local:dm:home")).toBeNull();
    expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed" });
    // The next attempt works.
    state.fail = false;
    const outcome = await serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 }));
    expect((await db.getRoute(outcome.sessionKey))?.sessionId).toBe(id);
  });

  it("a handoff whose platform another adapter serves goes to that adapter only", async () => {
    const other = new LocalAdapter({ platform: "webhook" });
    const { db, local, runner } = await setup({ extraAdapters: [other] });
    const id = await cliSession(db);
    const homes: HomeChannels = { local: { chatId: "home" }, webhook: { chatId: "hook-home" } };
    const outcome = await serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "webhook" }, { homeChannels: homes, pollMs: 10 }));
    expect(outcome).toMatchObject({ platform: "webhook", chatId: "hook-home", sessionKey: "agent:main:webhook:dm:hook-home" });
    expect(local.sent).toEqual([]);
    expect(other.sent.map((d) => d.source.chatId)).toEqual(["hook-home"]);
  });

  // Issue 26, point 4: the handoff binds the key the home chat's next real message carries.
  it("a DM home set with /sethome: the handoff binds the DM's own key, so the next message there continues the session", async () => {
    const { db, local, runner } = await setup();
    const dm = { chatType: "dm", chatId: "ada-dm", chatName: "Ada", userId: "ada" } as const;
    await local.receive("/sethome", dm);
    await local.nextMessage((d) => d.message.text.startsWith("This chat is now the local home channel"));
    const id = await cliSession(db);
    const outcome = await serveWhile(runner, {}, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: {}, pollMs: 10 }));
    expect(outcome).toMatchObject({ chatId: "ada-dm", threadId: null, sessionKey: "agent:main:local:dm:ada-dm" });
    const summary = local.sent.find((d) => d.message.kind === "reply")!;
    expect(summary.source).toMatchObject({ chatType: "dm", chatId: "ada-dm" });
    await local.receive("and now?", dm);
    expect((await local.nextMessage((d) => d.message.text === "Echo: and now?")).message.sessionId).toBe(id);
    expect((await db.getMessages(id)).filter((m) => m.role === "user").map((m) => m.content)).toContain("and now?");
  });

  it("/resume <id> in the home chat takes back a session handed off to it (after /new), not one handed off elsewhere", async () => {
    const { db, local, runner } = await setup();
    const dm = { chatType: "dm", chatId: "ada-dm", userId: "ada" } as const;
    const homes: HomeChannels = { local: { chatId: "ada-dm" } };
    const id = await cliSession(db);
    await serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 }));
    const { id: elsewhere } = await db.createSession({ source: "cli", title: "Another plan" });
    await db.appendTurn(elsewhere, [
      { role: "user", content: "Plan the next one" },
      { role: "assistant", content: "Later." },
    ]);
    const other: HomeChannels = { local: { chatId: "bob-dm" } };
    await serveWhile(runner, other, requestHandoff(db, { sessionId: elsewhere, platform: "local" }, { homeChannels: other, pollMs: 10 }));
    await local.receive("/new", dm);
    await local.nextMessage((d) => d.message.text.startsWith("Started a new session"));
    await local.receive(`/resume ${elsewhere}`, dm);
    expect((await local.nextMessage((d) => d.message.kind !== "reply")).message.text).toMatch(/^No session of this chat/);
    await local.receive(`/resume ${id}`, dm);
    expect((await local.nextMessage((d) => d.message.kind !== "reply")).message.text).toMatch(/^Resumed Storage design/);
    await local.receive("back again", dm);
    expect((await local.nextMessage((d) => d.message.text === "Echo: back again")).message.sessionId).toBe(id);
  });

  it("a group home set with /sethome, per-user group sessions: binds the lane of the person who sent /sethome; another member keeps their own", async () => {
    const { db, local, runner } = await setup();
    const group = { chatType: "group", chatId: "team", chatName: "Team" } as const;
    await local.receive("/sethome", { ...group, userId: "ada" });
    await local.nextMessage((d) => d.message.text.startsWith("This chat is now the local home channel"));
    const id = await cliSession(db);
    const outcome = await serveWhile(runner, {}, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: {}, pollMs: 10 }));
    expect(outcome).toMatchObject({ chatId: "team", threadId: null, sessionKey: "agent:main:local:group:team:ada" });
    await local.receive("and now?", { ...group, userId: "ada" });
    expect((await local.nextMessage((d) => d.message.text === "Echo: and now?")).message.sessionId).toBe(id);
    await local.receive("hello", { ...group, userId: "bob" });
    expect((await local.nextMessage((d) => d.message.text === "Echo: hello")).message.sessionId).not.toBe(id);
  });

  it("a group home with shared group sessions: binds the group's key, so anyone's next message there continues the session", async () => {
    const { db, local, runner } = await setup({ sharedChannels: true });
    const group = { chatType: "group", chatId: "team", chatName: "Team" } as const;
    await local.receive("/sethome", { ...group, userId: "ada" });
    await local.nextMessage((d) => d.message.text.startsWith("This chat is now the local home channel"));
    const id = await cliSession(db);
    const outcome = await serveWhile(runner, {}, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: {}, pollMs: 10 }));
    expect(outcome).toMatchObject({ chatId: "team", sessionKey: "agent:main:local:group:team" });
    // The handoff's note is the gateway's own words: no sender is named for it, though the session is shared.
    await local.nextMessage((d) => d.message.text.startsWith("Echo: [System note: This conversation was handed off"));
    await local.receive("what next?", { ...group, userId: "bob" });
    // A shared session: the model is given the sender's name in front of the text (issue 26, point 5).
    expect((await local.nextMessage((d) => d.message.text === "Echo: [Local user] what next?")).message.sessionId).toBe(id);
  });

  it("a thread-capable home set with /sethome in a thread: a new thread, shared by whoever writes in it", async () => {
    const { db, local, runner } = await setup({ threads: true });
    await local.receive("/sethome", { chatType: "group", chatId: "team", chatName: "Team", threadId: "t0", userId: "ada" });
    await local.nextMessage((d) => d.message.text.startsWith("This chat is now the local home channel"));
    const id = await cliSession(db);
    const outcome = await serveWhile(runner, {}, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: {}, pollMs: 10 }));
    expect(outcome).toMatchObject({ chatId: "team", threadId: "thread-1", sessionKey: "agent:main:local:group:team:thread-1" });
    await local.receive("and now?", { chatType: "group", chatId: "team", threadId: "thread-1", userId: "bob" });
    expect((await local.nextMessage((d) => d.message.text === "Echo: [Local user] and now?")).message.sessionId).toBe(id);
  });

  it("a configured home: DM-style by default (as hermes keys it); chatType and userId of homeChannels say otherwise", async () => {
    const { db, local, runner } = await setup();
    const id = await cliSession(db);
    const dmHome: HomeChannels = { local: { chatId: "ada-dm" } };
    const dm = await serveWhile(runner, dmHome, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: dmHome, pollMs: 10 }));
    expect(dm.sessionKey).toBe("agent:main:local:dm:ada-dm");
    await local.receive("in the dm", { chatType: "dm", chatId: "ada-dm", userId: "ada" });
    expect((await local.nextMessage((d) => d.message.text === "Echo: in the dm")).message.sessionId).toBe(id);

    const groupHome: HomeChannels = { local: { chatId: "team", chatType: "group", userId: "ada" } };
    const group = await serveWhile(runner, groupHome, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: groupHome, pollMs: 10 }));
    expect(group.sessionKey).toBe("agent:main:local:group:team:ada");
    await local.receive("in the group", { chatType: "group", chatId: "team", userId: "ada" });
    expect((await local.nextMessage((d) => d.message.text === "Echo: in the group")).message.sessionId).toBe(id);
  });

  it("a configured group home with per-user sessions and no userId: the handoff fails saying how to name whose lane it is; nothing is bound", async () => {
    const { db, local, runner } = await setup();
    const id = await cliSession(db);
    const before = await db.getMessages(id);
    const homes: HomeChannels = { local: { chatId: "team", chatType: "group" } };
    const error = await expectHandoffError(
      serveWhile(runner, homes, requestHandoff(db, { sessionId: id, platform: "local" }, { homeChannels: homes, pollMs: 10 })),
      "failed",
      /session per person.*send \/sethome in that chat.*homeChannels\.local\.userId/s,
    );
    expect(await db.getHandoff(error.handoffId!)).toMatchObject({ status: "failed" });
    expect((await db.listRoutes()).items).toEqual([]);
    expect(local.sent).toEqual([]);
    expect(await db.getMessages(id)).toEqual(before);
  });

  it("bindKeyToSession routes a key to an existing session without ending it, and refuses an unknown one", async () => {
    const { db, store } = await setup();
    const id = await cliSession(db);
    const source: SessionSource = { platform: "slack", chatType: "channel", chatId: "C1", threadId: "T1" };
    const entry = await store.bindKeyToSession(source, id);
    expect(entry).toMatchObject({ key: "agent:main:slack:channel:C1:T1", sessionId: id, turnStartedAt: null, suspended: false, origin: source });
    expect((await db.getSession(id))?.endedAt).toBeNull();
    const again = await store.bindKeyToSession(source, id);
    expect(again.version).toBe(entry.version + 1);
    expect((await db.getSession(id))?.endedAt).toBeNull();
    await expect(store.bindKeyToSession(source, "missing")).rejects.toThrow(/No session with id "missing"/);
  });
});
