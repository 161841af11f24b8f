import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import { AgentError, AgentInterruptedError, EchoAgent, HeuristicTitler, type Agent, type AgentTurnInput } from "../../src/agents/index.js";
import {
  AgentCache,
  GatewayRecovery,
  GatewayRunner,
  INTERRUPTED_TOOL_RESULT,
  SessionRouter,
  type GatewayRunnerOptions,
  type InboundMessage,
} from "../../src/gateway/index.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend } from "./backends.js";

/** An agent that records what it was given and can be told how to answer. */
class ScriptedAgent implements Agent {
  readonly name = "scripted";
  readonly inputs: AgentTurnInput[] = [];
  constructor(readonly answer: (input: AgentTurnInput) => Promise<Awaited<ReturnType<Agent["runTurn"]>>>) {}
  async runTurn(input: AgentTurnInput) {
    this.inputs.push(input);
    return this.answer(input);
  }
}

const lastText = (input: AgentTurnInput): string => {
  const last = [...input.messages].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : "";
};

forEachBackend((backend) => {
  async function setup(options: Partial<GatewayRunnerOptions> & { agent?: () => Agent; delayMs?: number } = {}) {
    const { db, reopen } = await backend.fresh();
    const store = new SessionRouter({ db });
    const local = new LocalAdapter();
    const runner = new GatewayRunner({
      store,
      agentFactory: options.agent ?? (() => new EchoAgent(options.delayMs === undefined ? {} : { delayMs: options.delayMs })),
      adapters: [local],
      ...options,
    });
    await runner.start();
    return { db, store, local, runner, reopen };
  }

  it("a conversation keeps its context across messages; user message stored before the model runs", async () => {
    let seenStored = -1;
    const { local, db, runner } = await setup({
      agent: () =>
        new ScriptedAgent(async (input) => {
          seenStored = (await db.getMessages(input.sessionId)).length;
          return {
            messages: [{ role: "assistant", content: `You said ${lastText(input)} (${input.messages.length} msgs)` }],
            usage: { inputTokens: 5, outputTokens: 3 },
          };
        }),
    });
    expect((await local.receive("hello")).status).toBe("accepted");
    expect((await local.nextMessage()).message.text).toBe("You said hello (1 msgs)");
    expect(seenStored).toBe(1);
    await local.receive("again");
    const second = await local.nextMessage();
    expect(second.message.text).toBe("You said again (3 msgs)");
    const sessionId = second.message.sessionId!;
    expect((await db.getMessages(sessionId)).map((m) => m.content)).toEqual(["hello", "You said hello (1 msgs)", "again", "You said again (3 msgs)"]);
    expect((await db.getSession(sessionId))?.usage).toMatchObject({ inputTokens: 10, outputTokens: 6 });
    expect(runner.turnsCompleted).toBe(2);
  });

  it("five rapid messages: five turns, in order, one at a time", async () => {
    let running = 0;
    let maxRunning = 0;
    // The first turn holds until all five messages are admitted (on a loaded machine a fixed
    // pause could end before the second message arrives, and it would be accepted, not queued).
    let admitted!: () => void;
    const allAdmitted = new Promise<void>((resolve) => (admitted = resolve));
    const { local } = await setup({
      agent: () =>
        new ScriptedAgent(async (input) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          await allAdmitted;
          await Promise.resolve();
          running -= 1;
          return { messages: [{ role: "assistant", content: `re: ${lastText(input)}` }] };
        }),
    });
    const acks = await Promise.all([1, 2, 3, 4, 5].map((n) => local.receive(`m${n}`)));
    admitted();
    expect(acks[0]!.status).toBe("accepted");
    expect(acks.slice(1).map((a) => a.status)).toEqual(["queued", "queued", "queued", "queued"]);
    const replies: string[] = [];
    for (let i = 0; i < 5; i++) replies.push((await local.nextMessage((d) => d.message.kind === "reply")).message.text);
    expect(replies).toEqual(["re: m1", "re: m2", "re: m3", "re: m4", "re: m5"]);
    expect(maxRunning).toBe(1);
  });

  it("more conversations at once than the agent cache holds: every turn keeps its agent until it ends", async () => {
    // Agents are created asynchronously (as a provider's would be), so the turns of several chats
    // put their agents into a one-agent cache in the same ticks: each must be marked mid-turn in
    // the step it is taken, or the next chat's set() evicts it before its turn begins.
    const { local } = await setup({
      agentCache: new AgentCache<Agent>({ maxSize: 1 }),
      agentFactory: async () => {
        await Promise.resolve();
        return new EchoAgent();
      },
    });
    const chats = ["a", "b", "c", "d", "e", "f"];
    const acks = await Promise.all(chats.map((chat) => local.receive(`hello from ${chat}`, { chatId: chat })));
    expect(acks.map((a) => a.status)).toEqual(chats.map(() => "accepted"));
    const replies: string[] = [];
    for (let i = 0; i < chats.length; i++) replies.push((await local.nextMessage()).message.text);
    expect(replies.sort()).toEqual(chats.map((chat) => `Echo: hello from ${chat}`).sort());
  });

  it("a turn that fails before the model runs (the agent cannot be made) tells the chat instead of leaving it waiting", async () => {
    let attempts = 0;
    const { local, runner } = await setup({
      agentFactory: () => {
        attempts += 1;
        if (attempts === 1) throw new AgentError("no model configured for this session");
        return new EchoAgent();
      },
    });
    await local.receive("first");
    const notice = await local.nextMessage();
    expect(notice.message.kind).toBe("error");
    expect(notice.message.text).toBe("Something went wrong before the model could answer; the gateway's log has the details.");
    expect(notice.message.text).not.toContain("no model configured");
    // The chat goes on: the next message is answered.
    await local.receive("second");
    expect((await local.nextMessage()).message.text).toBe("Echo: second");
    expect(runner.turnsCompleted).toBe(1);
  });

  it("two users in a group are isolated by default", async () => {
    const { local } = await setup();
    const group = { chatType: "group" as const, chatId: "g1" };
    await local.receive("from alice", { ...group, userId: "alice" });
    const a = await local.nextMessage();
    await local.receive("from bob", { ...group, userId: "bob" });
    const b = await local.nextMessage();
    expect(a.message.sessionId).not.toBe(b.message.sessionId);
  });

  it("a tool call is stored with its result in one turn; an interrupted turn gets a synthetic result", async () => {
    const call = { id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } };
    let mode: "ok" | "interrupt" = "ok";
    const { local, db } = await setup({
      agent: () =>
        new ScriptedAgent(async () => {
          if (mode === "interrupt") throw new AgentInterruptedError([{ role: "assistant", content: null, toolCalls: [{ ...call, id: "call_2" }] }]);
          return {
            messages: [
              { role: "assistant", content: null, toolCalls: [call] },
              { role: "tool", toolCallId: "call_1", toolName: "lookup", content: "42" },
              { role: "assistant", content: "The answer is 42." },
            ],
          };
        }),
    });
    await local.receive("what is it?");
    const reply = await local.nextMessage();
    expect(reply.message.text).toBe("The answer is 42.");
    const sessionId = reply.message.sessionId!;
    expect((await db.getMessages(sessionId)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    mode = "interrupt";
    await local.receive("again");
    // The interrupted turn is stored after the agent gives up: wait for it.
    const messages = await waitFor(
      async () => {
        const stored = await db.getMessages(sessionId);
        return stored.length >= 7 && stored;
      },
      { what: "the interrupted turn to be stored", timeoutMs: 5_000 },
    );
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]);
    const last = messages[messages.length - 1]!;
    expect(last).toMatchObject({ role: "tool", toolCallId: "call_2", content: INTERRUPTED_TOOL_RESULT });
  });

  it("a failing model call tells the user and leaves the session usable", async () => {
    let fail = true;
    const { local, store } = await setup({
      agent: () =>
        new ScriptedAgent(async (input) => {
          if (fail) throw new AgentError("provider answered 500; try again later", { status: 500 });
          return { messages: [{ role: "assistant", content: `ok ${lastText(input)}` }] };
        }),
    });
    await local.receive("first");
    const error = await local.nextMessage();
    expect(error.message.kind).toBe("error");
    // A chat user gets a ref, not the provider's text (that goes to the log under the same ref).
    expect(error.message.text).toMatch(/^The model could not answer \(ref [0-9a-f]{8}\)\.$/u);
    expect(error.message.text).not.toMatch(/provider answered 500/);
    const entry = (await store.listSessions())[0]!;
    expect(entry.turnStartedAt).toBeNull();
    fail = false;
    await local.receive("second");
    expect((await local.nextMessage()).message.text).toBe("ok second");
  });

  it("an idempotent message id already stored is never stored again: a failed turn is recorded and re-run once, a stored reply is sent again (across a restart)", async () => {
    const { local, db, reopen } = await setup({
      agent: () =>
        new ScriptedAgent(async () => {
          throw new AgentError("provider answered 500; try again later", { status: 500 });
        }),
    });
    const retry = { messageId: "idem-1", idempotent: true };
    await local.receive("question", {}, retry);
    const failed = (await local.nextMessage()).message;
    expect(failed.kind).toBe("error");
    const sessionId = (await db.listSessions({ limit: 5 })).items[0]!.id;
    const stored = await db.getMessages(sessionId);
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(stored[1]!.content).toMatch(/could not answer this message \(provider answered 500/);
    expect(stored[1]!.finishReason).toBe("error");

    // A new process (the retry may reach another replica or a restarted gateway).
    const db2 = await reopen();
    const local2 = new LocalAdapter();
    const agent = new ScriptedAgent(async (input) => ({ messages: [{ role: "assistant", content: `ok ${lastText(input)}` }] }));
    const runner2 = new GatewayRunner({ store: new SessionRouter({ db: db2 }), adapters: [local2], agentFactory: () => agent });
    await runner2.start();
    expect((await local2.receive("question", {}, retry)).status).toBe("accepted");
    expect((await local2.nextMessage()).message.text).toBe("ok question");
    // The re-run saw the question once, as the last message (not its failed attempt).
    expect(agent.inputs[0]!.messages.map((m) => m.role)).toEqual(["user"]);
    // Once answered, the same id gets the stored reply without a model call.
    expect((await local2.receive("question", {}, retry)).status).toBe("duplicate");
    const again = (await local2.nextMessage()).message;
    expect([again.kind, again.text]).toEqual(["reply", "ok question"]);
    expect(agent.inputs).toHaveLength(1);
    expect((await db2.getMessages(sessionId)).map((m) => m.role)).toEqual(["user", "assistant", "assistant"]);
    // The next turn sees the question once, with the failure recorded.
    await local2.receive("next", {}, { messageId: "idem-2", idempotent: true });
    await local2.nextMessage();
    const seen = agent.inputs[1]!.messages;
    expect(seen.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["question", "next"]);
    expect(seen.some((m) => m.role === "assistant" && String(m.content).includes("could not answer"))).toBe(true);
    await runner2.drain(1000);
    await runner2.stop();
  });

  it("titles the session after the first exchange; a title an unrelated session holds gets its collision form (2), not a lineage number", async () => {
    const { local, db } = await setup({ titler: new HeuristicTitler() });
    await local.receive("Plan the quarterly release checklist please", { chatId: "c1" });
    const first = await local.nextMessage();
    await local.receive("Plan the quarterly release checklist please", { chatId: "c2" });
    const second = await local.nextMessage();
    // Titling runs after the reply is sent: wait until both titles are there.
    const titleOf = (id: string): Promise<string> => waitFor(() => db.getTitle(id), { what: `the title of ${id}`, timeoutMs: 5_000 });
    const t1 = await titleOf(first.message.sessionId!);
    const t2 = await titleOf(second.message.sessionId!);
    expect(t1).toMatch(/^Plan the quarterly release checklist/);
    expect(t2).toBe(`${t1} (2)`);
  });

  it("slash commands: /status, /title, /undo, /retry, /queue, unknown", async () => {
    const { local, db } = await setup();
    await local.receive("one");
    const reply = await local.nextMessage();
    const sessionId = reply.message.sessionId!;
    expect((await local.receive("/status")).status).toBe("command");
    const status = (await local.nextMessage()).message.text;
    expect(status).toMatch(new RegExp(`Session: ${sessionId}`));
    expect(status).toMatch(/Messages: 2/);
    expect(status).toMatch(/Queue: 0 waiting/);
    await local.receive("/title Release plan");
    expect((await local.nextMessage()).message.text).toBe("Title set: Release plan");
    await local.receive("/title");
    expect((await local.nextMessage()).message.text).toBe("Title: Release plan");
    await local.receive("two");
    await local.nextMessage();
    await local.receive("/undo");
    expect((await local.nextMessage()).message.text).toMatch(/Removed 1 message/);
    expect((await db.getMessages(sessionId)).map((m) => m.content)).toEqual(["one", "Echo: one"]);
    await local.receive("/retry");
    expect((await local.nextMessage()).message.text).toBe("Echo: one");
    expect((await db.getMessages(sessionId)).map((m) => m.content)).toEqual(["one", "Echo: one"]);
    await local.receive("/queue later");
    expect((await local.nextMessage()).message.text).toBe("Echo: later");
    await local.receive("/frobnicate");
    const unknown = (await local.nextMessage()).message;
    expect(unknown.kind).toBe("error");
    expect(unknown.refused).toBe(true);
    expect(unknown.text).toMatch(/Unknown command \/frobnicate/);
    expect(unknown.text).toMatch(/\/resume/);
    // Only known commands are commands: an unknown "/word" followed by text is a message.
    // (accepted, or queued while the worker of "/queue later" is still looking at the queue)
    expect(["accepted", "queued"]).toContain((await local.receive("/etc is full")).status);
    expect((await local.nextMessage()).message.text).toBe("Echo: /etc is full");
  });

  it("/new starts a fresh session and clears the queue; /resume by title switches back", async () => {
    const { local, db } = await setup({ delayMs: 200 });
    await local.receive("first topic");
    const old = await local.nextMessage((d) => d.message.kind === "reply");
    await local.receive("/title Topic A");
    await local.nextMessage();
    await local.receive("slow one");
    expect((await local.receive("queued one")).status).toBe("queued");
    await local.receive("/new");
    const notice = await local.nextMessage((d) => /Started a new session/.test(d.message.text));
    expect(notice.message.text).not.toContain(old.message.sessionId!);
    expect(await db.listQueuedKeys()).toEqual([]);
    await local.receive("/resume");
    expect((await local.nextMessage((d) => /Recent sessions/.test(d.message.text))).message.text).toMatch(/Topic A/);
    await local.receive("/resume Topic A");
    expect((await local.nextMessage((d) => /Resumed/.test(d.message.text))).message.text).toMatch(/Resumed Topic A/);
    await local.receive("back again");
    const back = await local.nextMessage((d) => d.message.kind === "reply");
    expect(back.message.sessionId).toBe(old.message.sessionId);
  });

  it("/stop interrupts the running turn and the next message starts a new session", async () => {
    const { local } = await setup({ delayMs: 5_000 });
    await local.receive("take your time");
    const first = local.sent.length;
    await local.receive("/stop");
    const stopped = await local.nextMessage((d) => /Stopped/.test(d.message.text));
    expect(stopped.message.kind).toBe("notice");
    expect(local.sent.slice(first).some((d) => d.message.kind === "reply")).toBe(false);
  });

  it("/stop does not run the messages queued behind the stopped turn", async () => {
    const { local, db } = await setup({ delayMs: 300 });
    await local.receive("slow");
    expect((await local.receive("queued 1")).status).toBe("queued");
    expect((await local.receive("queued 2")).status).toBe("queued");
    await local.receive("/stop");
    await local.nextMessage((d) => /Stopped/.test(d.message.text));
    // The barrier: a later message of the same chat runs after anything still queued there,
    // so once its reply is in, the two queued messages would have been answered before it.
    await local.receive("after the stop");
    await local.nextMessage((d) => d.message.kind === "reply");
    expect(local.sent.filter((d) => d.message.kind === "reply").map((d) => d.message.text)).toEqual(["Echo: after the stop"]);
    expect(await db.listQueuedKeys()).toEqual([]);
  });

  it("/resume only finds this chat's sessions", async () => {
    const { local } = await setup();
    await local.receive("secret plans", { chatId: "alice-chat", userId: "alice" });
    const alices = await local.nextMessage();
    await local.receive("/title Alice private", { chatId: "alice-chat", userId: "alice" });
    await local.nextMessage();
    await local.receive("hello", { chatId: "bob-chat", userId: "bob" });
    await local.nextMessage();
    await local.receive("/resume Alice private", { chatId: "bob-chat", userId: "bob" });
    expect((await local.nextMessage()).message.text).toMatch(/No session of this chat/);
    await local.receive(`/resume ${alices.message.sessionId!}`, { chatId: "bob-chat", userId: "bob" });
    expect((await local.nextMessage()).message.text).toMatch(/No session of this chat/);
  });

  it("/compress continues in a child session that starts from the summary, titled with the lineage number", async () => {
    const { local, db } = await setup();
    await local.receive("Design the storage layer");
    const first = await local.nextMessage();
    await local.receive("/title Storage design");
    await local.nextMessage();
    await local.receive("/compress");
    const done = (await local.nextMessage()).message.text;
    expect(done).toMatch(/Compressed into a new session "Storage design #2"/);
    const old = await db.getSession(first.message.sessionId!);
    expect(old?.endReason).toBe("compression");
    const [child] = await db.getDescendants(old!.id);
    expect(child?.title).toBe("Storage design #2");
    const messages = await db.getMessages(child!.id);
    expect(messages[0]?.content).toMatch(/^\[Summary of the earlier conversation/);
    // Stored as what it is: a summary (marked), not something the user typed; no preview.
    expect(messages[0]).toMatchObject({ role: "user", platformMessageId: `summary:${old!.id}` });
    expect((await db.getSession(child!.id))?.preview).toBeNull();
    await local.receive("next step");
    expect((await local.nextMessage()).message.sessionId).toBe(child!.id);
    expect((await db.getSession(child!.id))?.preview).toBe("next step");
  });

  it("after a crash mid-turn, the next start resumes the session and answers the stored message", async () => {
    const { db, store, local, runner, reopen } = await setup({ delayMs: 10_000 });
    await local.receive("long job");
    const entry = await waitFor(async () => (await store.listSessions()).find((e) => e.turnStartedAt !== null), { what: "the turn to be marked as started" });
    // "Crash": abandon the runner without any shutdown bookkeeping.
    void runner;
    const db2 = await reopen();
    const store2 = new SessionRouter({ db: db2 });
    const report = await new GatewayRecovery(store2).startup<InboundMessage>();
    expect(report.autoResume.map((e) => e.key)).toEqual([entry.key]);
    const local2 = new LocalAdapter();
    let resumedWith: AgentTurnInput | null = null;
    const runner2 = new GatewayRunner({
      store: store2,
      adapters: [local2],
      agentFactory: () =>
        new ScriptedAgent(async (input) => {
          resumedWith = input;
          return { messages: [{ role: "assistant", content: "finished the long job" }] };
        }),
    });
    await runner2.start({ buffer: report.inbound });
    expect(await runner2.resume(report.autoResume)).toBe(1);
    await report.inbound.release();
    const reply = await local2.nextMessage();
    expect(reply.message.text).toBe("finished the long job");
    expect(resumedWith!.contextPrompt).toMatch(/interrupted by a gateway restart/);
    expect((await db.getMessages(entry.sessionId)).map((m) => m.content)).toEqual(["long job", "finished the long job"]);
    expect(await store2.getEntry(entry.key)).toMatchObject({ resumePending: false, interruptedRestarts: 0 });
  });

  it("drain: turns still running at the timeout are aborted and stay marked for the next start", async () => {
    const { local, runner, store } = await setup({ delayMs: 10_000 });
    await local.receive("slow");
    await waitFor(async () => (await store.listSessions()).some((e) => e.turnStartedAt !== null), { what: "the turn to be marked as started" });
    const result = await runner.drain(50);
    expect(result.drained).toBe(false);
    expect(result.stillRunning).toHaveLength(1);
    const entry = (await store.getEntry(result.stillRunning[0]!))!;
    expect(entry.turnStartedAt).not.toBeNull(); // the next start counts the interruption
    expect((await local.receive("after drain")).status).toBe("rejected");
  });
});
