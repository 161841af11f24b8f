/**
 * The model plug-in: an {@link Agent} turns a conversation into new messages. Threadline
 * owns sessions, never how the model thinks; anything that speaks this interface can run
 * behind the gateway.
 *
 * @module
 */
import type { ConversationMessage, NewMessage, UsageUpdate } from "../store/index.js";

/** What an agent is given for one turn. */
export interface AgentTurnInput {
  /** The bounded history, oldest first, ending with the new user message(s). OpenAI chat shape. */
  messages: ConversationMessage[];
  /** The "## Current Session Context" section (and any notices) for the system prompt. */
  contextPrompt: string;
  /** Aborted when the turn is stopped (`/stop`, shutdown): return or throw promptly. */
  signal: AbortSignal;
  /** The session this turn belongs to. */
  sessionId: string;
  /**
   * Called with each piece of reply text as the model produces it (streaming). Agents that
   * cannot stream ignore it; the result still holds the whole turn.
   */
  onDelta?: (text: string) => void;
  /** The provider model to answer with for this turn (default: the agent's own). */
  model?: string;
}

/** What an agent returns for one turn. */
export interface AgentTurnResult {
  /**
   * The new messages in order: assistant messages (with `toolCalls`), tool results
   * (`role: "tool"` with `toolCallId`), and the final assistant reply last.
   */
  messages: NewMessage[];
  /** Tokens and cost of the turn (added to the session's totals). */
  usage?: UsageUpdate;
  /** Prompt tokens of the last model call (context size). */
  promptTokens?: number;
  /** The model that answered, as the provider reported it (recorded on the session). */
  model?: string;
}

/** A model plug-in. */
export interface Agent {
  /** A short name for logs and `/status` (`echo`, `openai:gpt-4o-mini`). */
  readonly name: string;
  /** Runs one turn. Throw {@link AgentInterruptedError} (with what was produced so far) when aborted. */
  runTurn(input: AgentTurnInput): Promise<AgentTurnResult>;
  /** Releases resources (called when the gateway's agent cache evicts it). */
  dispose?(): void | Promise<void>;
}

/** A function the model may call during a turn (OpenAI function-calling shape). */
export interface AgentTool {
  /** The function name the model uses (`session_search`). */
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /** Runs the call; the returned text is the tool result the model sees. Throwing reports the error to the model. */
  execute(args: Record<string, unknown>, context: { sessionId: string; signal: AbortSignal }): Promise<string>;
}

/** Proposes a title for a session after its first exchange. */
export interface Titler {
  /** 3–7 words, or `null` when it has nothing to propose. */
  proposeTitle(input: { userText: string; replyText: string; signal?: AbortSignal }): Promise<string | null>;
}

/** Thrown by an agent whose turn was aborted; `partial` holds the messages produced before the abort. */
export class AgentInterruptedError extends Error {
  readonly partial: NewMessage[];
  readonly usage: UsageUpdate | undefined;

  constructor(partial: NewMessage[] = [], usage?: UsageUpdate, options?: { cause?: unknown }) {
    super("The agent's turn was interrupted.", options);
    this.name = "AgentInterruptedError";
    this.partial = partial;
    this.usage = usage;
  }
}

/** A model call failed (bad status, timeout, unreadable reply): `message` says what and what to do. */
export class AgentError extends Error {
  /** HTTP status from the provider, when there was one. */
  readonly status: number | null;
  /** The provider's own error message, when it sent one. */
  readonly providerMessage: string | null;

  constructor(message: string, options: { status?: number | null; providerMessage?: string | null; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "AgentError";
    this.status = options.status ?? null;
    this.providerMessage = options.providerMessage ?? null;
  }
}
