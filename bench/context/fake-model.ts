/**
 * The model of the context benchmark, in its own process (so its token counting never runs on
 * the gateway's event loop): the fake OpenAI-compatible server of the tests
 * (test/support/fake-openai-server.ts) on 127.0.0.1, with a context window.
 *
 * - Every chat-completions request is counted with `tokenCounterFor(model)` and refused with
 *   OpenAI's 400 `context_length_exceeded` when over the window (the server's `contextWindow`).
 * - A turn (the last message starts with the workload's `[t<k>]` marker) is answered with
 *   {@link modelReply} for k, after `turnDelayMs`.
 * - A summary request (any other chat request that asks for a summary) gets {@link summaryReply},
 *   after `summaryDelayMs` (slower, as a real summary is: a reply that waited for it shows).
 * - A title request gets a fixed title after `turnDelayMs`.
 * - `GET /bench/stats` answers the log: every chat request in arrival order (kind, turn, tokens,
 *   refused, whether it carried turn 1's fact), the window figures and the requests in flight.
 *
 * argv[2]: JSON {@link FakeModelSettings}. Prints `{"url":"http://127.0.0.1:<port>/v1"}` once
 * listening; SIGTERM stops it.
 */
import http, { type Server } from "node:http";
import { syncBuiltinESMExports } from "node:module";
import { performance } from "node:perf_hooks";
import { earlyFact, modelReply, summaryReply, turnOf } from "./workload.js";

/** What the parent passes. */
export interface FakeModelSettings {
  window: number;
  seed: number;
  turnDelayMs: number;
  summaryDelayMs: number;
}

/** One chat request as the fake saw it. */
export interface FakeModelRequest {
  /** Arrival order, 0-based. */
  seq: number;
  kind: "turn" | "summary" | "title" | "other";
  /** The workload turn a turn request answers (its last message's marker); null otherwise. */
  turn: number | null;
  /** Counted tokens (messages + tools + max_tokens). */
  tokens: number;
  messages: number;
  /** Refused as over the window. */
  refused: boolean;
  /** The request's messages hold turn 1's fact. */
  fact: boolean;
  /** Arrival, ms since the epoch (performance.timeOrigin + now). */
  at: number;
}

/** `GET /bench/stats`. */
export interface FakeModelStats {
  window: { window: number; counted: number; maxTokens: number; refusals: number } | null;
  requests: FakeModelRequest[];
  inflight: number;
  /** Ms since the epoch of the last request's start or end. */
  lastActivity: number;
}

const SUMMARY_ASK = /\bsummar(?:y|ies|i[sz]e|i[sz]ing)\b/iu;
const SUMMARISE = /\bsummari[sz]e\b/iu;
const epochNow = (): number => performance.timeOrigin + performance.now();

const settings = JSON.parse(process.argv[2] ?? "{}") as FakeModelSettings;
let inflight = 0;
let lastActivity = epochNow();
// Count the requests in flight (the parent waits for none before it reads the final figures).
const createServer = http.createServer;
http.createServer = ((...args: Parameters<typeof createServer>): Server => {
  const server = createServer(...args);
  server.prependListener("request", (_req, res: http.ServerResponse) => {
    inflight += 1;
    lastActivity = epochNow();
    res.once("close", () => {
      inflight -= 1;
      lastActivity = epochNow();
    });
  });
  return server;
}) as typeof createServer;
syncBuiltinESMExports();

const { fakeTextReply, messageText, startFakeOpenAiServer } = await import("../../test/support/fake-openai-server.js");
const { tokenCounterFor } = await import("../../src/context/token-count.js");

const fact = earlyFact(settings.seed);
const log: FakeModelRequest[] = [];
const kinds = new WeakMap<object, { kind: FakeModelRequest["kind"]; turn: number | null }>();

type Req = import("../../test/support/fake-openai-server.js").FakeOpenAiRequest;
function classify(request: Req): { kind: FakeModelRequest["kind"]; turn: number | null } {
  const known = kinds.get(request);
  if (known !== undefined) return known;
  const messages = request.body?.messages ?? [];
  const last = messages.at(-1);
  const lastText = last === undefined ? "" : messageText(last.content);
  const turn = last?.role === "user" ? turnOf(lastText) : null;
  // A system message that tells the model to summarise makes a summary request even when the
  // messages it is given end with a user turn; a turn's own system prompt may mention a summary.
  const kind: FakeModelRequest["kind"] =
    request.kind === "title"
      ? "title"
      : messages.some((m) => m.role === "system" && SUMMARISE.test(messageText(m.content)))
        ? "summary"
        : turn !== null
          ? "turn"
          : last !== undefined && SUMMARY_ASK.test(lastText)
            ? "summary"
            : "other";
  const result = { kind, turn };
  kinds.set(request, result);
  return result;
}

const server = await startFakeOpenAiServer({
  contextWindow: settings.window,
  title: "Deploy questions",
  script: async (request) => {
    if (request.method === "GET" && request.path === "/bench/stats") {
      const stats: FakeModelStats = { window: server.window(), requests: log, inflight, lastActivity };
      return { json: stats };
    }
    if (request.kind === "other" || !Array.isArray(request.body?.messages)) return null;
    const { kind, turn } = classify(request);
    const model = String(request.body.model ?? "bench-model");
    const counter = await tokenCounterFor(model);
    const text =
      kind === "turn"
        ? modelReply(settings.seed, turn!)
        : kind === "summary"
          ? summaryReply(request.body.messages.map((m) => messageText(m.content)).join("\n"))
          : kind === "title"
            ? "Deploy questions"
            : "Noted.";
    const usage = { prompt_tokens: request.tokens ?? 0, completion_tokens: counter.count(text), total_tokens: (request.tokens ?? 0) + counter.count(text) };
    return { ...fakeTextReply(text, { model, usage }), delayMs: kind === "summary" ? settings.summaryDelayMs : settings.turnDelayMs };
  },
  onReply: (request) => {
    if (request.kind === "other") return;
    const { kind, turn } = classify(request);
    log.push({
      seq: log.length,
      kind,
      turn,
      tokens: request.tokens ?? 0,
      messages: request.body?.messages?.length ?? 0,
      refused: request.overWindow === true,
      fact: request.rawBody.includes(fact),
      at: epochNow(),
    });
  },
});
// The server keeps every request for the tests; a long run must not.
setInterval(() => server.requests.splice(0), 1000).unref();
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
