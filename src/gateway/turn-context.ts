/**
 * The messages a gateway turn sends its model, within the model's context window: the
 * window of the turn's model, less the reply's share, the context prompt and the tool
 * schemas, scaled by what the provider reported for the session before
 * ({@link TokenCalibration}), filled by {@link buildContext}. Remembers what it measured per
 * session (for compression) and tells the model, in one context-prompt line, when earlier
 * messages were left out.
 *
 * @module
 */
import type { Agent, AgentToolDefinition, AgentTurnResult } from "../agents/index.js";
import {
  DEFAULT_CONTEXT_WINDOW,
  MessageTokenCache,
  TokenCalibration,
  buildContext,
  requestBudget,
  tokenCounterFor,
  type BuiltContext,
  type ContextWindow,
  type TokenCounter,
} from "../context/index.js";
import type { ConversationMessage, NewMessage, SessionHistory } from "../store/index.js";

/**
 * The context window of a turn's provider model: `model` is the model the turn asked for
 * (`undefined`: the agent's default). Returns the model name to count tokens for (`null`:
 * unknown, counts are estimates) with the window and where it came from.
 */
export type ContextWindowResolver = (model: string | undefined) => ContextWindow & { model: string | null };

/** The resolver used when none is given: every model gets {@link DEFAULT_CONTEXT_WINDOW}. */
export const defaultContextWindows: ContextWindowResolver = (model) => ({ model: model ?? null, tokens: DEFAULT_CONTEXT_WINDOW, source: "default" });

/** What the context of a session's last turn measured (see {@link GatewayRunner.contextMeasure}). */
export interface ContextMeasure {
  /** The model counted for (`null`: unknown, estimated). */
  model: string | null;
  /** The model's context window in tokens. */
  window: number;
  /** Tokens the messages were allowed (see `requestBudget`). */
  budget: number;
  /** Tokens of the whole request as counted: messages, context prompt and tool schemas. */
  requestTokens: number;
  /** Tokens of the messages sent. */
  messageTokens: number;
  /** Tokens of the session's whole conversation, the turn's stored messages included once it is stored (what compression compares with its threshold). */
  fullTokens: number;
  /** Messages in the session's whole conversation (the turn's included once it is stored). */
  fullCount: number;
  /** Messages left out of the request. */
  dropped: number;
  /** The session's correction factor at the time (≥ 1; see `TokenCalibration`). */
  correction: number;
}

/** One turn's request, assembled. */
export interface AssembledContext {
  /** The messages to send (sender labels not yet applied). */
  messages: ConversationMessage[];
  /** The context prompt to send: the given one, plus a line saying how many earlier messages are not shown. */
  contextPrompt: string;
  built: BuiltContext;
  measure: ContextMeasure;
}

/** What an {@link TurnContexts.assemble} call is given. */
export interface AssembleInput {
  sessionId: string;
  agent: Pick<Agent, "toolDefinitions">;
  /** The context prompt (system message) the turn sends. */
  contextPrompt: string;
  /** The model the turn asks for (`undefined`: the agent's default). */
  model?: string;
  /** The request carries no tools (a summary request). */
  noTools?: boolean;
  /** Text added to the request besides the stored messages (sender labels, a summary request), counted against the budget. */
  extraText?: readonly string[];
  /** Tokens to keep free besides (text the caller adds that it cannot show here, such as an agent's own instruction). */
  extraTokens?: number;
}

/** Sessions whose last measure is remembered. */
const MEASURED_SESSIONS = 10_000;
/** Models whose token counter is kept. */
const COUNTERS = 64;
/** Tokens counted per tool definition besides its JSON (the provider's framing of each function). */
const TOOL_FRAMING_TOKENS = 10;

/**
 * The line telling the model that `count` earlier messages are not in the request.
 *
 * @example
 * droppedNote(12); // "[12 earlier messages of this conversation are not shown here: only the newest fit in this request.]"
 */
export function droppedNote(count: number): string {
  return `[${count} earlier message${count === 1 ? "" : "s"} of this conversation ${count === 1 ? "is" : "are"} not shown here: only the newest fit in this request.]`;
}

/** The widest {@link droppedNote}, counted into every budget so adding the note never overflows it. */
const WIDEST_NOTE = droppedNote(9_999_999);

/** Tokens of a request's tool schemas. */
export function toolSchemaTokens(tools: readonly AgentToolDefinition[], counter: TokenCounter): number {
  if (tools.length === 0) return 0;
  const wire = tools.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
  return counter.count(JSON.stringify(wire)) + TOOL_FRAMING_TOKENS * tools.length;
}

/** Assembles turn contexts for one database: counters, message counts, corrections and measures. */
export class TurnContexts {
  readonly #db: Pick<SessionHistory, "getMessages" | "getSession">;
  readonly #windowFor: ContextWindowResolver;
  readonly #historyLimit: number | undefined;
  readonly #cache = new MessageTokenCache();
  readonly #counters = new Map<string, Promise<TokenCounter>>();
  readonly #measures = new Map<string, ContextMeasure>();
  /** Corrections from the provider's reported prompt tokens. */
  readonly calibration = new TokenCalibration();

  constructor(db: Pick<SessionHistory, "getMessages" | "getSession">, options: { windowFor?: ContextWindowResolver; historyLimit?: number } = {}) {
    this.#db = db;
    this.#windowFor = options.windowFor ?? defaultContextWindows;
    this.#historyLimit = options.historyLimit;
  }

  /** The token counter for a model (one per model, kept). */
  counterFor(model: string | null): Promise<TokenCounter> {
    const key = model ?? "";
    let counter = this.#counters.get(key);
    if (counter === undefined) {
      counter = tokenCounterFor(model);
      this.#counters.set(key, counter);
      if (this.#counters.size > COUNTERS) this.#counters.delete(this.#counters.keys().next().value!);
    }
    return counter;
  }

  /** The request of a turn: its messages within the budget, and the context prompt with the dropped-messages line when some were left out. */
  async assemble(input: AssembleInput): Promise<AssembledContext> {
    const window = this.#windowFor(input.model);
    const counter = await this.counterFor(window.model);
    const correction = this.calibration.factor(input.sessionId);
    const prompt = counter.countMessage({ role: "system", content: `${input.contextPrompt}\n\n${WIDEST_NOTE}` });
    const extra = (input.extraText ?? []).reduce((sum, text) => sum + counter.count(text) + 1, input.extraTokens ?? 0);
    const tools = input.noTools === true ? 0 : toolSchemaTokens(input.agent.toolDefinitions?.() ?? [], counter);
    const budget = requestBudget({ window: window.tokens, promptTokens: prompt + extra, toolTokens: tools, correction });
    const built = await buildContext(this.#db, input.sessionId, {
      budget,
      counter,
      cache: this.#cache,
      ...(this.#historyLimit === undefined ? {} : { historyLimit: this.#historyLimit }),
    });
    const contextPrompt = built.dropped > 0 ? `${input.contextPrompt}\n\n${droppedNote(built.dropped)}` : input.contextPrompt;
    const sentPrompt = counter.countMessage({ role: "system", content: contextPrompt });
    const measure: ContextMeasure = {
      model: window.model,
      window: window.tokens,
      budget,
      requestTokens: built.tokens + sentPrompt + extra + tools,
      messageTokens: built.tokens,
      fullTokens: built.fullTokens,
      fullCount: built.fullCount,
      dropped: built.dropped,
      correction,
    };
    this.#measures.delete(input.sessionId);
    this.#measures.set(input.sessionId, measure);
    if (this.#measures.size > MEASURED_SESSIONS) this.#measures.delete(this.#measures.keys().next().value!);
    return { messages: built.messages, contextPrompt, built, measure };
  }

  /**
   * Feeds the provider's reported prompt tokens back: later budgets of the session are
   * corrected by reported ÷ counted. Only a turn of one model call is compared (a turn with
   * tool calls reports its last call, which held more than was counted).
   */
  calibrate(sessionId: string, assembled: AssembledContext, result: Pick<AgentTurnResult, "promptTokens" | "messages">): void {
    if (result.promptTokens === undefined) return;
    if (result.messages.some((m) => m.role === "tool" || (m.toolCalls ?? []).length > 0)) return;
    this.calibration.record(sessionId, assembled.measure.requestTokens, result.promptTokens);
  }

  /**
   * Adds a stored turn's messages (the reply, its tool calls and results) to the session's
   * measure, so it tells the size of the conversation after the turn (what compression compares
   * with its threshold). Nothing when the session was not measured in this process.
   */
  async recordTurn(sessionId: string, messages: readonly NewMessage[]): Promise<void> {
    const measure = this.#measures.get(sessionId);
    if (measure === undefined || messages.length === 0) return;
    const counter = await this.counterFor(measure.model);
    let tokens = 0;
    for (const m of messages) {
      const shaped: ConversationMessage = { role: m.role, content: m.content ?? null };
      if (m.toolCalls) shaped.tool_calls = m.toolCalls;
      if (m.role === "tool" && m.toolName) shaped.name = m.toolName;
      tokens += counter.countMessage(shaped);
    }
    measure.fullTokens += tokens;
    measure.fullCount += messages.length;
  }

  /** What the last assembled context of a session measured (updated by {@link TurnContexts.recordTurn}), or `undefined`. */
  measure(sessionId: string): ContextMeasure | undefined {
    return this.#measures.get(sessionId);
  }
}
