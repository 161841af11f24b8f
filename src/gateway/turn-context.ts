/**
 * The messages a gateway turn sends its model, within the model's context window: the
 * window of the turn's model, less the reply's share, the context prompt and the tool
 * schemas, scaled by what the provider reported for the session before
 * ({@link TokenCalibration}), filled by {@link buildContext}. Remembers what it measured per
 * session (for compression) and tells the model, in one context-prompt line, when earlier
 * messages were left out.
 *
 * Attachments: the stored messages' `attachment` parts become what the model is sent
 * ({@link attachmentsForModel}): the newest `maxImagesInContext` images (jpeg/png/gif/webp) as
 * `image_url` parts when the agent's `acceptsImages(model)` is true, every other attachment its
 * text placeholder. The turns are chosen on the messages' cached counts (an attachment counts as
 * its placeholder) within a budget less {@link IMAGE_PART_TOKENS} per image the request may send,
 * so the final request fits whichever images it carries, and a message's cached count never
 * depends on which of its images were sent.
 *
 * @module
 */
import type { Agent, AgentToolDefinition, AgentTurnResult } from "../agents/index.js";
import { InvalidInputError } from "../store/index.js";
import {
  DEFAULT_CONTEXT_WINDOW,
  IMAGE_PART_TOKENS,
  MessageTokenCache,
  TokenCalibration,
  buildContext,
  requestBudget,
  tokenCounterFor,
  type BuiltContext,
  type ContextWindow,
  type TokenCounter,
} from "../context/index.js";
import { attachmentsForModel, countModelImages, type AttachmentReader } from "../context/internal.js";
import type { ConversationMessage, MediaStore, NewMessage, SessionHistory } from "../store/index.js";

/** How many images a request may carry as image parts unless told otherwise (`media.maxImagesInContext`). */
export const DEFAULT_MAX_IMAGES_IN_CONTEXT = 4;

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
  /** Tokens of the messages sent (images counted as {@link IMAGE_PART_TOKENS} each). */
  messageTokens: number;
  /** Images sent as image parts. */
  images: number;
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
  /** The agent: its tool schemas are counted, and images go as image parts only when `acceptsImages(model)` is true. */
  agent: Pick<Agent, "name" | "toolDefinitions" | "acceptsImages">;
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
/** Context prompts whose count is remembered per counter (prompts are per session; a few KB each at most). */
const COUNTED_PROMPTS = 1_000;
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

/** The store a {@link TurnContexts} reads: the transcript, and the blobs of images (a `SessionDB` has both). */
export type TurnContextsDB = Pick<SessionHistory, "getMessages" | "getSession"> & Partial<Pick<MediaStore, "readMedia" | "getMedia">>;

/** Options of {@link TurnContexts}. */
export interface TurnContextsOptions {
  /** The context window of a turn's model (default: {@link DEFAULT_CONTEXT_WINDOW} for every model). */
  windowFor?: ContextWindowResolver;
  /** An extra cap on the messages sent (`gateway.historyLimit`; default none). */
  historyLimit?: number;
  /** At most this many images go as image parts, the newest (`media.maxImagesInContext`; default {@link DEFAULT_MAX_IMAGES_IN_CONTEXT}; 0: none). */
  maxImagesInContext?: number;
}

/** Assembles turn contexts for one database: counters, message counts, corrections and measures. */
export class TurnContexts {
  readonly #db: TurnContextsDB;
  readonly #windowFor: ContextWindowResolver;
  readonly #historyLimit: number | undefined;
  readonly #maxImages: number;
  readonly #cache = new MessageTokenCache();
  readonly #counters = new Map<string, Promise<TokenCounter>>();
  readonly #measures = new Map<string, ContextMeasure>();
  /** Counted context prompts, per counter (see {@link TurnContexts.#countPrompt}). */
  readonly #promptCounts = new WeakMap<TokenCounter, Map<string, number>>();
  /** Corrections from the provider's reported prompt tokens. */
  readonly calibration = new TokenCalibration();

  constructor(db: TurnContextsDB, options: TurnContextsOptions = {}) {
    this.#db = db;
    this.#windowFor = options.windowFor ?? defaultContextWindows;
    this.#historyLimit = options.historyLimit;
    const max = options.maxImagesInContext ?? DEFAULT_MAX_IMAGES_IN_CONTEXT;
    if (!Number.isInteger(max) || max < 0) {
      throw new InvalidInputError(`maxImagesInContext must be a whole number ≥ 0 (got ${JSON.stringify(max)}).`, { field: "maxImagesInContext" });
    }
    this.#maxImages = max;
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
    const prompt = this.#countPrompt(counter, `${input.contextPrompt}\n\n${WIDEST_NOTE}`);
    const extra = (input.extraText ?? []).reduce((sum, text) => sum + counter.count(text) + 1, input.extraTokens ?? 0);
    const tools = input.noTools === true ? 0 : toolSchemaTokens(input.agent.toolDefinitions?.() ?? [], counter);
    const budget = requestBudget({ window: window.tokens, promptTokens: prompt + extra, toolTokens: tools, correction });
    const build = (imageTokens: number): Promise<BuiltContext> =>
      buildContext(this.#db, input.sessionId, {
        budget: Math.max(0, budget - imageTokens),
        counter,
        cache: this.#cache,
        ...(this.#historyLimit === undefined ? {} : { historyLimit: this.#historyLimit }),
      });
    // Room for the images the request may carry. When that room cuts the newest message, one image
    // less; when the chosen turns hold fewer images, the turns are chosen again with room for those
    // only (the newest images stay the same: a larger budget only adds older turns).
    let images = this.#imagesAllowed(input);
    let built = await build(images * IMAGE_PART_TOKENS);
    while (images > 0 && built.truncated) {
      images -= 1;
      built = await build(images * IMAGE_PART_TOKENS);
    }
    const held = countModelImages(built.messages);
    if (held < images) {
      images = held;
      built = await build(images * IMAGE_PART_TOKENS);
    }
    const sent = await attachmentsForModel(built.messages, this.#reader(), { maxImages: images });
    // Messages without attachments come back as they were: their count is the built one (no recount).
    const unchanged =
      sent.messages === built.messages || (sent.messages.length === built.messages.length && sent.messages.every((m, i) => m === built.messages[i]));
    const messageTokens = unchanged ? built.tokens : counter.countMessages(sent.messages);
    const contextPrompt = built.dropped > 0 ? `${input.contextPrompt}\n\n${droppedNote(built.dropped)}` : input.contextPrompt;
    const sentPrompt = this.#countPrompt(counter, contextPrompt);
    const measure: ContextMeasure = {
      model: window.model,
      window: window.tokens,
      budget,
      requestTokens: messageTokens + sentPrompt + extra + tools,
      messageTokens,
      images: sent.images,
      fullTokens: built.fullTokens,
      fullCount: built.fullCount,
      dropped: built.dropped,
      correction,
    };
    this.#measures.delete(input.sessionId);
    this.#measures.set(input.sessionId, measure);
    if (this.#measures.size > MEASURED_SESSIONS) this.#measures.delete(this.#measures.keys().next().value!);
    return { messages: sent.messages, contextPrompt, built, measure };
  }

  /**
   * Tokens of a context prompt as a system message. A session's prompt is the same turn after
   * turn: its count is remembered (per counter, the newest {@link COUNTED_PROMPTS} prompts).
   */
  #countPrompt(counter: TokenCounter, prompt: string): number {
    let counts = this.#promptCounts.get(counter);
    if (counts === undefined) {
      counts = new Map();
      this.#promptCounts.set(counter, counts);
    }
    const known = counts.get(prompt);
    if (known !== undefined) return known;
    const tokens = counter.countMessage({ role: "system", content: prompt });
    if (counts.size >= COUNTED_PROMPTS) counts.delete(counts.keys().next().value!);
    counts.set(prompt, tokens);
    return tokens;
  }

  /** How many images the turn's request may carry as image parts. */
  #imagesAllowed(input: AssembleInput): number {
    if (this.#maxImages === 0 || this.#db.readMedia === undefined) return 0;
    let accepts = false;
    try {
      accepts = input.agent.acceptsImages?.(input.model) === true;
    } catch {
      // An agent that cannot say gets no images.
    }
    return accepts ? this.#maxImages : 0;
  }

  /** The store's blob reads, as {@link attachmentsForModel} uses them. */
  #reader(): AttachmentReader {
    const db = this.#db;
    return {
      readMedia: (sha256) => (db.readMedia === undefined ? Promise.resolve(null) : db.readMedia(sha256)),
      ...(db.getMedia === undefined ? {} : { getMedia: (sha256: string) => db.getMedia!(sha256) }),
    };
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
      tokens += this.#cache.countUnstored(counter, shaped);
    }
    measure.fullTokens += tokens;
    measure.fullCount += messages.length;
  }

  /** What the last assembled context of a session measured (updated by {@link TurnContexts.recordTurn}), or `undefined`. */
  measure(sessionId: string): ContextMeasure | undefined {
    return this.#measures.get(sessionId);
  }
}
