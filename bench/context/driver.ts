/**
 * The context benchmark's client, in its own process, so that a turn's time is the time a
 * client of the gateway sees (work the gateway does on its event loop after a reply does not
 * delay reading the reply here). Sends the workload's turns one after the other into one
 * session over loopback HTTP (`POST /v1/chat/completions`), each timed from the request to the
 * last byte of the reply, and prints one JSON line per turn ({@link TurnSample}).
 *
 * argv[2]: JSON `{ url, seed, turns, key, timeoutMs }`.
 */
import { performance } from "node:perf_hooks";
import type { TurnSample } from "./analysis.js";
import { modelReply, userMessage } from "./workload.js";

const { url, seed, turns, key, timeoutMs } = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  seed: number;
  turns: number;
  key: string;
  timeoutMs: number;
};

async function sendTurn(k: number): Promise<TurnSample> {
  const expected = modelReply(seed, k).slice(0, 40);
  const started = performance.now();
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-threadline-session-key": key },
      body: JSON.stringify({ messages: [{ role: "user", content: userMessage(seed, k) }] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    let answered = false;
    if (response.status === 200) {
      const content = (JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> }).choices?.[0]?.message?.content ?? "";
      answered = content.includes(expected);
    }
    return { turn: k, ms, status: response.status, answered };
  } catch {
    return { turn: k, ms: performance.now() - started, status: 0, answered: false };
  }
}

for (let k = 1; k <= turns; k++) process.stdout.write(`${JSON.stringify(await sendTurn(k))}\n`);
