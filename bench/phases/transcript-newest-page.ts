import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { NewMessage, SessionDB } from "../../src/index.js";
import { fmtSeconds, log } from "../log.js";
import type { Percentiles } from "../percentile.js";
import { percentiles } from "../percentile.js";
import { timed } from "../timing.js";

export interface TranscriptNewestPageResult extends Percentiles {
  /** Messages in the long session. */
  messages: number;
  /** Messages on the page read. */
  page: number;
}

/** Messages in the long session (2,500 turns of 4). */
export const LONG_SESSION_MESSAGES = 10_000;
/** The newest page a UI or gateway reads: `getMessages(id, { lastMessages: PAGE })`. */
export const PAGE = 50;
const REPEAT = 200;
const TURN = 4;

/** A deterministic word stream (xorshift), so every run writes the same text. */
function words(seed: number): (count: number) => string {
  const vocabulary = (
    "the a to of and in is it for on with that this be you are as at by from or not have can will " +
    "session message tool search result error config deploy server build test file path query index " +
    "token model reply user assistant memory cache latency page request response stream retry timeout"
  ).split(" ");
  let x = seed >>> 0 || 1;
  return (count) => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      out.push(vocabulary[(x >>> 0) % vocabulary.length] as string);
    }
    return out.join(" ");
  };
}

/** One turn: the user asks, the assistant calls a tool, the tool answers, the assistant replies. */
function turn(n: number, text: (count: number) => string, at: number): NewMessage[] {
  const callId = `call_${n}`;
  return [
    { role: "user", content: text(20 + (n % 40)), timestamp: at },
    {
      role: "assistant",
      content: null,
      toolCalls: [{ id: callId, type: "function", function: { name: "search_files", arguments: JSON.stringify({ q: text(3) }) } }],
      finishReason: "tool_calls",
      tokenCount: 40,
      timestamp: at + 1,
    },
    { role: "tool", content: text(150 + (n % 200)), toolCallId: callId, toolName: "search_files", timestamp: at + 2 },
    { role: "assistant", content: text(80 + (n % 120)), finishReason: "stop", tokenCount: 200, timestamp: at + 3 },
  ];
}

/**
 * Not in the shared workload: a live session grown to {@link LONG_SESSION_MESSAGES} messages
 * (one `appendTurn` per turn of 4: user, assistant tool call, tool result, assistant reply),
 * then its newest page (`getMessages(id, { lastMessages: 50 })`, what a chat UI or the
 * gateway reads) ×200, timed. Runs last, so it changes no other figure.
 */
export async function runTranscriptNewestPage(db: SessionDB, clock: number): Promise<TranscriptNewestPageResult> {
  const id = "bench_long_session";
  await db.createSession({ id, source: "cli", model: "bench-model", startedAt: clock - 86_400 });
  const text = words(17);
  const started = performance.now();
  for (let n = 0; n < LONG_SESSION_MESSAGES / TURN; n++) {
    await db.appendTurn(id, turn(n, text, clock - 86_400 + n * 4));
  }
  log(`transcript_newest_page: ${LONG_SESSION_MESSAGES} messages appended in ${fmtSeconds((performance.now() - started) / 1000)}`);
  // Let the search index's catch-up of the last appends (a write of its own) run before timing reads.
  await sleep(500);
  const times: number[] = [];
  let page = 0;
  for (let i = 0; i < REPEAT; i++) {
    const { ms, value } = await timed(() => db.getMessages(id, { lastMessages: PAGE }));
    times.push(ms);
    page = value.length;
  }
  log(`transcript_newest_page: ${REPEAT} calls, ${page} messages each`);
  return { ...percentiles(times), messages: LONG_SESSION_MESSAGES, page };
}
