/**
 * The model plug-in: an {@link Agent} turns a conversation into new messages. Threadline
 * owns sessions, never how the model thinks; anything that speaks this interface can run
 * behind the gateway.
 *
 * @module
 */
import { InterruptedError, ThreadlineError, type ConversationMessage, type NewMessage, type UsageUpdate } from "../store/index.js";

/**
 * Who sent the message a turn answers, as the gateway saw it. Tools act for this person, not
 * for whoever opened the session: a shared thread, a handed-off session and a room that grew
 * past two members all have several speakers.
 */
export interface TurnSpeaker {
  /** The platform the message came from (`telegram`, `cli`, `api-server`, …). */
  platform: string;
  /** The sender's id on that platform; `null` when not known (a tool then acts for nobody). */
  userId: string | null;
  /** Every id of the sender on that platform: `userId`, its canonical form and its recorded aliases. */
  aliases: string[];
  /** The kind of chat the message came from (`dm`, `group`, `channel` or `thread`). */
  chatType: string;
  /** The platform's id of that chat, when known. */
  chatId: string | null;
}

/** What a tool call is given besides its arguments. */
export interface ToolCallContext {
  /** The session the call belongs to. */
  sessionId: string;
  /** Aborted when the turn is stopped. */
  signal: AbortSignal;
  /**
   * Who sent the message the turn answers (given by the gateway). Absent when the agent runs
   * outside a gateway (a library caller): a tool then falls back to what the session says.
   */
  speaker?: TurnSpeaker;
}

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
  /** Who sent the message this turn answers: handed to every tool call (see {@link TurnSpeaker}). */
  speaker?: TurnSpeaker;
  /**
   * Called with each piece of reply text as the model produces it (streaming). Agents that
   * cannot stream ignore it; the result still holds the whole turn.
   */
  onDelta?: (text: string) => void;
  /** The provider model to answer with for this turn (default: the agent's own). */
  model?: string;
  /**
   * Offer the model no tools this turn (a summary request, such as `/compress`): it answers in
   * text only. Agents without tools ignore it.
   */
  noTools?: boolean;
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

/** What an agent is given for its turn before an automatic reset (see {@link Agent.beforeReset}). */
export interface AgentResetInput {
  /** The expiring session (still live while the hook runs; it ends with the reset). */
  sessionId: string;
  /** The expiring session's bounded transcript, oldest first. OpenAI chat shape. */
  transcript: ConversationMessage[];
  /**
   * Why the session's conversation is leaving the model's context: its idle or its daily reset
   * policy (the session expires), or a compression (its middle is about to be summarised).
   */
  reason: "idle" | "daily" | "compression";
  /** Aborted when the time allowed for the hook runs out (or the gateway stops): return or throw promptly. */
  signal: AbortSignal;
  /**
   * Whom the turn acts for (its tools save for this person): the expiring session's person
   * when one person owns it; absent or with `userId: null` when nobody does (a shared group).
   */
  speaker?: TurnSpeaker;
  /** Context for the turn (e.g. that person's memory section); default none. */
  contextPrompt?: string;
}

/** A model plug-in. */
export interface Agent {
  /** A short name for logs and `/status` (`echo`, `openai:gpt-4o-mini`). */
  readonly name: string;
  /** Runs one turn. Throw {@link AgentInterruptedError} (an {@link InterruptedError}, with what was produced so far) when aborted. */
  runTurn(input: AgentTurnInput): Promise<AgentTurnResult>;
  /**
   * Optional: one turn before an automatic (idle or daily) reset, to save what matters from
   * the expiring session (memories, notes, skills) — run by the gateway's expiry watcher,
   * bounded in time. The returned messages (and usage) are stored in the expiring session
   * before it ends; `null` (or no messages) stores nothing. A throw or a timeout is logged
   * and the reset happens anyway. Agents without it are skipped.
   */
  beforeReset?(input: AgentResetInput): Promise<AgentTurnResult | null>;
  /**
   * Optional: lines for the system prompt that tell the model when to use the agent's tools
   * (each tool's {@link AgentTool.guidance}). The gateway adds them to the context prompt,
   * so they are stored with it; an agent that will send no tools returns none.
   */
  promptGuidance?(): readonly string[];
  /**
   * Optional: the function definitions a turn's request carries (`tools`), so the gateway can
   * count them against the model's context window; none when the agent sends no tools.
   */
  toolDefinitions?(): readonly AgentToolDefinition[];
  /**
   * Optional: speech to text, for voice notes and audio files (the OpenAI-compatible provider's
   * `/audio/transcriptions` with `provider.transcriptionModel`). Absent: voice is not enabled, and
   * the gateway tells the chat so. Resolves with the text; throws when the provider fails.
   */
  transcribe?(audio: AudioInput, options?: { signal?: AbortSignal }): Promise<string>;
  /**
   * Optional: whether a request to `model` (default: the agent's own) may carry images now, as
   * OpenAI-style `image_url` parts with data URLs (`provider.vision`: `on` → true, `off` → false,
   * `auto` → true until the endpoint refused images for that model). Absent: never; the gateway
   * then sends each image as its caption and a `[image: type, size]` note.
   */
  acceptsImages?(model?: string): boolean;
  /** Releases resources (called when the gateway's agent cache evicts it). */
  dispose?(): void | Promise<void>;
}

/** Audio to transcribe (see {@link Agent.transcribe}). */
export interface AudioInput {
  bytes: Uint8Array;
  /** The type found by its bytes (`audio/ogg`, `audio/mpeg`, …). */
  mimeType: string;
  /** A file name for the upload (default from the type, e.g. `voice.ogg`). */
  fileName?: string;
}

/** A tool as a request describes it to the model (see {@link Agent.toolDefinitions}). */
export interface AgentToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A function the model may call during a turn (OpenAI function-calling shape). */
export interface AgentTool {
  /** The function name the model uses (`session_search`). */
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /**
   * One or two sentences for the system prompt: when the model should reach for this tool
   * (the description says what it does). Offered through {@link Agent.promptGuidance}.
   */
  guidance?: string;
  /**
   * The tool saves something that outlives the session (a memory, a note, a skill). An agent
   * with such a tool gets a turn before an automatic reset to use it (see
   * {@link Agent.beforeReset}); read-only tools (`session_search`) leave this unset.
   */
  savesState?: boolean;
  /** Runs the call; the returned text is the tool result the model sees. Throwing reports the error to the model. */
  execute(args: Record<string, unknown>, context: ToolCallContext): Promise<string>;
}

/** Proposes a title for a session after its first exchange. */
export interface Titler {
  /** 3–7 words, or `null` when it has nothing to propose. */
  proposeTitle(input: { userText: string; replyText: string; signal?: AbortSignal }): Promise<string | null>;
}

/**
 * Thrown by an agent whose turn was aborted; `partial` holds the messages produced before the
 * abort. It is the core {@link InterruptedError} (`TL_ERR_INTERRUPTED`) with the agents'
 * types: the gateway catches it by that class.
 */
export class AgentInterruptedError extends InterruptedError<NewMessage, UsageUpdate> {
  constructor(partial: NewMessage[] = [], usage?: UsageUpdate, options?: { cause?: unknown }) {
    super("The agent's turn was interrupted.", { partial, ...(usage === undefined ? {} : { usage }), cause: options?.cause });
  }
}

/**
 * A model call failed (bad status, timeout, unreadable reply): `message` says what and what
 * to do. Code `TL_ERR_AGENT`.
 */
export class AgentError extends ThreadlineError {
  /** HTTP status from the provider, when there was one. */
  readonly status: number | null;
  /** The provider's own error message, when it sent one. */
  readonly providerMessage: string | null;

  constructor(message: string, options: { status?: number | null; providerMessage?: string | null; cause?: unknown } = {}) {
    super("TL_ERR_AGENT", message, { cause: options.cause });
    this.status = options.status ?? null;
    this.providerMessage = options.providerMessage ?? null;
  }
}
