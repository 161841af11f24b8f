import { describe, expect, it, vi } from "vitest";
import { AgentCache } from "../../src/gateway/agent-cache.js";
import { ManualClock } from "../../src/gateway/clock.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../src/store/errors.js";

interface FakeAgent {
  name: string;
}

function setup(options: { maxSize?: number; idleTtlSeconds?: number } = {}) {
  const clock = new ManualClock(1_000);
  const disposed: string[] = [];
  const dispose = vi.fn((agent: FakeAgent, key: string) => {
    disposed.push(`${key}=${agent.name}`);
  });
  const cache = new AgentCache<FakeAgent>({ ...options, clock, dispose });
  return { clock, cache, disposed, dispose };
}

const agent = (name: string): FakeAgent => ({ name });

describe("AgentCache: LRU", () => {
  it("evicts the least recently used agent past maxSize", () => {
    const { cache, disposed } = setup({ maxSize: 3 });
    cache.set("a", agent("A")).set("b", agent("B")).set("c", agent("C"));
    expect(cache.size).toBe(3);
    cache.set("d", agent("D"));
    expect(cache.size).toBe(3);
    expect(cache.has("a")).toBe(false);
    expect(disposed).toEqual(["a=A"]);
  });

  it("get marks an agent recently used; has does not", () => {
    const { cache, disposed } = setup({ maxSize: 3 });
    cache.set("a", agent("A")).set("b", agent("B")).set("c", agent("C"));
    expect(cache.get("a")?.name).toBe("A");
    expect(cache.has("b")).toBe(true);
    cache.set("d", agent("D"));
    expect(disposed).toEqual(["b=B"]);
    cache.set("e", agent("E"));
    expect(disposed).toEqual(["b=B", "c=C"]);
    expect(["a", "d", "e"].every((k) => cache.has(k))).toBe(true);
  });

  it("returns undefined for a missing key", () => {
    const { cache } = setup();
    expect(cache.get("nope")).toBeUndefined();
    expect(cache.has("nope")).toBe(false);
  });

  it("replacing an agent disposes the old one once; setting the same agent again does not", () => {
    const { cache, disposed } = setup();
    const a1 = agent("A1");
    cache.set("a", a1);
    cache.set("a", a1);
    expect(disposed).toEqual([]);
    cache.set("a", agent("A2"));
    expect(disposed).toEqual(["a=A1"]);
    expect(cache.get("a")?.name).toBe("A2");
    expect(cache.size).toBe(1);
  });
});

describe("AgentCache: TTL", () => {
  it("sweep evicts agents idle longer than the TTL (strictly)", () => {
    const { cache, clock, disposed } = setup({ idleTtlSeconds: 60 });
    cache.set("a", agent("A"));
    clock.advance(30);
    cache.set("b", agent("B"));
    clock.advance(30);
    expect(cache.sweep()).toBe(0); // a idle exactly 60 s
    clock.advance(1);
    expect(cache.sweep()).toBe(1);
    expect(disposed).toEqual(["a=A"]);
    expect(cache.has("b")).toBe(true);
    clock.advance(30);
    expect(cache.sweep()).toBe(1);
    expect(cache.size).toBe(0);
    expect(cache.sweep()).toBe(0);
  });

  it("get refreshes the idle time", () => {
    const { cache, clock } = setup({ idleTtlSeconds: 60 });
    cache.set("a", agent("A"));
    clock.advance(50);
    cache.get("a");
    clock.advance(50);
    expect(cache.sweep()).toBe(0);
    clock.advance(11);
    expect(cache.sweep()).toBe(1);
  });
});

describe("AgentCache: busy agents", () => {
  it("never evicts an agent mid-turn by TTL; idle time restarts when the turn ends", () => {
    const { cache, clock, disposed } = setup({ idleTtlSeconds: 60 });
    cache.set("a", agent("A"));
    cache.beginTurn("a");
    expect(cache.isBusy("a")).toBe(true);
    clock.advance(10_000);
    expect(cache.sweep()).toBe(0);
    expect(cache.endTurn("a")).toBe(true);
    expect(cache.isBusy("a")).toBe(false);
    clock.advance(60);
    expect(cache.sweep()).toBe(0);
    clock.advance(1);
    expect(cache.sweep()).toBe(1);
    expect(disposed).toEqual(["a=A"]);
  });

  it("never evicts an agent mid-turn by overflow: skips it for the next LRU one", () => {
    const { cache, disposed } = setup({ maxSize: 2 });
    cache.set("a", agent("A")).set("b", agent("B"));
    cache.beginTurn("a");
    cache.get("b"); // b is now most recent but idle; a is LRU but busy
    cache.set("c", agent("C"));
    expect(disposed).toEqual(["b=B"]);
    expect(cache.has("a")).toBe(true);
  });

  it("grows past maxSize when every agent is busy and shrinks as turns end", () => {
    const { cache, disposed } = setup({ maxSize: 2 });
    cache.set("a", agent("A")).set("b", agent("B"));
    cache.beginTurn("a");
    cache.beginTurn("b");
    cache.set("c", agent("C"));
    cache.beginTurn("c");
    cache.set("d", agent("D"));
    expect(cache.size).toBe(4);
    expect(disposed).toEqual([]);
    cache.endTurn("b");
    // b is idle again and most recently used: the overflow (2 over) sheds d, then b
    expect(disposed).toEqual(["d=D", "b=B"]);
    expect(cache.size).toBe(2);
    expect(cache.has("a")).toBe(true);
    expect(cache.has("c")).toBe(true);
    cache.endTurn("a");
    cache.endTurn("c");
    expect(cache.size).toBe(2);
  });

  it("counts nested turns", () => {
    const { cache, clock } = setup({ idleTtlSeconds: 1 });
    cache.set("a", agent("A"));
    cache.beginTurn("a");
    cache.beginTurn("a");
    cache.endTurn("a");
    clock.advance(5);
    expect(cache.sweep()).toBe(0);
    cache.endTurn("a");
    expect(cache.endTurn("a")).toBe(false);
    clock.advance(5);
    expect(cache.sweep()).toBe(1);
  });

  it("refuses to replace an agent mid-turn and to begin a turn for an unknown key", () => {
    const { cache } = setup();
    cache.set("a", agent("A"));
    cache.beginTurn("a");
    expect(() => cache.set("a", agent("A2"))).toThrow(ConflictError);
    expect(cache.get("a")?.name).toBe("A");
    expect(() => cache.beginTurn("zzz")).toThrow(NotFoundError);
    expect(cache.endTurn("zzz")).toBe(false);
  });
});

describe("AgentCache: release, clear, dispose", () => {
  it("release removes and disposes, even mid-turn", () => {
    const { cache, dispose } = setup();
    cache.set("a", agent("A"));
    cache.beginTurn("a");
    expect(cache.release("a")).toBe(true);
    expect(cache.release("a")).toBe(false);
    expect(dispose).toHaveBeenCalledTimes(1);
    expect(cache.endTurn("a")).toBe(false);
  });

  it("clear disposes everything exactly once", () => {
    const { cache, dispose, disposed } = setup();
    cache.set("a", agent("A")).set("b", agent("B"));
    cache.beginTurn("b");
    cache.clear();
    expect(cache.size).toBe(0);
    expect(disposed).toEqual(["a=A", "b=B"]);
    cache.clear();
    expect(dispose).toHaveBeenCalledTimes(2);
  });

  it("disposes exactly once per eviction over a mixed workload", () => {
    const { cache, clock, dispose } = setup({ maxSize: 3, idleTtlSeconds: 100 });
    const evictedAgents: FakeAgent[] = [];
    dispose.mockImplementation((a: FakeAgent) => {
      evictedAgents.push(a);
    });
    const all: FakeAgent[] = [];
    for (let i = 0; i < 20; i += 1) {
      const a = agent(`A${i}`);
      all.push(a);
      cache.set(`k${i % 7}`, a);
      if (i % 4 === 0) cache.get(`k${(i + 3) % 7}`);
      clock.advance(30);
      cache.sweep();
    }
    cache.clear();
    expect(new Set(evictedAgents).size).toBe(evictedAgents.length);
    expect(new Set(evictedAgents)).toEqual(new Set(all));
  });

  it("calls the agent's own dispose() when no dispose option is given", async () => {
    const clock = new ManualClock(0);
    const calls: string[] = [];
    class Disposable {
      constructor(readonly name: string) {}
      dispose(): Promise<void> {
        calls.push(this.name);
        return Promise.resolve();
      }
    }
    const cache = new AgentCache<Disposable | { name: string }>({ maxSize: 1, clock });
    cache.set("a", new Disposable("A"));
    cache.set("b", { name: "plain" });
    cache.set("c", new Disposable("C"));
    cache.release("c");
    await cache.waitForDisposals();
    expect(calls).toEqual(["A", "C"]);
  });

  it("reports dispose failures without breaking the cache", async () => {
    const clock = new ManualClock(0);
    const errors: string[] = [];
    const cache = new AgentCache<string>({
      clock,
      dispose: (agent) => {
        if (agent === "sync") throw new Error("sync boom");
        return Promise.reject(new Error("async boom"));
      },
      onDisposeError: (error, key) => errors.push(`${key}: ${(error as Error).message}`),
    });
    cache.set("a", "sync").set("b", "async");
    cache.clear();
    await cache.waitForDisposals();
    expect(errors).toEqual(["a: sync boom", "b: async boom"]);
    expect(cache.size).toBe(0);
  });

  it("validates its options", () => {
    expect(() => new AgentCache({ maxSize: 0 })).toThrow(InvalidInputError);
    expect(() => new AgentCache({ maxSize: 1.5 })).toThrow(InvalidInputError);
    expect(() => new AgentCache({ idleTtlSeconds: 0 })).toThrow(InvalidInputError);
    expect(() => new AgentCache({ idleTtlSeconds: Infinity })).not.toThrow();
  });
});
