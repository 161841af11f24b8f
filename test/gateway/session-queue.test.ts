import { expect, it } from "vitest";
import { ManualClock } from "../../src/gateway/clock.js";
import { DEFAULT_MAX_QUEUE_DEPTH, SessionQueue } from "../../src/gateway/session-queue.js";
import { InvalidInputError } from "../../src/store/errors.js";
import { forEachBackend } from "./backends.js";

const KEY = "agent:main:telegram:group:-100:u1";
const T0 = 1_900_000_000;

forEachBackend((backend) => {
  async function setup() {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(T0);
    return { db, clock, queue: new SessionQueue(db, { clock }), reopen };
  }

  it("5 rapid messages: one turn each, in arrival order, never merged", async () => {
    const { queue } = await setup();
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map((n) => queue.enqueue(KEY, { messageId: `m${n}`, payload: `text ${n}` })));
    expect(outcomes.map((o) => o.status)).toEqual(["queued", "queued", "queued", "queued", "queued"]);
    const snap = await queue.snapshot(KEY);
    expect(snap.depth).toBe(5);
    expect(snap.slot?.payloads).toEqual(["text 1"]);
    expect(snap.overflow.map((i) => i.payloads[0])).toEqual(["text 2", "text 3", "text 4", "text 5"]);
    const turns: unknown[][] = [];
    for (let item = await queue.promote(KEY); item !== null; item = await queue.promote(KEY)) {
      turns.push(item.payloads);
      expect((await queue.snapshot(KEY)).inFlight?.id).toBe(item.id);
      expect(await queue.complete(KEY, item.id)).toBe(true);
    }
    expect(turns).toEqual([["text 1"], ["text 2"], ["text 3"], ["text 4"], ["text 5"]]);
    expect(await queue.depth(KEY)).toBe(0);
  });

  it("cap 32: the 33rd waiting message is rejected with a visible reason; nothing is dropped silently", async () => {
    const { queue } = await setup();
    expect(DEFAULT_MAX_QUEUE_DEPTH).toBe(32);
    for (let i = 0; i < 32; i++) expect((await queue.enqueue(KEY, { payload: i })).status).toBe("queued");
    const refused = await queue.enqueue(KEY, { payload: "one too many" });
    expect(refused.status).toBe("rejected");
    if (refused.status === "rejected") {
      expect(refused.depth).toBe(32);
      expect(refused.reason).toMatch(/32 messages waiting/);
      expect(refused.reason).toMatch(/\/new/);
    }
    // Promoting the head frees a place (depth = overflow + slot; the in-flight one is not waiting).
    await queue.promote(KEY);
    expect((await queue.enqueue(KEY, { payload: "fits now" })).status).toBe("queued");
    expect(await queue.depth(KEY)).toBe(32);
  });

  it("media of one album merge into one event; without an album, within 2 s; text never merges", async () => {
    const { queue, clock } = await setup();
    await queue.enqueue(KEY, { kind: "media", senderId: "u1", albumId: "A", messageId: "p1", payload: { photo: 1 } });
    clock.advance(5);
    const second = await queue.enqueue(KEY, { kind: "media", senderId: "u1", albumId: "A", messageId: "p2", payload: { photo: 2 } });
    expect(second.status).toBe("merged");
    // Another sender's photo does not join.
    expect((await queue.enqueue(KEY, { kind: "media", senderId: "u2", albumId: "A", payload: { photo: 3 } })).status).toBe("queued");
    clock.advance(10);
    await queue.enqueue(KEY, { kind: "media", senderId: "u1", payload: { photo: 4 } });
    clock.advance(2);
    expect((await queue.enqueue(KEY, { kind: "media", senderId: "u1", payload: { photo: 5 } })).status).toBe("merged");
    clock.advance(2.5);
    expect((await queue.enqueue(KEY, { kind: "media", senderId: "u1", payload: { photo: 6 } })).status).toBe("queued");
    await queue.enqueue(KEY, { payload: "a caption" });
    expect((await queue.enqueue(KEY, { payload: "another text" })).status).toBe("queued");
    const snap = await queue.snapshot(KEY);
    expect([snap.slot!, ...snap.overflow].map((i) => i.payloads)).toEqual([
      [{ photo: 1 }, { photo: 2 }],
      [{ photo: 3 }],
      [{ photo: 4 }, { photo: 5 }],
      [{ photo: 6 }],
      ["a caption"],
      ["another text"],
    ]);
    expect(snap.slot!.messageIds).toEqual(["p1", "p2"]);
  });

  it("a platform message id already queued is a duplicate", async () => {
    const { queue } = await setup();
    await queue.enqueue(KEY, { messageId: "42", payload: "hello" });
    expect(await queue.enqueue(KEY, { messageId: "42", payload: "hello (redelivered)" })).toEqual({ status: "duplicate", depth: 1 });
    expect(await queue.depth(KEY)).toBe(1);
  });

  it("/new clears the slot and the overflow", async () => {
    const { queue } = await setup();
    for (const text of ["a", "b", "c"]) await queue.enqueue(KEY, { payload: text });
    expect(await queue.clear(KEY)).toBe(3);
    expect(await queue.snapshot(KEY)).toEqual({ inFlight: null, slot: null, overflow: [], depth: 0 });
  });

  it("queued messages survive a crash and are replayed in order, the interrupted one first", async () => {
    const { queue, reopen, clock } = await setup();
    for (const text of ["first", "second", "third"]) await queue.enqueue(KEY, { messageId: text, payload: text });
    const inFlight = await queue.promote(KEY);
    expect(inFlight?.payloads).toEqual(["first"]);
    // The process dies here without completing "first". A new process opens the database.
    const restarted = new SessionQueue(await reopen(), { clock });
    expect(await restarted.pendingKeys()).toEqual([KEY]);
    const replay: unknown[] = [];
    for (let item = await restarted.promote(KEY); item !== null; item = await restarted.promote(KEY)) {
      replay.push(item.payloads[0]);
      await restarted.complete(KEY, item.id);
    }
    expect(replay).toEqual(["first", "second", "third"]);
    // A platform redelivering "second" after the replay is a new message again only once completed.
    expect(await restarted.pendingKeys()).toEqual([]);
  });

  it("bad input is refused clearly", async () => {
    const { queue, db } = await setup();
    await expect(queue.enqueue("../x", { payload: 1 })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(queue.enqueue(KEY, { payload: 1, kind: "sticker" as never })).rejects.toThrow(/kind/);
    expect(() => new SessionQueue(db, { maxDepth: 0 })).toThrow(/maxDepth/);
  });
});
