/**
 * {@link OpenAiCompatibleAgent}: an {@link Agent} for any OpenAI-compatible chat-completions
 * endpoint (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama's `/v1`, LiteLLM…), using Node's global
 * `fetch`. Tools given in `tools` are executed; a call to any other gets a synthetic "not available"
 * result and the model is asked again, so every turn ends with an assistant reply. Images go as
 * `image_url` parts to models that take them (`vision`, learned per endpoint and model), and
 * voice is transcribed through `/audio/transcriptions` when a `transcriptionModel` is set.
 *
 * @module
 */
import { withAttachmentPlaceholders } from "../context/internal.js";
import { InvalidInputError } from "../store/index.js";
import type { ContentPart, ConversationMessage, NewMessage, ToolCall, UsageUpdate } from "../store/index.js";
import { AgentError, AgentInterruptedError } from "./agent.js";
import type { Agent, AgentResetInput, AgentTool, AgentToolDefinition, AgentTurnInput, AgentTurnResult, AudioInput, ToolCallContext } from "./agent.js";
import { transcriptionForm } from "./audio-upload.js";
import { DEFAULT_PROVIDER_TIMEOUT_MS, resolveProviderConfig, type ProviderConfigSection } from "./provider-config.js";
import { isToolsUnsupportedError, PROCESS_TOOL_SUPPORT, type ToolSupport } from "./tool-support.js";
import {
  imagePartPlaceholder,
  isImagesUnsupportedError,
  PROCESS_VISION_SUPPORT,
  PROVIDER_VISION_SETTINGS,
  type ProviderVisionSetting,
  type VisionSupport,
} from "./vision-support.js";
import {
  makeEndpoint,
  partsText,
  postChatCompletion,
  postTranscription,
  trimTrailingSlashes,
  type Endpoint,
  type FetchFunction,
  type ParsedReply,
  type WireMessage,
} from "./openai-transport.js";

/** How many model calls one turn may make (tool-call rounds included). */
export const MAX_MODEL_CALLS_PER_TURN = 4;

/** The instruction of the turn before an automatic reset (sent as a user message and stored with the turn). */
export function beforeResetPrompt(reason: "idle" | "daily" | "compression"): string {
  if (reason === "compression") {
    return (
      "[System note: this conversation is about to be compressed: its earlier part will be replaced by a short summary, and details may be lost. " +
      "Save what matters from it now with your tools (facts about the user, preferences, decisions, open tasks). " +
      'Then reply in one short line with what you saved, or "Nothing to save."]'
    );
  }
  const why = reason === "idle" ? "it has been idle too long" : "of the daily reset";
  return (
    `[System note: this session is about to be reset because ${why}; the next message starts a fresh session without this conversation. ` +
    "Save what matters from it now with your tools (facts about the user, preferences, decisions, open tasks). " +
    'Then reply in one short line with what you saved, or "Nothing to save."]'
  );
}

/** Options of {@link OpenAiCompatibleAgent}. */
export interface OpenAiCompatibleAgentOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /** The model name sent with every request. */
  model: string;
  /** Time allowed for one model call (request and reply body), in milliseconds (default 60,000). */
  timeoutMs?: number;
  /** Sent as `max_tokens` when set. */
  maxTokens?: number;
  /** Sent as `temperature` when set. */
  temperature?: number;
  /** A `fetch` to use instead of the global one (tests, proxies). */
  fetch?: FetchFunction;
  /** Extra request headers (e.g. `HTTP-Referer` for OpenRouter); they override the defaults. */
  headers?: Record<string, string>;
  /** Functions the model may call (sent as `tools`; calls are run and their results fed back). */
  tools?: AgentTool[];
  /**
   * Remembers models that refused tools (default: {@link PROCESS_TOOL_SUPPORT}, one per
   * process). A request refused for carrying tools is sent again without them, and later
   * turns for that endpoint and model leave them out.
   */
  toolSupport?: ToolSupport;
  /**
   * Whether requests may carry images as `image_url` parts (default `auto`): `on` always (a
   * refusal is an error), `off` never (each image part is sent as its `[image: type, size]`
   * placeholder), `auto` until the endpoint refuses images for a model (see `visionSupport`).
   */
  vision?: ProviderVisionSetting;
  /**
   * Remembers models that refused images (default: {@link PROCESS_VISION_SUPPORT}, one per
   * process). With `vision: "auto"`, a request refused for carrying images is sent again once
   * with each image replaced by its placeholder, and later requests for that endpoint and model
   * carry none.
   */
  visionSupport?: VisionSupport;
  /**
   * The speech-to-text model (e.g. `whisper-1`) of `POST <baseUrl>/audio/transcriptions`. Unset:
   * the agent has no `transcribe` method (voice is not enabled).
   */
  transcriptionModel?: string;
}

/**
 * An agent backed by an OpenAI-compatible `POST <baseUrl>/chat/completions` endpoint.
 *
 * Each turn sends the history with the context prompt as a system message (after the
 * history's own system message when it has one), maps the reply (content, tool calls,
 * finish reason, reasoning) and the usage (prompt, completion, cached and reasoning
 * tokens). Tool calls run the matching {@link AgentTool} from `tools` (a call to any other
 * function gets a synthetic result saying it is not available) and the model is called
 * again with the results (at most {@link MAX_MODEL_CALLS_PER_TURN} calls per turn).
 *
 * Failures throw {@link AgentError} with the HTTP status (when there was one) and a
 * message saying what to do; an abort by the caller's signal throws
 * {@link AgentInterruptedError} with the messages of earlier rounds.
 *
 * @example
 * const agent = OpenAiCompatibleAgent.fromEnv() ?? new EchoAgent();
 * const { messages, usage } = await agent.runTurn({
 *   messages: [{ role: "user", content: "Hello!" }],
 *   contextPrompt: "## Current Session Context\nSource: cli",
 *   signal: new AbortController().signal,
 *   sessionId: "20250101_120000_abcdef12",
 * });
 */
export class OpenAiCompatibleAgent implements Agent {
  /** `openai:<model>`. */
  readonly name: string;
  /** The model sent with every request. */
  readonly model: string;
  /** The API root without a trailing slash. */
  readonly baseUrl: string;
  readonly #endpoint: Endpoint;
  readonly #maxTokens: number | undefined;
  readonly #temperature: number | undefined;
  readonly #tools: Map<string, AgentTool>;
  readonly #toolSupport: ToolSupport;
  readonly #vision: ProviderVisionSetting;
  readonly #visionSupport: VisionSupport;
  /** The speech-to-text model, or `null` when none is set (then {@link transcribe} is absent). */
  readonly transcriptionModel: string | null;
  /**
   * Speech to text (see {@link Agent.transcribe}): present only when `transcriptionModel` is set.
   * Posts the audio to `<baseUrl>/audio/transcriptions` (multipart: `file` named after its type,
   * `model`, `response_format=json`) with the chat requests' key, headers and timeout; resolves
   * with the reply's `text`, throws {@link AgentError} (or {@link AgentInterruptedError}) as a chat call does.
   */
  declare readonly transcribe?: (audio: AudioInput, options?: { signal?: AbortSignal }) => Promise<string>;

  constructor(options: OpenAiCompatibleAgentOptions) {
    const { baseUrl, apiKey, model, timeoutMs = DEFAULT_PROVIDER_TIMEOUT_MS, maxTokens, temperature, headers } = options;
    if (typeof model !== "string" || model.trim() === "") {
      throw new InvalidInputError("The provider needs a model name (set THREADLINE_MODEL or provider.model).", {
        field: "model",
      });
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new InvalidInputError(`timeoutMs must be a positive number of milliseconds (got ${timeoutMs}).`, {
        field: "timeoutMs",
      });
    }
    this.model = model.trim();
    this.baseUrl = trimTrailingSlashes(baseUrl);
    this.name = `openai:${this.model}`;
    this.#endpoint = makeEndpoint(this.baseUrl, apiKey, timeoutMs, options.fetch, headers);
    this.#maxTokens = maxTokens;
    this.#temperature = temperature;
    this.#tools = new Map((options.tools ?? []).map((tool) => [tool.name, tool]));
    this.#toolSupport = options.toolSupport ?? PROCESS_TOOL_SUPPORT;
    const vision = options.vision ?? "auto";
    if (!PROVIDER_VISION_SETTINGS.includes(vision)) {
      throw new InvalidInputError(`vision must be auto, on or off (got ${JSON.stringify(vision)}).`, { field: "vision" });
    }
    this.#vision = vision;
    this.#visionSupport = options.visionSupport ?? PROCESS_VISION_SUPPORT;
    const transcriptionModel = options.transcriptionModel;
    if (transcriptionModel !== undefined && (typeof transcriptionModel !== "string" || transcriptionModel.trim() === "")) {
      throw new InvalidInputError(
        `transcriptionModel must be a speech-to-text model name such as whisper-1 (got ${JSON.stringify(transcriptionModel)}); leave it out to disable voice.`,
        { field: "transcriptionModel" },
      );
    }
    this.transcriptionModel = transcriptionModel === undefined ? null : transcriptionModel.trim();
    if (this.transcriptionModel !== null) {
      const model = this.transcriptionModel;
      this.transcribe = (audio, transcribeOptions) => postTranscription(this.#endpoint, transcriptionForm(audio, model), transcribeOptions?.signal, model);
    }
  }

  /**
   * Whether a request to `model` (default: the agent's own) may carry images now: `vision: "on"`
   * → true, `"off"` → false, `"auto"` → true until the endpoint refused images for that model.
   */
  acceptsImages(model?: string): boolean {
    if (this.#vision === "off") return false;
    if (this.#vision === "on") return true;
    const name = model !== undefined && model.trim() !== "" ? model.trim() : this.model;
    return !this.#visionSupport.refused(this.baseUrl, name);
  }

  /**
   * Builds an agent from `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `THREADLINE_MODEL` (and
   * `THREADLINE_PROVIDER_VISION`, `THREADLINE_TRANSCRIPTION_MODEL`; `overrides` win over the environment). Returns `null` when neither a base URL nor an
   * API key is set, so callers can fall back to the echo agent. Throws
   * {@link InvalidInputError} for an invalid URL or a missing model.
   *
   * @example
   * const agent = OpenAiCompatibleAgent.fromEnv(process.env, { timeoutMs: 30_000 }) ?? new EchoAgent();
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<OpenAiCompatibleAgentOptions> = {}): OpenAiCompatibleAgent | null {
    const section: ProviderConfigSection = {};
    if (overrides.baseUrl !== undefined) section.baseUrl = overrides.baseUrl;
    if (overrides.apiKey !== undefined) section.apiKey = overrides.apiKey;
    if (overrides.model !== undefined) section.model = overrides.model;
    if (overrides.timeoutMs !== undefined) section.timeoutMs = overrides.timeoutMs;
    if (overrides.vision !== undefined) section.vision = overrides.vision;
    if (overrides.transcriptionModel !== undefined) section.transcriptionModel = overrides.transcriptionModel;
    const config = resolveProviderConfig(section, env);
    if (config === null) return null;
    const { tools: _setting, models: _models, contextWindow: _window, contextWindows: _windows, ...connection } = config;
    return new OpenAiCompatibleAgent({ ...overrides, ...connection });
  }

  /**
   * The turn before an automatic reset (see {@link Agent.beforeReset}): only when one of the
   * agent's tools saves state (`savesState`) — without one there is nothing to save with,
   * and it returns `null` without calling the model. Otherwise one turn on the expiring
   * transcript plus {@link beforeResetPrompt}; returns the instruction and the turn's
   * messages, to be stored in the expiring session.
   */
  async beforeReset(input: AgentResetInput): Promise<AgentTurnResult | null> {
    if (![...this.#tools.values()].some((tool) => tool.savesState === true)) return null;
    const prompt = beforeResetPrompt(input.reason);
    const result = await this.runTurn({
      messages: [...input.transcript, { role: "user", content: prompt }],
      contextPrompt: input.contextPrompt ?? "",
      signal: input.signal,
      sessionId: input.sessionId,
      // The expiring session's person; without one nobody is speaking: tools act for no one.
      speaker: input.speaker ?? { platform: "gateway", userId: null, aliases: [], chatType: "dm", chatId: null },
    });
    return { ...result, messages: [{ role: "user", content: prompt }, ...result.messages] };
  }

  /**
   * The {@link AgentTool.guidance} of the tools this agent sends, in order: none when it has
   * no tools, or when the provider refused tools for its model (they are not sent then).
   */
  promptGuidance(): readonly string[] {
    if (this.#toolSupport.refused(this.baseUrl, this.model)) return [];
    return [...this.#tools.values()].map((tool) => tool.guidance?.trim() ?? "").filter((line) => line !== "");
  }

  /** The tools a turn's request carries (none when the provider refused tools for its model). */
  toolDefinitions(): readonly AgentToolDefinition[] {
    if (this.#toolSupport.refused(this.baseUrl, this.model)) return [];
    return [...this.#tools.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }

  /** Runs one turn against the endpoint. See the class description for the mapping and errors. */
  async runTurn(input: AgentTurnInput): Promise<AgentTurnResult> {
    const { messages, contextPrompt, signal, onDelta } = input;
    const model = input.model !== undefined && input.model.trim() !== "" ? input.model.trim() : this.model;
    const history = withContextPrompt(messages.map(toWireMessage), contextPrompt);
    // Images only to a model that takes them; otherwise each goes as its placeholder.
    if (!this.acceptsImages(model)) replaceImageParts(history);
    const produced: NewMessage[] = [];
    const usage: UsageUpdate = {};
    let promptTokens: number | undefined;
    let answeredBy: string | undefined;

    for (let call = 1; call <= MAX_MODEL_CALLS_PER_TURN; call++) {
      const body: Record<string, unknown> = { model, messages: history };
      const withTools = input.noTools !== true && this.#tools.size > 0 && !this.#toolSupport.refused(this.baseUrl, model);
      if (withTools) {
        body.tools = [...this.#tools.values()].map((tool) => ({
          type: "function",
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        }));
      }
      if (this.#maxTokens !== undefined) body.max_tokens = this.#maxTokens;
      if (this.#temperature !== undefined) body.temperature = this.#temperature;

      if (onDelta !== undefined) {
        body.stream = true;
        body.stream_options = { include_usage: true };
      }

      let reply: ParsedReply;
      try {
        reply = await postChatCompletion(this.#endpoint, body, signal, model, onDelta);
      } catch (error) {
        if (error instanceof AgentInterruptedError) {
          throw new AgentInterruptedError(produced, hasUsage(usage) ? usage : undefined, { cause: error.cause });
        }
        if (
          this.#vision === "auto" &&
          error instanceof AgentError &&
          isImagesUnsupportedError(error.status, error.providerMessage) &&
          replaceImageParts(history)
        ) {
          // The model cannot take images: remember it and ask again once with their placeholders (same call number).
          this.#visionSupport.markRefused(this.baseUrl, model, error.providerMessage ?? "");
          call -= 1;
          continue;
        }
        if (withTools && error instanceof AgentError && isToolsUnsupportedError(error.status, error.providerMessage)) {
          // The provider cannot take tools: remember it and ask again without them (same call number).
          this.#toolSupport.markRefused(this.baseUrl, model, error.providerMessage ?? "");
          call -= 1;
          continue;
        }
        throw error;
      }
      if (reply.model !== undefined) answeredBy = reply.model;
      addUsage(usage, reply.usage);
      if (reply.usage.inputTokens !== undefined) promptTokens = reply.usage.inputTokens;

      const assistant = reply.message;
      const toolCalls = assistant.toolCalls ?? [];
      if (toolCalls.length === 0) {
        produced.push(assistant);
        break;
      }
      if (call === MAX_MODEL_CALLS_PER_TURN) {
        // Last allowed call and the model still wants tools: keep its text but drop the calls,
        // so the stored history never has tool calls without results (providers reject that).
        const names = toolCalls.map((toolCall) => toolCall.function.name).join(", ");
        produced.push({
          ...assistant,
          toolCalls: null,
          content: hasText(assistant.content)
            ? assistant.content
            : `(Stopped after ${MAX_MODEL_CALLS_PER_TURN} model calls: the model kept asking for tools that are not available in this gateway: ${names}.)`,
        });
        break;
      }
      produced.push(assistant);
      history.push({ role: "assistant", content: assistant.content ?? null, tool_calls: toolCalls });
      for (const toolCall of toolCalls) {
        const content = await this.#runTool(toolCall, {
          sessionId: input.sessionId,
          signal,
          ...(input.speaker === undefined ? {} : { speaker: input.speaker }),
        });
        produced.push({ role: "tool", toolCallId: toolCall.id, toolName: toolCall.function.name, content });
        history.push({ role: "tool", tool_call_id: toolCall.id, content });
      }
    }

    const result: AgentTurnResult = { messages: produced, usage, model: answeredBy ?? model };
    if (promptTokens !== undefined) result.promptTokens = promptTokens;
    return result;
  }

  /** The result text of one tool call: the tool's output, or why it could not run. */
  async #runTool(toolCall: ToolCall, context: ToolCallContext): Promise<string> {
    const tool = this.#tools.get(toolCall.function.name);
    if (tool === undefined) return `Tool ${toolCall.function.name} is not available in this gateway.`;
    let parsed: unknown;
    try {
      parsed = toolCall.function.arguments.trim() === "" ? {} : JSON.parse(toolCall.function.arguments);
    } catch {
      parsed = null;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return `Tool ${tool.name} was called with arguments that are not a JSON object; call it again with valid JSON.`;
    }
    const args = parsed as Record<string, unknown>;
    try {
      return await tool.execute(args, context);
    } catch (error) {
      return `Tool ${tool.name} failed: ${(error as Error).message}`;
    }
  }
}

/**
 * History messages in wire shape: reasoning fields are dropped (several providers reject them as
 * input), and stored `attachment` parts, which no provider knows, become their text placeholders.
 */
function toWireMessage(message: ConversationMessage): WireMessage {
  const wire: WireMessage = { role: message.role, content: withAttachmentPlaceholders(message.content ?? null) };
  if (message.tool_calls !== undefined && message.tool_calls.length > 0) wire.tool_calls = message.tool_calls;
  if (message.tool_call_id !== undefined) wire.tool_call_id = message.tool_call_id;
  if (message.name !== undefined) wire.name = message.name;
  return wire;
}

/**
 * Replaces, in place, every `image_url` (and `input_image`) part of the messages with its
 * `[image: type, size]` text placeholder; `true` when there was one.
 */
function replaceImageParts(history: WireMessage[]): boolean {
  let replaced = false;
  for (const message of history) {
    if (!Array.isArray(message.content) || !message.content.some(isImagePart)) continue;
    message.content = message.content.map((part): ContentPart => (isImagePart(part) ? { type: "text", text: imagePartPlaceholder(imageUrlOf(part)) } : part));
    replaced = true;
  }
  return replaced;
}

function isImagePart(part: ContentPart): boolean {
  return part.type === "image_url" || part.type === "input_image";
}

function imageUrlOf(part: ContentPart): unknown {
  // Chat completions: `{ image_url: { url } }`; the Responses shape: `{ image_url: "<url>" }`.
  const value = part.image_url;
  return typeof value === "object" && value !== null ? (value as { url?: unknown }).url : value;
}

function withContextPrompt(history: WireMessage[], contextPrompt: string): WireMessage[] {
  if (contextPrompt.trim() === "") return history;
  const context: WireMessage = { role: "system", content: contextPrompt };
  if (history[0]?.role === "system") return [history[0], context, ...history.slice(1)];
  return [context, ...history];
}

const SUMMED_USAGE_FIELDS = ["inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens", "apiCalls"] as const;

function addUsage(total: UsageUpdate, add: UsageUpdate): void {
  for (const field of SUMMED_USAGE_FIELDS) {
    const value = add[field];
    if (value !== undefined) total[field] = (total[field] ?? 0) + value;
  }
}

function hasUsage(usage: UsageUpdate): boolean {
  return Object.keys(usage).length > 0;
}

function hasText(content: NewMessage["content"]): boolean {
  if (typeof content === "string") return content.trim() !== "";
  if (Array.isArray(content)) return partsText(content).trim() !== "";
  return false;
}
