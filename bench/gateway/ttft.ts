/**
 * The streaming phase of `bench:gateway`: time to first token (TTFT) through the gateway
 * against the provider's own. A fake provider (provider-child.ts, its own process) streams
 * a fixed reply word by word; the gateway (`serve` with that provider, titles off) is
 * asked with `stream: true`. Requests go one at a time, alternating provider-direct and
 * gateway, so both see the same machine load:
 *
 * - direct: POST <provider>/chat/completions with `stream: true` → first content delta;
 * - gateway streamed: POST <gateway>/v1/chat/completions with `stream: true` → first content delta;
 * - gateway unstreamed: the same without `stream` → the whole reply (what a client waited for
 *   before replies streamed: the first token came with the last).
 *
 * Times are taken in this process from the request's start to the first SSE `data:` event
 * carrying content (and to the end of the response).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { log } from "../log.js";
import { PROJECT_ROOT } from "./gateway-child.js";
import { round3, spread, type Spread } from "./stats.js";

const PROVIDER = fileURLToPath(new URL("./provider-child.ts", import.meta.url));

/** The provider's pacing. */
export interface ProviderPacing {
  firstTokenMs: number;
  tokenGapMs: number;
  words: number;
  /** `echo`: the reply is `Echo: <last user message>`, whole after `firstTokenMs` (the model-delay phase); default `words`. */
  reply?: "words" | "echo";
  /** The provider's HTTP keep-alive timeout, ms (default Node's, 5 s). */
  keepAliveMs?: number;
}

/** A running provider child. */
export interface ProviderChild {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** Starts provider-child.ts (node + tsx) and waits for its URL. */
export async function startProviderChild(pacing: ProviderPacing): Promise<ProviderChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      PROVIDER,
      String(pacing.firstTokenMs),
      String(pacing.tokenGapMs),
      String(pacing.words),
      pacing.reply ?? "words",
      ...(pacing.keepAliveMs === undefined ? [] : [String(pacing.keepAliveMs)]),
    ],
    { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const nl = buffered.indexOf("\n");
      if (nl >= 0) resolve((JSON.parse(buffered.slice(0, nl)) as { url: string }).url);
    });
    void exited.then(() => reject(new Error("the provider child exited before listening")));
    setTimeout(() => reject(new Error("the provider child did not listen within 30 s")), 30_000).unref();
  });
  return {
    pid: child.pid!,
    url,
    async stop(): Promise<void> {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** One timed request: ms to the first content and to the end of the response. */
interface Timing {
  firstMs: number;
  totalMs: number;
}

async function timeRequest(url: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Timing> {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  if (response.status !== 200) throw new Error(`POST ${url}: HTTP ${response.status}: ${await response.text()}`);
  let firstMs: number | null = null;
  if (body.stream === true) {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (value !== undefined) buffered += decoder.decode(value, { stream: true });
      if (firstMs === null && /"content":"[^"]/u.test(buffered)) firstMs = performance.now() - started;
      if (done) break;
    }
  } else {
    await response.text();
  }
  const totalMs = performance.now() - started;
  return { firstMs: firstMs ?? totalMs, totalMs };
}

/** What the streaming phase reports. */
export interface StreamingReport {
  pacing: ProviderPacing;
  requests: number;
  /** Provider direct: TTFT and the whole stream. */
  provider_ttft: Spread;
  provider_total: Spread;
  /** Through the gateway with `stream: true`. */
  gateway_ttft: Spread;
  gateway_total: Spread;
  /** Gateway TTFT minus provider TTFT, per pair. */
  added_ttft: Spread;
  /** Through the gateway without `stream`: the first token arrives with the whole reply. */
  gateway_unstreamed_first_byte: Spread;
}

/** Runs `requests` rounds of provider-direct / gateway-streamed / gateway-unstreamed. */
export async function runStreaming(
  providerUrl: string,
  gatewayUrl: string,
  pacing: ProviderPacing,
  requests: number,
  warmup: number,
): Promise<StreamingReport> {
  const direct: Timing[] = [];
  const streamed: Timing[] = [];
  const unstreamed: Timing[] = [];
  for (let i = -warmup; i < requests; i++) {
    const text = { messages: [{ role: "user", content: `question ${i}` }] };
    const d = await timeRequest(`${providerUrl}/chat/completions`, { model: "bench-model", stream: true, ...text });
    const g = await timeRequest(`${gatewayUrl}/v1/chat/completions`, { stream: true, ...text }, { "x-threadline-session-key": `ttft-${i % 10}` });
    const u = await timeRequest(`${gatewayUrl}/v1/chat/completions`, text, { "x-threadline-session-key": `ttft-u-${i % 10}` });
    if (i < 0) continue;
    direct.push(d);
    streamed.push(g);
    unstreamed.push(u);
  }
  const added = streamed.map((g, i) => g.firstMs - direct[i]!.firstMs);
  const report: StreamingReport = {
    pacing,
    requests,
    provider_ttft: spread(direct.map((t) => t.firstMs)),
    provider_total: spread(direct.map((t) => t.totalMs)),
    gateway_ttft: spread(streamed.map((t) => t.firstMs)),
    gateway_total: spread(streamed.map((t) => t.totalMs)),
    added_ttft: spread(added),
    gateway_unstreamed_first_byte: spread(unstreamed.map((t) => t.totalMs)),
  };
  log(
    `  TTFT p50/p99: provider ${report.provider_ttft.p50_ms} / ${report.provider_ttft.p99_ms} ms, ` +
      `gateway ${report.gateway_ttft.p50_ms} / ${report.gateway_ttft.p99_ms} ms (added ${round3(report.added_ttft.p50_ms)} / ${round3(report.added_ttft.p99_ms)} ms); ` +
      `unstreamed first byte ${report.gateway_unstreamed_first_byte.p50_ms} ms`,
  );
  return report;
}
