import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import type { Agent, AgentTurnInput } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import type { SessionDB } from "../../src/store/contract.js";
import { waitFor } from "../support/wait-for.js";
import { forEachBackend } from "./backends.js";

/** Counts turns running at once for each session, across every replica of the test. */
class TurnTracker {
  running = new Map<string, number>();
  overlaps = 0;
  agent(name: string, delayMs: number): Agent {
    return {
      name,
      runTurn: async (input: AgentTurnInput) => {
        const now = (this.running.get(input.sessionId) ?? 0) + 1;
        this.running.set(input.sessionId, now);
        if (now > 1) this.overlaps += 1;
        await new Promise((r) => setTimeout(r, delayMs));
        this.running.set(input.sessionId, (this.running.get(input.sessionId) ?? 1) - 1);
        const last = [...input.messages].reverse().find((m) => m.role === "user");
        return { messages: [{ role: "assistant", content: `${name}: ${String(last?.content)}` }] };
      },
    };
  }
}

forEachBackend((backend) => {
  async function replica(db: SessionDB, holder: string, tracker: TurnTracker) {
    const store = new SessionRouter({ db });
    const local = new LocalAdapter();
    const runner = new GatewayRunner({
      store,
      adapters: [local],
      agentFactory: () => tracker.agent(holder, 40),
      leases: { holder, ttlSeconds: 5 },
    });
    await runner.start();
    return { runner, local };
  }

  it("two replicas on one database never run two turns of one session at once; every message gets one turn, in order", async () => {
    const { db, reopen } = await backend.fresh();
    const tracker = new TurnTracker();
    const a = await replica(db, "replica-a", tracker);
    const b = await replica(await reopen(), "replica-b", tracker);
    const chat = { chatId: "shared-chat", userId: "u1" };
    // Interleave eight messages to one session between the two replicas.
    const acks = [];
    for (let i = 1; i <= 8; i++) acks.push(await (i % 2 === 1 ? a : b).local.receive(`m${i}`, chat, { messageId: `platform-${i}` }));
    expect(acks.filter((ack) => ack.status === "accepted" || ack.status === "queued")).toHaveLength(8);
    // Wait until all eight replies have been sent by one replica or the other.
    const replies = () => [...a.local.sent, ...b.local.sent].filter((d) => d.message.kind === "reply");
    await waitFor(() => replies().length >= 8, {
      what: "eight replies",
      describe: () =>
        `replies: ${replies()
          .map((d) => d.message.text)
          .join(", ")}`,
    });
    expect(replies()).toHaveLength(8);
    expect(tracker.overlaps).toBe(0);
    const sessionId = replies()[0]!.message.sessionId!;
    const users = (await db.getMessages(sessionId)).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"]);
    const messages = await db.getMessages(sessionId);
    // Each user message is followed by exactly its reply.
    for (let i = 0; i < messages.length; i += 2) {
      expect(messages[i]!.role).toBe("user");
      expect(String(messages[i + 1]!.content)).toMatch(new RegExp(`: ${String(messages[i]!.content)}$`));
    }
    await a.runner.drain(1000);
    await b.runner.drain(1000);
  });

  it("a message that arrives while the worker before it gives its lease back keeps the lease it is run under", async () => {
    // A closed-loop client sends its next message as soon as it has the reply, which can be
    // while the finished worker's release is on its way to the database. This process holds
    // the key under one holder name, so an acquire then would get the very lease (same token)
    // that the release drops, and the next turn's fenced writes would fail.
    const { db } = await backend.fresh();
    const tracker = new TurnTracker();
    const solo = await replica(db, "replica-solo", tracker);
    const chat = { chatId: "closed-loop" };
    const release = db.releaseLease.bind(db);
    let second: Promise<unknown> | null = null;
    // The second message arrives when the first worker starts giving its lease back, and is
    // taken (stored or queued) before that release reaches the database.
    db.releaseLease = async (key, holder, token) => {
      if (second === null) {
        second = solo.local.receive("m2", chat);
        await second;
      }
      return release(key, holder, token);
    };
    const first = await solo.local.receive("m1", chat);
    expect(first.status).toBe("accepted");
    await waitFor(() => solo.local.sent.filter((d) => d.message.kind === "reply").length >= 2, {
      what: "both replies",
      describe: () => JSON.stringify(solo.local.sent.map((d) => d.message.text)),
    });
    expect(solo.local.sent.filter((d) => d.message.kind === "reply").map((d) => d.message.text)).toEqual(["replica-solo: m1", "replica-solo: m2"]);
    const sessionId = solo.local.sent[0]!.message.sessionId!;
    expect((await db.getMessages(sessionId)).map((m) => [m.role, m.content])).toEqual([
      ["user", "m1"],
      ["assistant", "replica-solo: m1"],
      ["user", "m2"],
      ["assistant", "replica-solo: m2"],
    ]);
    await solo.runner.drain(1000);
    // Every worker gave its lease back.
    expect(await db.getLease(first.sessionKey)).toBeNull();
  });

  it("a replica that dies loses its lease at expiry; the next holder resumes its cut-off turn before the next message", async () => {
    const { db, reopen } = await backend.fresh();
    const tracker = new TurnTracker();
    const deadDb = await reopen();
    const deadLocal = new LocalAdapter();
    // The "dead" replica takes the lease with a 1 s TTL and never finishes its turn.
    const dead = new GatewayRunner({
      store: new SessionRouter({ db: deadDb }),
      adapters: [deadLocal],
      agentFactory: () => ({ name: "stuck", runTurn: () => new Promise(() => {}) }),
      leases: { holder: "replica-dead", ttlSeconds: 1 },
    });
    await dead.start();
    await deadLocal.receive("first", { chatId: "c" });
    // Its process dies: it can no longer renew the lease or write anything.
    await deadDb.close();
    const live = await replica(db, "replica-live", tracker);
    expect((await live.local.receive("second", { chatId: "c" })).status).toBe("queued");
    // Replicas sweep queued sessions whose lease expired (serve does this every lease TTL).
    await waitFor(
      async () => {
        await live.runner.replayQueues();
        return live.local.sent.length >= 2;
      },
      {
        what: "the live replica to answer both messages",
        timeoutMs: 10_000,
        intervalMs: 250,
        describe: () => JSON.stringify(live.local.sent.map((d) => d.message.text)),
      },
    );
    // Taking the lease over for the queued message, it first finishes the turn the dead
    // replica left marked as running (as its sweep would have), then runs "second".
    expect(live.local.sent.map((d) => d.message.text)).toEqual(["replica-live: first", "replica-live: second"]);
    const sessionId = live.local.sent[0]!.message.sessionId!;
    expect((await db.getMessages(sessionId)).map((m) => [m.role, m.content])).toEqual([
      ["user", "first"],
      ["assistant", "replica-live: first"],
      ["user", "second"],
      ["assistant", "replica-live: second"],
    ]);
    await live.runner.drain(1000);
  });
});
