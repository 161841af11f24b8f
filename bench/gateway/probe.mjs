// Preloaded into the gateway child (`node --import <this file> dist/cli/main.js serve`)
// by bench/gateway/run.ts. It only observes; the gateway runs unchanged:
//
// - request in / reply out: Node's built-in diagnostics channels
//   `http.server.request.start` (headers parsed) and `http.server.response.finish`
//   (the whole reply handed to the socket), for requests carrying X-Bench-Id;
// - the agent's time: EchoAgent.prototype.runTurn and OpenAiCompatibleAgent.prototype.runTurn
//   (the classes the gateway itself instantiates, same module URLs; the second one's time is
//   the model call to the fake provider) are wrapped with two performance.now() calls, keyed
//   by the `bench:<id>` of the turn's last user message.
//
// Nothing is recorded unless the orchestrator says so over the IPC channel (so the RSS
// phase measures the gateway, not this file). Plain JS so the gateway runs under plain
// node, without tsx. Protocol: ProbeCommand / ProbeReply in protocol.ts.
import dc from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";

const { EchoAgent } = await import(new URL("../../dist/agents/echo-agent.js", import.meta.url).href);
const { OpenAiCompatibleAgent } = await import(new URL("../../dist/agents/openai-agent.js", import.meta.url).href);

let recording = false;
/** Event-loop utilization when recording began (collect reports the share of time the loop was busy since). */
let eluStart = performance.eventLoopUtilization();
/** @type {Map<string, {startMs: number, endMs: number | null, agentMs: number | null}>} */
let seen = new Map();

const entry = (id) => {
  let e = seen.get(id);
  if (e === undefined) {
    e = { startMs: Number.NaN, endMs: null, agentMs: null };
    seen.set(id, e);
  }
  return e;
};
const headerId = (request) => {
  const h = request.headers["x-bench-id"];
  return typeof h === "string" && h !== "" ? h : null;
};

dc.subscribe("http.server.request.start", ({ request }) => {
  if (!recording) return;
  const id = headerId(request);
  if (id !== null) entry(id).startMs = performance.now();
});
dc.subscribe("http.server.response.finish", ({ request }) => {
  if (!recording) return;
  const id = headerId(request);
  if (id !== null) entry(id).endMs = performance.now();
});

const lastUserBenchId = (messages) => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    const text = typeof m.content === "string" ? m.content : "";
    const match = /^bench:(\S+)/u.exec(text);
    return match ? match[1] : null;
  }
  return null;
};

for (const AgentClass of [EchoAgent, OpenAiCompatibleAgent]) {
  const runTurn = AgentClass.prototype.runTurn;
  AgentClass.prototype.runTurn = async function benchTimedRunTurn(input) {
    if (!recording) return runTurn.call(this, input);
    const started = performance.now();
    try {
      return await runTurn.call(this, input);
    } finally {
      const ms = performance.now() - started;
      const id = lastUserBenchId(input.messages);
      if (id !== null) entry(id).agentMs = ms;
    }
  };
}

if (typeof process.send === "function") {
  process.on("message", (msg) => {
    if (msg === null || typeof msg !== "object" || typeof msg.cmd !== "string") return;
    if (msg.cmd === "record") {
      recording = msg.on === true;
      if (recording) {
        seen = new Map();
        eluStart = performance.eventLoopUtilization();
      }
      process.send({ seq: msg.seq, cmd: "record" });
    } else if (msg.cmd === "collect") {
      recording = false;
      const samples = [...seen].map(([id, e]) => ({ id, startMs: e.startMs, endMs: e.endMs, agentMs: e.agentMs }));
      seen = new Map();
      const eventLoopUtilization = performance.eventLoopUtilization(eluStart).utilization;
      process.send({ seq: msg.seq, cmd: "collect", samples, eventLoopUtilization });
    } else if (msg.cmd === "gc") {
      const gc = globalThis.gc;
      if (typeof gc === "function") {
        gc();
        gc();
      }
      const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
      process.send({ seq: msg.seq, cmd: "gc", exposed: typeof gc === "function", memory: { rss, heapTotal, heapUsed, external, arrayBuffers } });
    }
  });
  // The gateway's own lifecycle decides when it exits, not this channel.
  process.channel?.unref();
}
