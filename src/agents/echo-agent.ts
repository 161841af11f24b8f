/**
 * The echo agent: a deterministic, offline {@link Agent} that repeats the last user
 * message. It is the fallback when no model provider is configured, and the agent of
 * tests (with `delayMs` for slow turns, `/stop` and shutdown drains).
 *
 * @module
 */
import type { ContentPart, ConversationMessage, UsageUpdate } from "../store/index.js";
import { AgentInterruptedError } from "./agent.js";
import type { Agent, AgentTurnInput, AgentTurnResult } from "./agent.js";

/** Options of {@link EchoAgent}. */
export interface EchoAgentOptions {
  /** Wait this long (abortably) before replying, in milliseconds (default 0). */
  delayMs?: number;
}

/**
 * Replies `Echo: <last user message text>` (text parts of structured content joined with
 * newlines; `Echo: (empty message)` when there is no user text). Usage is estimated as
 * `ceil(characters / 4)` tokens: input over the text of every history message (the
 * context prompt is not counted), output over the reply; one API call and no cost.
 * Throws {@link AgentInterruptedError} when the signal is (or becomes, during `delayMs`)
 * aborted.
 *
 * @example
 * const agent = new EchoAgent();
 * const { messages } = await agent.runTurn({
 *   messages: [{ role: "user", content: "ping" }],
 *   contextPrompt: "",
 *   signal: new AbortController().signal,
 *   sessionId: "s1",
 * });
 * messages[0]?.content; // "Echo: ping"
 */
export class EchoAgent implements Agent {
  /** Always `"echo"`. */
  readonly name = "echo";
  readonly #delayMs: number;

  constructor(options: EchoAgentOptions = {}) {
    const { delayMs = 0 } = options;
    this.#delayMs = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
  }

  /** Echoes the last user message. */
  async runTurn(input: AgentTurnInput): Promise<AgentTurnResult> {
    const { messages, signal } = input;
    if (signal.aborted) throw new AgentInterruptedError([], undefined, { cause: signal.reason });
    if (this.#delayMs > 0) await abortableDelay(this.#delayMs, signal);

    const lastUser = [...messages].reverse().find((message) => message.role === "user");
    const userText = lastUser === undefined ? "" : messageText(lastUser.content);
    const reply = `Echo: ${userText.trim() === "" ? "(empty message)" : userText}`;
    const inputChars = messages.reduce((sum, message) => sum + messageText(message.content).length, 0);
    const inputTokens = Math.ceil(inputChars / 4);
    const outputTokens = Math.ceil(reply.length / 4);
    const usage: UsageUpdate = { inputTokens, outputTokens, apiCalls: 1 };
    return {
      messages: [{ role: "assistant", content: reply, finishReason: "stop", tokenCount: outputTokens }],
      usage,
      promptTokens: inputTokens,
    };
  }
}

function messageText(content: ConversationMessage["content"]): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .filter((part: ContentPart) => typeof part.text === "string")
      .map((part) => part.text)
      .join("\n");
  }
  return "";
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AgentInterruptedError([], undefined, { cause: signal.reason }));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
