/**
 * `GET /gateway/live` (server-sent events) and `GET /gateway/status` over real loopback
 * HTTP, fed by a real GatewayRunner (LocalAdapter, an agent held mid-turn) through the
 * serve layer's live source: a snapshot on connect, one on each change (turn running,
 * message queued, turn done), `event: end` on shutdown; admin keys only; 404 without a gateway.
 */
import { afterEach, expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import type { Agent, AgentTurnInput } from "../../src/agents/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import { gatewayLiveSource } from "../../src/serve/gateway-live-status.js";
import { forEachBackend } from "../gateway/backends.js";
import { waitFor } from "../support/wait-for.js";
import { ADMIN, ALICE, call, closeServers, startApi } from "./api-harness.js";

afterEach(closeServers);

/** An agent whose turns wait until released. */
class HeldAgent implements Agent {
  readonly name = "held";
  static release: () => void = () => {};
  static gate = new Promise<void>((resolve) => (HeldAgent.release = resolve));
  async runTurn(_input: AgentTurnInput) {
    await HeldAgent.gate;
    return { messages: [{ role: "assistant" as const, content: "done" }] };
  }
}

/** Reads server-sent events from a streaming response. */
class EventReader {
  readonly events: Array<{ event: string; data: any }> = [];
  readonly comments: string[] = [];
  ended = false;
  #buffer = "";
  constructor(body: ReadableStream<Uint8Array>) {
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
          this.#buffer += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = this.#buffer.indexOf("\n\n")) >= 0) {
            const block = this.#buffer.slice(0, cut);
            this.#buffer = this.#buffer.slice(cut + 2);
            if (block.startsWith(":")) this.comments.push(block);
            else {
              const event = /^event: (.*)$/mu.exec(block)?.[1] ?? "message";
              const data = /^data: (.*)$/mu.exec(block)?.[1] ?? "null";
              this.events.push({ event, data: JSON.parse(data) });
            }
          }
        }
      } catch {
        // the connection was cut
      }
      this.ended = true;
    })();
  }
  /** Waits (at most 10 s) for an event matching `test` after index `from`. */
  next(test: (e: { event: string; data: any }) => boolean, from = 0): Promise<{ event: string; data: any }> {
    return waitFor(() => this.events.slice(from).find(test), {
      what: "a matching live event",
      timeoutMs: 10_000,
      describe: () => `got ${JSON.stringify(this.events)}`,
    });
  }
}

forEachBackend((backend) => {
  it("GET /gateway/live: a snapshot on connect and on each change; event: end on shutdown", async () => {
    const { db } = await backend.fresh();
    HeldAgent.gate = new Promise<void>((resolve) => (HeldAgent.release = resolve));
    const local = new LocalAdapter();
    const runner = new GatewayRunner({ store: new SessionRouter({ db }), agentFactory: () => new HeldAgent(), adapters: [local] });
    await runner.start();
    const api = await startApi(db, { gatewayLive: gatewayLiveSource(runner), liveIntervalMs: 50 });

    const status = await call(api, "GET", "/gateway/status");
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ accepting: true, activeTurns: 0, queuedTotal: 0, adapters: [{ platform: "local", connected: true }] });

    const response = await fetch(`${api.url}/gateway/live`, { headers: { "x-api-key": ADMIN }, signal: AbortSignal.timeout(20_000) });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("x-request-id")).toEqual(expect.any(String));
    const reader = new EventReader(response.body!);
    const first = await reader.next((e) => e.event === "snapshot");
    expect(first.data).toMatchObject({ activeTurns: 0, runningSessions: [], queueDepths: [] });

    expect((await local.receive("hello")).status).toBe("accepted");
    // The first snapshot of the turn may come before its route is stored (sessionId null): wait for the one naming the session.
    const running = await reader.next((e) => e.data?.activeTurns === 1 && e.data.runningSessions?.[0]?.sessionId != null);
    expect(running.data.runningSessions).toEqual([{ key: expect.any(String), sessionId: expect.any(String), platform: "local", phase: "turn" }]);
    expect(await db.getSession(running.data.runningSessions[0].sessionId)).not.toBeNull();

    expect((await local.receive("and this")).status).toBe("queued");
    const queued = await reader.next((e) => e.data?.queuedTotal === 1);
    expect(queued.data.queueDepths).toEqual([{ key: running.data.runningSessions[0].key, depth: 1 }]);

    HeldAgent.release();
    // Idle: both turns done and the session's worker gone (it lingers a moment "between" turns).
    const idle = reader.next(
      (e) => e.data?.activeTurns === 0 && e.data?.queuedTotal === 0 && e.data?.turnsCompleted === 2 && e.data?.runningSessions?.length === 0,
      1,
    );
    expect((await idle).data.liveAgents).toBe(1);
    // Nothing changes: no new snapshot is sent while it stays idle. The barrier is the
    // keep-alive comment, written only after 15 checks in a row (50 ms apart) found nothing new.
    const count = reader.events.length;
    const quiet = reader.comments.length;
    await waitFor(() => reader.comments.length > quiet, { what: "a keep-alive comment on the idle stream", timeoutMs: 10_000 });
    expect(reader.comments.at(-1)).toBe(": keep-alive");
    expect(reader.events.length).toBe(count);

    await api.close();
    await reader.next((e) => e.event === "end");
    await waitFor(() => reader.ended, { what: "the live stream to end", timeoutMs: 5_000 });
    await runner.stop();
  });

  it("GET /gateway/live and /gateway/status: admin keys only; 404 without a gateway", async () => {
    const { db } = await backend.fresh();
    const runner = new GatewayRunner({ store: new SessionRouter({ db }), agentFactory: () => new HeldAgent(), adapters: [new LocalAdapter()] });
    const api = await startApi(db, { gatewayLive: gatewayLiveSource(runner) });
    for (const path of ["/gateway/live", "/gateway/status"]) {
      const reply = await call(api, "GET", path, { key: ALICE });
      expect(reply.status, path).toBe(403);
      expect(reply.body.error.code).toBe("TL_ERR_FORBIDDEN");
      expect((await call(api, "GET", path, { key: null })).status).toBe(401);
    }
    const plain = await startApi(db);
    for (const path of ["/gateway/live", "/gateway/status"]) {
      const reply = await call(plain, "GET", path);
      expect(reply.status, path).toBe(404);
      expect(reply.body.error.message).toContain("threadline serve");
    }
  });
});
