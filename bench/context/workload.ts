/**
 * The conversation of the context benchmark, deterministic: the user's message and the model's
 * reply of turn k depend only on k (a PRNG seeded per turn and role), so a retried or reordered
 * request gets the same text, and two runs send the same bytes.
 *
 * Sizes are meant to look like a working session with an assistant: most messages are a line or
 * a short paragraph, some are long (a pasted log, a file; a reply with a code block). Every user
 * message starts with its marker `[t<k>]`, which is how the fake model knows which turn a request
 * answers. Turn 1 states a fact (`FACT-…`) that the conversation never repeats: whether it still
 * reaches the model late in the conversation (through the summaries) is one of the figures.
 *
 * @module
 */

/** mulberry32, as in the shared dataset generator (../shared/bench/gen-dataset.mjs). */
function prng(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYL = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "qui", "na", "pe", "zu", "tran", "gol", "fi", "ber", "ux", "ion", "mar", "tel"];
const TECH = [
  "docker",
  "kubernetes",
  "deployment",
  "postgres",
  "sqlite",
  "python",
  "typescript",
  "error",
  "timeout",
  "refactor",
  "auth",
  "module",
  "test",
  "failure",
  "config",
  "yaml",
  "webhook",
  "cron",
  "gateway",
  "token",
  "budget",
  "deploy",
  "rollback",
  "the",
  "and",
  "to",
  "a",
  "is",
  "we",
  "it",
  "for",
  "this",
  "that",
  "with",
  "on",
  "should",
  "can",
  "not",
  "if",
  "then",
];
const VOCAB: string[] = (() => {
  const rand = prng(0x5eed);
  const words: string[] = [];
  for (let i = 0; i < 3000; i++) {
    let w = "";
    for (let j = 0, n = 1 + (i % 3) + Math.floor(rand() * 2); j < n; j++) w += SYL[Math.floor(rand() * SYL.length)];
    words.push(w);
  }
  return words;
})();

function words(rand: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = rand();
    // Plain English glue and technical words half the time, invented words the other half.
    out.push(r < 0.5 ? TECH[Math.floor(rand() * TECH.length)]! : VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(rand() * Math.log(VOCAB.length))) - 1)]!);
  }
  return out.join(" ");
}

/** A lognormal count around `median` (spread 0.8), at least 1, at most `max`. */
function lognormal(rand: () => number, median: number, max: number): number {
  const u = Math.max(rand(), 1e-9);
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  return Math.min(max, Math.max(1, Math.round(median * Math.exp(0.8 * z))));
}

function logLines(rand: () => number, lines: number): string {
  const levels = ["INFO", "WARN", "ERROR", "DEBUG"];
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const ms = Math.floor(rand() * 86_400_000);
    const stamp = new Date(Date.UTC(2026, 10, 27) + ms).toISOString();
    out.push(
      `${stamp} ${levels[Math.floor(rand() * levels.length)]} ${words(rand, 4 + Math.floor(rand() * 10))} (req ${Math.floor(rand() * 0xffffff).toString(16)})`,
    );
  }
  return out.join("\n");
}

function codeBlock(rand: () => number, lines: number): string {
  const out = ["```ts"];
  for (let i = 0; i < lines; i++) {
    const name = VOCAB[Math.floor(rand() * VOCAB.length)]!;
    out.push(
      rand() < 0.3
        ? `  // ${words(rand, 3 + Math.floor(rand() * 8))}`
        : `  const ${name}${i} = await ${TECH[Math.floor(rand() * 20)]}.${name}(${Math.floor(rand() * 1000)});`,
    );
  }
  out.push("```");
  return out.join("\n");
}

/** The fact turn 1 states, `FACT-` and 8 hex digits (fixed by the seed). */
export function earlyFact(seed: number): string {
  return `FACT-${(((seed * 2654435761) >>> 0) % 0xffffffff).toString(16).padStart(8, "0")}`;
}

/** The marker a user message of turn k starts with. */
export const turnMarker = (k: number): string => `[t${k}]`;

/** The turn a text starts with the marker of, else null. */
export function turnOf(text: string): number | null {
  const m = /^\[t(\d+)\]/u.exec(text);
  return m === null ? null : Number(m[1]);
}

/** What the user says at turn k (1-based). */
export function userMessage(seed: number, k: number): string {
  if (k === 1) {
    return `${turnMarker(1)} Before we start: the staging deploy code word is ${earlyFact(seed)}. Keep it in mind, I will ask for it much later. First question: ${words(prng(seed), 12)}?`;
  }
  const rand = prng((seed ^ Math.imul(k, 0x9e3779b1)) >>> 0);
  const r = rand();
  let body: string;
  if (r < 0.04) body = `here is the log from the last run:\n${logLines(rand, 20 + Math.floor(rand() * 70))}\nwhat went wrong?`;
  else if (r < 0.07) body = `this is the file I mean:\n${codeBlock(rand, 30 + Math.floor(rand() * 110))}\ncan you ${words(rand, 6)}?`;
  else if (r < 0.25) body = words(rand, lognormal(rand, 120, 400));
  else body = words(rand, lognormal(rand, 18, 120));
  return `${turnMarker(k)} ${body}`;
}

/** What the model answers at turn k. */
export function modelReply(seed: number, k: number): string {
  const rand = prng((seed ^ Math.imul(k, 0x85ebca6b) ^ 0x27d4eb2f) >>> 0);
  const r = rand();
  if (r < 0.08) return `${words(rand, lognormal(rand, 30, 80))}\n\n${codeBlock(rand, 25 + Math.floor(rand() * 80))}\n\n${words(rand, lognormal(rand, 25, 80))}`;
  return words(rand, lognormal(rand, 70, 450));
}

/**
 * The fake summariser's answer: short and fixed by what it was given, the highest turn marker
 * and every `FACT-` token in it (so an early fact travels from summary to summary).
 */
export function summaryReply(text: string): string {
  const facts = [...new Set(text.match(/FACT-[0-9a-f]{8}/gu) ?? [])];
  let last = 0;
  for (const m of text.matchAll(/\[t(\d+)\]/gu)) last = Math.max(last, Number(m[1]));
  return (
    `The user and the assistant worked through questions on deployment, logs and code up to turn ${last}. ` +
    (facts.length > 0 ? `Facts to keep: ${facts.join(", ")}.` : "No standing facts.")
  );
}
