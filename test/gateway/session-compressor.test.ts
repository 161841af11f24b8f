/**
 * Automatic compression in the gateway and `/compress [focus]` (issue 28), both backends:
 * the summary runs after the reply was sent and never blocks the next message; the switch
 * happens between turns and loses nothing; failures follow `abortOnSummaryFailure`.
 */
import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import type { Agent, AgentResetInput, AgentTurnInput } from "../../src/agents/index.js";
import { DEFAULT_COMPRESSION_SETTINGS, tokenCounterFor, type CompressionSettings } from "../../src/context/index.js";
import { GatewayRunner, SessionRouter, type GatewayRunnerOptions } from "../../src/gateway/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend } from "./backends.js";

const text = (content: unknown): string => (typeof content === "string" ? content : "");
const lastUserText = (input: AgentTurnInput): string => text([...input.messages].reverse().find((m) => m.role === "user")?.content);
/** A long line (about 60 tokens) that carries `tag`. */
const long = (tag: string): string => `${tag} ${"lorem ipsum dolor sit amet ".repeat(12)}`;

/**
 * A model: replies `ok <first word>`; a summary request (noTools) is answered with the
 * facts (WORD-123) it was given, after `gate` (if set) lets it go; `failSummaries` throws.
 */
class FakeModel implements Agent {
  readonly name = "fake";
  readonly inputs: AgentTurnInput[] = [];
  readonly summaryRequests: AgentTurnInput[] = [];
  readonly resets: AgentResetInput[] = [];
  /** For each summary request: had the chat already been sent the reply to the session's last user message? */
  readonly replySentFirst: boolean[] = [];
  gate: Promise<void> | null = null;
  /** The last message the test said (set by `say`). */
  lastSaid = "";
  failSummaries = false;
  constructor(
    readonly db: SessionDB,
    readonly local: LocalAdapter & { summaryAsked?: () => void },
    readonly withBeforeReset = false,
  ) {}

  async runTurn(input: AgentTurnInput) {
    this.inputs.push(input);
    if (input.noTools === true) {
      this.summaryRequests.push(input);
      // Checked at once (no await first): the reply to the last message said was delivered already.
      this.replySentFirst.push(this.local.sent.some((d) => d.message.kind === "reply" && d.message.text === `ok ${this.lastSaid.split(" ")[0]}`));
      this.local.summaryAsked?.();
      if (this.gate !== null) await this.gate;
      if (this.failSummaries) throw new Error("summary provider down");
      const facts = [...new Set(text(input.messages[0]?.content).match(/\b[A-Z]+-\d+\b/gu) ?? [])];
      return { messages: [{ role: "assistant" as const, content: `Facts: ${facts.join(", ") || "none"}` }] };
    }
    return { messages: [{ role: "assistant" as const, content: `ok ${lastUserText(input).split(" ")[0]}` }] };
  }

  async beforeReset(input: AgentResetInput) {
    if (!this.withBeforeReset) return null;
    this.resets.push(input);
    return { messages: [{ role: "assistant" as const, content: "Nothing to save." }] };
  }
}

/**
 * A chat whose delivery of a reply takes a while (a slow platform): a reply is recorded only
 * after many turns of the event loop, or as soon as a summary is asked for — so a summary
 * requested before the reply was delivered is caught (`FakeModel.replySentFirst`).
 */
class SlowChat extends LocalAdapter {
  summaryAsked: () => void = () => {};
  override async send(...args: Parameters<LocalAdapter["send"]>): ReturnType<LocalAdapter["send"]> {
    if (args[1].kind === "reply") {
      const asked = new Promise<void>((resolve) => (this.summaryAsked = resolve));
      let turns = 0;
      const spin = new Promise<void>((resolve) => {
        const next = (): void => void (++turns >= 300 ? resolve() : setImmediate(next));
        next();
      });
      await Promise.race([asked, spin]);
    }
    return super.send(...args);
  }
}

forEachBackend((backend) => {
  async function setup(
    settings: Partial<CompressionSettings> = {},
    options: Partial<GatewayRunnerOptions> & { window?: number; withBeforeReset?: boolean } = {},
  ) {
    const { db } = await backend.fresh();
    const store = new SessionRouter({ db });
    const local = new SlowChat();
    const model = new FakeModel(db, local, options.withBeforeReset ?? false);
    const runner = new GatewayRunner({
      store,
      agentFactory: () => model,
      adapters: [local],
      compression: {
        settings: { ...DEFAULT_COMPRESSION_SETTINGS, protectFirstN: 1, protectLastN: 2, ...settings },
        contextWindow: () => options.window ?? 600,
        retryDelaysMs: [0, 0],
      },
      ...options,
    });
    await runner.start();
    const say = async (message: string): Promise<string> => {
      const before = local.sent.length;
      if (!message.startsWith("/")) model.lastSaid = message;
      await local.receive(message);
      const command = message.startsWith("/");
      const reply = await waitFor(() => local.sent.slice(before).find((d) => command || d.message.kind === "reply" || d.message.kind === "error"), {
        what: `the answer to ${message.slice(0, 20)}`,
      });
      return reply.message.text;
    };
    const key = async (): Promise<string> => (await store.listSessions())[0]!.key;
    return { db, store, local, model, runner, say, key };
  }

  it("a middle longer than the summarising model's window is summarised in parts, each request within the window, early facts kept", async () => {
    const { model, runner, say } = await setup({ enabled: false, protectFirstN: 0, protectLastN: 1 }, { window: 1024 });
    await say(long("remember ZEBRA-42"));
    for (let i = 0; i < 24; i++) await say(long(`turn-${i} fact KIWI-${i}`));
    expect(await say("/compress")).toMatch(/^Compressed into a new session/u);
    const counter = await tokenCounterFor(null);
    // 25 exchanges of about 60 + 10 tokens do not fit one request of a 1,024-token window: several parts.
    expect(model.summaryRequests.length).toBeGreaterThan(1);
    for (const request of model.summaryRequests) expect(counter.countMessages(request.messages)).toBeLessThanOrEqual(1024 - 256);
    // Each part folds in the summary of the parts before it: the first fact reaches the last summary.
    const last = text(model.summaryRequests.at(-1)!.messages[0]!.content);
    expect(last).toContain("ZEBRA-42");
    expect(last).toContain("KIWI-10");
    await runner.stop();
  });

  it("compresses in the background after the reply: a lineage t, t #2, t #3, each summary stored; early facts reach later requests; one notice each", async () => {
    const { db, store, local, model, runner, say, key } = await setup();
    await say("hello");
    await say("/title t");
    await say(long("remember ZEBRA-42"));
    let compressions = 0;
    for (let i = 0; compressions < 2 && i < 40; i++) {
      await say(long(`turn-${i}`));
      await runner.compressor.whenDone(await key());
      compressions = local.sent.filter((d) => d.message.text.startsWith("Context compressed")).length;
    }
    expect(compressions).toBe(2);
    const notices = local.sent.filter((d) => d.message.text.startsWith("Context compressed")).map((d) => d.message.text);
    expect(notices).toEqual(['Context compressed: continuing in "t #2".', 'Context compressed: continuing in "t #3".']);
    expect(
      notices.every(() => true) && local.sent.filter((d) => d.message.text.startsWith("Context compressed")).every((d) => d.message.kind === "notice"),
    ).toBe(true);
    // The reply was always sent before its summary was even asked for.
    expect(model.replySentFirst).toEqual(model.summaryRequests.map(() => true));
    // Lineage, end reasons and stored summaries.
    const tip = (await store.getEntry(await key()))!.sessionId;
    const chain = [...(await db.getAncestors(tip)).reverse(), (await db.getSession(tip))!];
    expect(chain.map((s) => s.title)).toEqual(["t", "t #2", "t #3"]);
    expect(chain.slice(0, 2).map((s) => s.endReason)).toEqual(["compression", "compression"]);
    for (const child of chain.slice(1)) {
      const first = (await db.getMessages(child.id))[0]!;
      expect(first).toMatchObject({ role: "user", platformMessageId: `summary:${child.parentSessionId}` });
      expect(first.content).toContain("ZEBRA-42");
    }
    // A later request carries the fact through the summary (the message itself is long gone from the tail).
    await say("what was the code?");
    const last = model.inputs.at(-1)!;
    expect(last.sessionId).toBe(tip);
    expect(text(last.messages[0]!.content)).toMatch(/^\[Summary of the earlier conversation \(session \S+\)\]\nFacts: .*ZEBRA-42/u);
    expect(last.messages.filter((m) => text(m.content).startsWith("remember ZEBRA-42"))).toHaveLength(0);
    // The second summary folded in the first.
    expect(text(model.summaryRequests[1]!.messages[0]!.content)).toContain("earlier summary");
    expect(model.summaryRequests.every((r) => r.noTools === true && r.model === undefined)).toBe(true);
    await runner.stop();
  });

  it("a message during a slow summary is answered at once and lands in the child; nothing is lost", async () => {
    const { db, store, model, runner, say, key } = await setup({ hardMessageLimit: 10 }, { window: 1_000_000 });
    let release!: () => void;
    model.gate = new Promise((resolve) => (release = resolve));
    for (let i = 0; i < 6; i++) await say(`m${i}`);
    // 12 messages > 10: the summary was asked for, and waits.
    await waitFor(() => model.summaryRequests.length === 1 || undefined, { what: "the summary request" });
    const parent = (await store.getEntry(await key()))!.sessionId;
    expect(await say("during the summary")).toBe("ok during");
    release();
    await runner.compressor.whenDone(await key());
    const child = (await store.getEntry(await key()))!.sessionId;
    expect(child).not.toBe(parent);
    const contents = (await db.getMessages(child)).map((m) => m.content);
    expect(contents.slice(-2)).toEqual(["during the summary", "ok during"]);
    expect((await db.getSession(parent))!.endReason).toBe("compression");
    expect(await say("after")).toBe("ok after");
    expect(model.inputs.at(-1)!.sessionId).toBe(child);
    await runner.stop();
  });

  it("a summary that keeps failing is retried, then the middle is dropped behind a placeholder, with one notice", async () => {
    const { db, store, model, local, runner, say, key } = await setup({ hardMessageLimit: 10 }, { window: 1_000_000 });
    model.failSummaries = true;
    for (let i = 0; i < 6; i++) await say(`m${i}`);
    await runner.compressor.whenDone(await key());
    expect(model.summaryRequests).toHaveLength(3);
    const failures = local.sent.filter((d) => d.message.kind === "error");
    expect(failures).toHaveLength(1);
    expect(failures[0]!.message.text).toMatch(/summary of this long conversation failed, so its \d+ older messages were dropped/u);
    const child = (await store.getEntry(await key()))!.sessionId;
    const first = (await db.getMessages(child))[0]!;
    expect(first.content).toMatch(/\d+ earlier messages were dropped here: their summary could not be written/u);
    await runner.stop();
  });

  it("abortOnSummaryFailure: the session is frozen (turns refused, naming /compress and /new) until /compress succeeds", async () => {
    const { store, model, local, runner, say, key } = await setup({ hardMessageLimit: 10, abortOnSummaryFailure: true }, { window: 1_000_000 });
    model.failSummaries = true;
    for (let i = 0; i < 6; i++) await say(`m${i}`);
    await runner.compressor.whenDone(await key());
    const parent = (await store.getEntry(await key()))!.sessionId;
    expect(local.sent.filter((d) => d.message.kind === "error")).toHaveLength(1);
    const refused = await say("still there?");
    expect(refused).toMatch(/paused.*\/compress.*\/new/u);
    expect(model.inputs.filter((i) => i.noTools !== true).map(lastUserText)).not.toContain("still there?");
    // A restarted gateway keeps it frozen (the freeze is stored).
    await runner.stop();
    const local2 = new SlowChat();
    const runner2 = new GatewayRunner({
      store,
      agentFactory: () => model,
      adapters: [local2],
      compression: {
        settings: { ...DEFAULT_COMPRESSION_SETTINGS, hardMessageLimit: 10, abortOnSummaryFailure: true, protectFirstN: 1, protectLastN: 2 },
        contextWindow: () => 1_000_000,
        retryDelaysMs: [0, 0],
      },
    });
    await runner2.start();
    await local2.receive("after the restart?");
    expect((await waitFor(() => local2.sent[0], { what: "the refusal after the restart" })).message.text).toMatch(/paused.*\/compress.*\/new/u);
    model.failSummaries = false;
    const say2 = async (message: string): Promise<string> => {
      const before = local2.sent.length;
      model.lastSaid = message;
      await local2.receive(message);
      return (await waitFor(() => local2.sent[before], { what: `the answer to ${message}` })).message.text;
    };
    expect(await say2("/compress keep the deployment details")).toMatch(/^Compressed into a new session \(\S+\) that starts from the summary\.$/u);
    expect(text(model.summaryRequests.at(-1)!.messages[0]!.content)).toContain("Above all, keep what concerns: keep the deployment details");
    expect((await store.getEntry(await key()))!.sessionId).not.toBe(parent);
    expect(await say2("back")).toBe("ok back");
    await runner2.stop();
  });

  it("the agent gets its before-reset turn (reason compression) before the summary; compression.model is used for the summary; disabled means never", async () => {
    const { model, runner, say, key } = await setup({ hardMessageLimit: 10, model: "cheap-model" }, { window: 1_000_000, withBeforeReset: true });
    for (let i = 0; i < 6; i++) await say(`m${i}`);
    await runner.compressor.whenDone(await key());
    expect(model.resets.map((r) => r.reason)).toEqual(["compression"]);
    expect(model.summaryRequests.map((r) => r.model)).toEqual(["cheap-model"]);
    await runner.stop();

    const off = await setup({ hardMessageLimit: 10, enabled: false }, { window: 1_000_000 });
    for (let i = 0; i < 8; i++) await off.say(`m${i}`);
    await off.runner.compressor.whenDone(await off.key());
    expect(off.model.summaryRequests).toHaveLength(0);
    await off.runner.stop();
  });
});
