/**
 * Inbound claims in the runner: a platform message delivered to several replicas on one
 * database (every Discord session of one token gets each event) is stored once and answered
 * once, whether it runs at once or is queued, and a slash command runs once; a message
 * redelivered to a restarted process is still a duplicate.
 */
import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import type { Agent } from "../../src/agents/index.js";
import { GatewayRunner, SessionStore } from "../../src/gateway/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend } from "./backends.js";

/** Answers "<name>: <text>" after a gate opens (so the test decides when turns end). */
function agent(name: string, gate: { open: Promise<void> }): Agent {
  return {
    name,
    runTurn: async (input) => {
      await gate.open;
      const last = [...input.messages].reverse().find((m) => m.role === "user");
      return { messages: [{ role: "assistant", content: `${name}: ${String(last?.content)}` }] };
    },
  };
}

forEachBackend((backend) => {
  async function replica(db: SessionDB, holder: string, gate: { open: Promise<void> }, leases = true) {
    const local = new LocalAdapter({ platform: "discord" });
    const runner = new GatewayRunner({
      store: new SessionStore({ db }),
      adapters: [local],
      agentFactory: () => agent(holder, gate),
      leases: leases ? { holder, ttlSeconds: 5 } : null,
    });
    await runner.start();
    return { runner, local };
  }

  const chat = { chatId: "dm-42", userId: "u42", chatType: "dm" as const };
  const replies = (...locals: LocalAdapter[]) => locals.flatMap((l) => l.sent).filter((d) => d.message.kind === "reply");

  // Replicas run with session leases (`gateway.leases`; on by default with PostgreSQL): without them two
  // workers of one key could both take its queue head.
  it("a message delivered to two replicas at once is stored and answered once", async () => {
    const { db, reopen } = await backend.fresh();
    const gate = { open: Promise.resolve() };
    const a = await replica(db, "replica-a", gate);
    const b = await replica(await reopen(), "replica-b", gate);
    for (let i = 1; i <= 4; i++) {
      const extra = { messageId: `snowflake-${i}` };
      const acks = await Promise.all([a.local.receive(`hello ${i}`, chat, extra), b.local.receive(`hello ${i}`, chat, extra)]);
      const statuses = acks.map((ack) => ack.status).sort();
      expect(
        statuses.filter((s) => s === "duplicate"),
        JSON.stringify(acks),
      ).toHaveLength(1);
      expect(statuses.filter((s) => s === "accepted" || s === "queued")).toHaveLength(1);
    }
    await waitFor(() => replies(a.local, b.local).length >= 4, { what: "four replies" });
    // A fifth message through one replica: its reply comes after anything the first four caused.
    await a.local.receive("barrier", chat, { messageId: "snowflake-5" });
    await waitFor(() => replies(a.local, b.local).some((d) => d.message.text.endsWith(": barrier")), { what: "the barrier's reply" });
    const texts = replies(a.local, b.local).map((d) => d.message.text.replace(/^replica-[ab]: /u, ""));
    expect(texts.sort()).toEqual(["barrier", "hello 1", "hello 2", "hello 3", "hello 4"]);
    const sessionId = replies(a.local, b.local)[0]!.message.sessionId!;
    const users = (await db.getMessages(sessionId)).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["hello 1", "hello 2", "hello 3", "hello 4", "barrier"]);
    await a.runner.drain(1000);
    await b.runner.drain(1000);
  });

  it("a message queued by one replica while the other runs a turn is answered once, and so is a slash command", async () => {
    const { db, reopen } = await backend.fresh();
    let open!: () => void;
    const gate = { open: new Promise<void>((resolve) => (open = resolve)) };
    const a = await replica(db, "replica-a", gate);
    const b = await replica(await reopen(), "replica-b", gate);
    // A turn runs (held at the gate) in replica A.
    expect((await a.local.receive("first", chat, { messageId: "s-1" })).status).toBe("accepted");
    // The next message reaches both: one queues it, the other finds it claimed.
    const acks = await Promise.all([a.local.receive("second", chat, { messageId: "s-2" }), b.local.receive("second", chat, { messageId: "s-2" })]);
    expect(acks.map((ack) => ack.status).sort()).toEqual(["duplicate", "queued"]);
    expect((await db.listQueue(acks[0]!.sessionKey)).map((item) => item.messageIds)).toEqual([["s-2"]]);
    open();
    await waitFor(() => replies(a.local, b.local).length >= 2, { what: "two replies" });
    // A command delivered to both runs once (one notice: the title set).
    const commandAcks = await Promise.all([
      a.local.receive("/title Claimed chat", chat, { messageId: "s-3" }),
      b.local.receive("/title Claimed chat", chat, { messageId: "s-3" }),
    ]);
    expect(commandAcks.map((ack) => ack.status).sort()).toEqual(["command", "duplicate"]);
    await a.local.receive("after", chat, { messageId: "s-4" });
    await waitFor(() => replies(a.local, b.local).some((d) => d.message.text.endsWith(": after")), { what: "the last reply" });
    const notices = [...a.local.sent, ...b.local.sent].filter((d) => d.message.inReplyTo.includes("s-3"));
    expect(notices).toHaveLength(1);
    expect(
      replies(a.local, b.local)
        .map((d) => d.message.text.replace(/^replica-[ab]: /u, ""))
        .sort(),
    ).toEqual(["after", "first", "second"]);
    await a.runner.drain(1000);
    await b.runner.drain(1000);
  });

  it("a message redelivered after a restart is a duplicate even when the transcript window no longer shows it", async () => {
    const { db, reopen } = await backend.fresh();
    const gate = { open: Promise.resolve() };
    const first = await replica(db, "run-1", gate, false);
    expect((await first.local.receive("old", chat, { messageId: "old-id" })).status).toBe("accepted");
    for (let i = 0; i < 30; i++) {
      await first.local.receive(`filler ${i}`, chat, { messageId: `filler-${i}` });
      await waitFor(() => replies(first.local).length >= i + 2, { what: `reply ${i + 2}` });
    }
    await first.runner.drain(1000);
    await first.runner.stop();
    const second = await replica(await reopen(), "run-2", gate, false);
    expect((await second.local.receive("old", chat, { messageId: "old-id" })).status).toBe("duplicate");
    expect((await second.local.receive("new", chat, { messageId: "new-id" })).status).toBe("accepted");
    await waitFor(() => replies(second.local).length >= 1, { what: "the reply to the new message" });
    expect(replies(second.local).map((d) => d.message.text)).toEqual(["run-2: new"]);
    await second.runner.drain(1000);
  });
});
