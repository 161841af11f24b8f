/**
 * Where a compression cuts a conversation (pure): a protected head (the first
 * `protectFirstN` messages), a middle that is summarised, and a protected tail of recent
 * messages. A leading summary (the session is itself a continuation) is set apart: the new
 * summary replaces it, and the head protected is the one after it.
 *
 * The tail follows hermes-agent's rule: a token budget (`targetRatio` × the threshold in
 * tokens) walked back from the newest message, with `protectLastN` messages kept at least
 * as long as they stay within 1.5 × that budget (so a few huge messages cannot make a
 * compression that frees nothing). The cut never separates an assistant's tool calls from
 * their results, and the tail starts at a user message whenever one is near enough (within
 * the 1.5 × budget) or, failing that, at the next one.
 *
 * @module
 */

/** What the plan needs to know of one message. */
export interface PlanMessage {
  role: string;
  /** The message is an assistant message with tool calls. */
  hasToolCalls: boolean;
  /** The message is a compression summary (only the first message of a session counts). */
  isSummary: boolean;
  /** Its size in tokens. */
  tokens: number;
}

/** The knobs of a plan (see the `compression` settings). */
export interface PlanOptions {
  protectFirstN: number;
  protectLastN: number;
  /** Tokens the tail aims at (`targetRatio` × threshold tokens). */
  tailBudget: number;
  /** At most this many messages in the tail before its alignment (a compression forced by the message count: `protectLastN`). */
  maxTailMessages?: number;
}

/** Where the cuts are: indexes into the messages, `[0, summaryEnd)` `[summaryEnd, headEnd)` `[headEnd, tailStart)` `[tailStart, n)`. */
export interface CompressionPlan {
  /** 1 when the first message is an earlier summary (it is set apart), else 0. */
  summaryEnd: number;
  /** End of the protected head (exclusive). */
  headEnd: number;
  /** Start of the protected tail; `tailStart - headEnd` messages are summarised. */
  tailStart: number;
  /** Messages in the middle (0: nothing to compress). */
  middleCount: number;
}

/** How far the tail may exceed its budget to keep `protectLastN` messages or start at a user message. */
export const TAIL_SOFT_CEILING = 1.5;

/**
 * Splits a conversation into summary / head / middle / tail.
 *
 * @example
 * const plan = planCompression(messages.map((m) => ({ role: m.role, hasToolCalls: !!m.tool_calls?.length, isSummary: false, tokens: 10 })),
 *   { protectFirstN: 3, protectLastN: 20, tailBudget: 2000 });
 */
export function planCompression(messages: readonly PlanMessage[], options: PlanOptions): CompressionPlan {
  const n = messages.length;
  const summaryEnd = n > 0 && messages[0]!.isSummary ? 1 : 0;
  let headEnd = Math.min(n, summaryEnd + Math.max(0, options.protectFirstN));
  // The head never ends between an assistant's tool calls and their results.
  while (headEnd < n && messages[headEnd]!.role === "tool") headEnd += 1;
  if (headEnd >= n) return { summaryEnd, headEnd: n, tailStart: n, middleCount: 0 };

  const budget = Math.max(0, options.tailBudget);
  const ceiling = budget * TAIL_SOFT_CEILING;
  // Walk back from the newest message: within the budget, or within the ceiling while fewer
  // than protectLastN are kept. The newest message is always kept.
  let tailStart = n - 1;
  let tokens = messages[n - 1]!.tokens;
  for (let i = n - 2; i >= headEnd; i--) {
    const t = messages[i]!.tokens;
    const kept = n - 1 - i;
    if (options.maxTailMessages !== undefined && kept >= options.maxTailMessages) break;
    if (tokens + t <= budget || (kept < options.protectLastN && tokens + t <= ceiling)) {
      tokens += t;
      tailStart = i;
    } else break;
  }
  // Never start the tail with tool results: take their call along (or none of the group).
  if (messages[tailStart]!.role === "tool") {
    let back = tailStart;
    while (back > headEnd && messages[back]!.role === "tool") back -= 1;
    tailStart = messages[back]!.role === "tool" ? headEnd : back;
  }
  // Start at a user message when one is near enough behind, else at the next one.
  if (tailStart > headEnd && messages[tailStart]!.role !== "user") {
    let total = sum(messages, tailStart, n);
    let back = tailStart - 1;
    while (back >= headEnd && messages[back]!.role !== "user") {
      total += messages[back]!.tokens;
      back -= 1;
    }
    if (back >= headEnd && total + messages[back]!.tokens <= Math.max(ceiling, tokens)) {
      tailStart = back;
    } else {
      let forward = tailStart + 1;
      while (forward < n && messages[forward]!.role !== "user") forward += 1;
      if (forward < n) tailStart = forward;
    }
  }
  if (tailStart < headEnd) tailStart = headEnd;
  return { summaryEnd, headEnd, tailStart, middleCount: tailStart - headEnd };
}

function sum(messages: readonly PlanMessage[], from: number, to: number): number {
  let total = 0;
  for (let i = from; i < to; i++) total += messages[i]!.tokens;
  return total;
}
