/**
 * An {@link Agent} and a {@link Titler} for any OpenAI-compatible chat-completions endpoint
 * (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama's `/v1`, LiteLLM…), using Node's global
 * `fetch`. Tools given in `tools` are executed; a call to any other gets a synthetic "not available"
 * result and the model is asked again, so every turn ends with an assistant reply.
 *
 * @module
 */
import { InvalidInputError, sanitizeTitle, ThreadlineError } from "../store/index.js";
import type { ContentPart, ConversationMessage, NewMessage, ToolCall, UsageUpdate } from "../store/index.js";
import { AgentError, AgentInterruptedError } from "./agent.js";
import type { Agent, AgentResetInput, AgentTool, AgentToolDefinition, AgentTurnInput, AgentTurnResult, Titler, ToolCallContext } from "./agent.js";
import { readChatStream, StreamErrorChunk } from "./chat-stream.js";
import { isToolsUnsupportedError, PROCESS_TOOL_SUPPORT, type ToolSupport } from "./tool-support.js";

/** The base URL used when only an API key is configured. */
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";

/** Default time allowed for one model call, in milliseconds. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;

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

/** The `fetch` function shape the provider uses (the global `fetch` by default). */
export type FetchFunction = typeof globalThis.fetch;

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
}

/** `provider.tools`: `auto` (the configured tools, dropped when the provider refuses them), `off`, or the tool names to send. */
export type ProviderToolsSetting = "auto" | "off" | string[];

/** The `provider` section of a configuration file. Every field is optional; env fills the gaps. */
export interface ProviderConfigSection {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  timeoutMs?: number;
  /** See {@link ProviderToolsSetting} (default `auto`). */
  tools?: ProviderToolsSetting;
  /**
   * Model names clients may ask for → the provider model that answers them (default none):
   * the model's name, or `{ model, contextWindow }` to give its context window too.
   */
  models?: Record<string, string | ProviderModelEntry>;
  /** The context window of `model` in tokens (default: the table of well-known models, else 8,192). */
  contextWindow?: number;
}

/** An entry of `provider.models` with its context window. */
export interface ProviderModelEntry {
  /** The provider model that answers. */
  model: string;
  /** Its context window in tokens (≥ 1,024; default: `provider.contextWindow`, else the table, else 8,192). */
  contextWindow?: number;
}

/** A validated provider configuration, ready for {@link OpenAiCompatibleAgent}. */
export interface ResolvedProviderConfig {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  /** `auto` unless configured. */
  tools: ProviderToolsSetting;
  /** Requested model name → provider model (`{}` unless configured). */
  models: Record<string, string>;
  /** `provider.contextWindow`, when set: the window of `model`. */
  contextWindow?: number;
  /** Provider model → the context window its `provider.models` entry gives (absent unless an entry gives one). */
  contextWindows?: Record<string, number>;
}

/**
 * Merges a configuration-file `provider` section over the environment (`OPENAI_BASE_URL`,
 * `OPENAI_API_KEY`, `THREADLINE_MODEL`) and validates the result. Empty strings count as
 * unset. Returns `null` when no provider is configured, that is when neither a base URL
 * nor an API key is set anywhere (callers then fall back to the echo agent); the base URL
 * defaults to {@link DEFAULT_OPENAI_BASE_URL} when only a key is set.
 *
 * Throws {@link InvalidInputError} (with `field`, e.g. `"provider.baseUrl"`) when a value
 * is invalid or the model is missing.
 *
 * @example
 * resolveProviderConfig({ model: "gpt-4o-mini" }, { OPENAI_API_KEY: "sk-…" });
 * // { baseUrl: "https://api.openai.com/v1", apiKey: "sk-…", model: "gpt-4o-mini", timeoutMs: 60000 }
 * resolveProviderConfig(undefined, {}); // null
 */
export function resolveProviderConfig(
  configSection: ProviderConfigSection | undefined = undefined,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedProviderConfig | null {
  const section: unknown = configSection ?? {};
  if (!isRecord(section)) {
    throw new InvalidInputError("The provider section must be an object with baseUrl, apiKey, model and timeoutMs.", {
      field: "provider",
    });
  }
  const baseUrl = pickString(section, "baseUrl", env, "OPENAI_BASE_URL");
  const apiKey = pickString(section, "apiKey", env, "OPENAI_API_KEY");
  const model = pickString(section, "model", env, "THREADLINE_MODEL");
  if (baseUrl === undefined && apiKey === undefined) return null;

  let resolvedBaseUrl = DEFAULT_OPENAI_BASE_URL;
  if (baseUrl !== undefined) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(baseUrl.value);
    } catch {
      parsed = null;
    }
    if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      throw new InvalidInputError(
        `provider.baseUrl must be an http(s) URL (got ${JSON.stringify(baseUrl.value)}${fromEnv(baseUrl.envName)}), ` +
          `e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1".`,
        { field: "provider.baseUrl" },
      );
    }
    resolvedBaseUrl = trimTrailingSlashes(baseUrl.value);
  }
  if (model === undefined) {
    throw new InvalidInputError("provider.model is required when a provider is configured (set THREADLINE_MODEL or provider.model).", {
      field: "provider.model",
    });
  }

  let timeoutMs = DEFAULT_PROVIDER_TIMEOUT_MS;
  if (section.timeoutMs !== undefined && section.timeoutMs !== null) {
    const value = section.timeoutMs;
    if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
      throw new InvalidInputError(`provider.timeoutMs must be a positive whole number of milliseconds (got ${JSON.stringify(value)}).`, {
        field: "provider.timeoutMs",
      });
    }
    timeoutMs = value;
  }

  const tools = resolveToolsSetting(section.tools);
  const { models, contextWindows } = resolveModelMap(section.models);
  const resolved: ResolvedProviderConfig = { baseUrl: resolvedBaseUrl, model: model.value, timeoutMs, tools, models };
  if (Object.keys(contextWindows).length > 0) resolved.contextWindows = contextWindows;
  if (section.contextWindow !== undefined && section.contextWindow !== null)
    resolved.contextWindow = checkWindow(section.contextWindow, "provider.contextWindow");
  if (apiKey !== undefined) resolved.apiKey = apiKey.value;
  return resolved;
}

function resolveToolsSetting(value: unknown): ProviderToolsSetting {
  if (value === undefined || value === null) return "auto";
  if (value === "auto" || value === "off") return value;
  if (Array.isArray(value) && value.every((name) => typeof name === "string" && name.trim() !== "")) {
    return value.map((name: string) => name.trim());
  }
  throw new InvalidInputError(`provider.tools must be auto, off or a list of tool names such as [session_search] (got ${JSON.stringify(value)}).`, {
    field: "provider.tools",
  });
}

/** The smallest context window a configuration may give (as `MIN_CONTEXT_WINDOW` in src/context). */
const MIN_WINDOW = 1024;

function checkWindow(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < MIN_WINDOW) {
    throw new InvalidInputError(
      `${field} must be a whole number of tokens ≥ ${MIN_WINDOW}, the model's context window, e.g. 128000 (got ${JSON.stringify(value)}).`,
      { field },
    );
  }
  return value;
}

function resolveModelMap(value: unknown): { models: Record<string, string>; contextWindows: Record<string, number> } {
  const models: Record<string, string> = {};
  const contextWindows: Record<string, number> = {};
  if (value === undefined || value === null) return { models, contextWindows };
  const refuse = (): never => {
    throw new InvalidInputError(
      `provider.models must map requested model names to provider models, e.g. { "gpt-4o": "llama3.1" } or { "gpt-4o": { model: "llama3.1", contextWindow: 8192 } } (got ${JSON.stringify(value)}).`,
      { field: "provider.models" },
    );
  };
  if (!isRecord(value)) return refuse();
  for (const [name, target] of Object.entries(value)) {
    if (name.trim() === "") refuse();
    if (typeof target === "string") {
      if (target.trim() === "") refuse();
      models[name.trim()] = target.trim();
    } else if (
      isRecord(target) &&
      typeof target.model === "string" &&
      target.model.trim() !== "" &&
      Object.keys(target).every((k) => k === "model" || k === "contextWindow")
    ) {
      models[name.trim()] = target.model.trim();
      if (target.contextWindow !== undefined && target.contextWindow !== null) {
        const window = checkWindow(target.contextWindow, `provider.models.${name.trim()}.contextWindow`);
        // Two names for one provider model: the smaller window wins (it fits both).
        const known = contextWindows[target.model.trim()];
        contextWindows[target.model.trim()] = known === undefined ? window : Math.min(known, window);
      }
    } else refuse();
  }
  return { models, contextWindows };
}

/**
 * The provider model that answers a client's requested model: the configured model for no
 * name (or its own name), the mapped one for a name in `models`, else `null` (refuse it).
 *
 * @example
 * const config = { model: "llama3.1", models: { "gpt-4o": "qwen2.5" } };
 * providerModelFor(config, undefined); // "llama3.1"
 * providerModelFor(config, "gpt-4o"); // "qwen2.5"
 * providerModelFor(config, "gpt-5"); // null
 */
export function providerModelFor(config: Pick<ResolvedProviderConfig, "model" | "models">, requested: string | null | undefined): string | null {
  if (requested === undefined || requested === null || requested.trim() === "" || requested.trim() === config.model) return config.model;
  return Object.hasOwn(config.models, requested.trim()) ? config.models[requested.trim()]! : null;
}

function pickString(section: Record<string, unknown>, key: string, env: NodeJS.ProcessEnv, envName: string): { value: string; envName?: string } | undefined {
  const fromSection = section[key];
  if (fromSection !== undefined && fromSection !== null) {
    if (typeof fromSection !== "string") {
      const shown = key === "apiKey" ? typeof fromSection : JSON.stringify(fromSection);
      throw new InvalidInputError(`provider.${key} must be a string (got ${shown}).`, { field: `provider.${key}` });
    }
    if (fromSection.trim() !== "") return { value: fromSection.trim() };
  }
  const fromEnvironment = env[envName];
  if (fromEnvironment !== undefined && fromEnvironment.trim() !== "") return { value: fromEnvironment.trim(), envName };
  return undefined;
}

function fromEnv(envName: string | undefined): string {
  return envName === undefined ? "" : ` from ${envName}`;
}

function trimTrailingSlashes(url: string): string {
  return url.replace(/\/+$/u, "");
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
  }

  /**
   * Builds an agent from `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `THREADLINE_MODEL`
   * (`overrides` win over the environment). Returns `null` when neither a base URL nor an
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

/** Options of {@link OpenAiTitler}. */
export interface OpenAiTitlerOptions {
  /** The API root, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Time allowed for the title request, in milliseconds (default 15,000). */
  timeoutMs?: number;
  fetch?: FetchFunction;
  headers?: Record<string, string>;
}

/** The system prompt of {@link OpenAiTitler} (the fake test server recognises it as a title request). */
export const TITLE_SYSTEM_PROMPT =
  "Write a title of 3 to 7 words for the conversation below. " + "Reply with the title only: no quotes, no trailing punctuation, no explanation.";

const TITLE_MAX_WORDS = 7;
const TITLE_MAX_CHARS = 60;
const TITLE_EXCERPT_CHARS = 1_000;

/**
 * Proposes a session title by asking an OpenAI-compatible endpoint for a 3–7 word title
 * (`max_tokens: 20`), then strips quotes, a `Title:` prefix and trailing punctuation.
 * Never throws: any failure (network, status, empty answer, abort) gives `null`.
 *
 * @example
 * const titler = new OpenAiTitler({ baseUrl: "https://api.openai.com/v1", apiKey, model: "gpt-4o-mini" });
 * await titler.proposeTitle({ userText: "How do I rotate nginx logs?", replyText: "Use logrotate…" });
 * // "Rotating Nginx Logs With Logrotate"
 */
export class OpenAiTitler implements Titler {
  readonly #endpoint: Endpoint;
  readonly #model: string;

  constructor(options: OpenAiTitlerOptions) {
    const { baseUrl, apiKey, model, timeoutMs = 15_000, headers } = options;
    this.#model = model;
    this.#endpoint = makeEndpoint(trimTrailingSlashes(baseUrl), apiKey, timeoutMs, options.fetch, headers);
  }

  /**
   * A titler for the provider configured in the environment (see
   * {@link OpenAiCompatibleAgent.fromEnv}), or `null` when none is configured.
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<OpenAiTitlerOptions> = {}): OpenAiTitler | null {
    const section: ProviderConfigSection = {};
    if (overrides.baseUrl !== undefined) section.baseUrl = overrides.baseUrl;
    if (overrides.apiKey !== undefined) section.apiKey = overrides.apiKey;
    if (overrides.model !== undefined) section.model = overrides.model;
    const config = resolveProviderConfig(section, env);
    if (config === null) return null;
    const options: OpenAiTitlerOptions = { ...overrides, baseUrl: config.baseUrl, model: config.model };
    if (config.apiKey !== undefined) options.apiKey = config.apiKey;
    return new OpenAiTitler(options);
  }

  /** Asks the endpoint for a title; `null` on any failure or an unusable answer. */
  async proposeTitle(input: { userText: string; replyText: string; signal?: AbortSignal }): Promise<string | null> {
    try {
      const conversation = `User: ${excerpt(input.userText, TITLE_EXCERPT_CHARS)}\n\n` + `Assistant: ${excerpt(input.replyText, TITLE_EXCERPT_CHARS)}`;
      const body = {
        model: this.#model,
        messages: [
          { role: "system", content: TITLE_SYSTEM_PROMPT },
          { role: "user", content: conversation },
        ],
        max_tokens: 20,
      };
      const reply = await postChatCompletion(this.#endpoint, body, input.signal, this.#model);
      const content = reply.message.content;
      const text = typeof content === "string" ? content : Array.isArray(content) ? partsText(content) : "";
      return cleanModelTitle(text);
    } catch {
      return null;
    }
  }
}

/**
 * Cleans a model's title answer: first non-empty line, no `Title:` prefix, no quotes,
 * markdown emphasis or trailing punctuation, at most 7 words and 60 characters.
 * `null` when nothing usable is left.
 *
 * @example
 * cleanModelTitle('Title: "Fixing the Build."') // "Fixing the Build"
 */
export function cleanModelTitle(raw: string): string | null {
  const line = raw
    .split(/\r?\n/u)
    .map((candidate) => candidate.trim())
    .find((candidate) => candidate !== "");
  if (line === undefined) return null;
  let title = line
    .replace(/^(?:#+\s*)?(?:\*\*)?title\s*:\s*/iu, "")
    .replace(/[*_`]+/gu, "")
    .replace(/["“”„«»]/gu, "")
    .replace(/^'+|'+$/gu, "")
    .replace(/\s+/gu, " ")
    .trim();
  title = title.replace(/[\s.,;:!?…'"-]+$/u, "").trim();
  let words = title.split(" ").filter((word) => word !== "");
  if (words.length > TITLE_MAX_WORDS) words = words.slice(0, TITLE_MAX_WORDS);
  while (words.length > 1 && words.join(" ").length > TITLE_MAX_CHARS) words = words.slice(0, -1);
  title = words.join(" ").replace(/[\s.,;:!?…-]+$/u, "");
  if (!/[\p{L}\p{N}]/u.test(title)) return null;
  if (title.length > TITLE_MAX_CHARS) title = [...title].slice(0, TITLE_MAX_CHARS).join("");
  try {
    return sanitizeTitle(title);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------
// HTTP and reply mapping shared by the agent and the titler.

interface Endpoint {
  url: string;
  /** The URL as shown in messages (no credentials). */
  shownUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  fetch: FetchFunction;
}

interface WireMessage {
  role: string;
  content: string | ContentPart[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

interface ParsedReply {
  message: NewMessage;
  usage: UsageUpdate;
  /** The reply's `model` (the model that answered), when it named one. */
  model?: string;
}

function makeEndpoint(
  baseUrl: string,
  apiKey: string | undefined,
  timeoutMs: number,
  fetchFunction: FetchFunction | undefined,
  extraHeaders: Record<string, string> | undefined,
): Endpoint {
  const url = `${baseUrl}/chat/completions`;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (apiKey !== undefined && apiKey !== "") headers.authorization = `Bearer ${apiKey}`;
  for (const [name, value] of Object.entries(extraHeaders ?? {})) headers[name.toLowerCase()] = value;
  return { url, shownUrl: redactUrl(url), headers, timeoutMs, fetch: fetchFunction ?? globalThis.fetch };
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** History messages in wire shape: reasoning fields are dropped (several providers reject them as input). */
function toWireMessage(message: ConversationMessage): WireMessage {
  const wire: WireMessage = { role: message.role, content: message.content ?? null };
  if (message.tool_calls !== undefined && message.tool_calls.length > 0) wire.tool_calls = message.tool_calls;
  if (message.tool_call_id !== undefined) wire.tool_call_id = message.tool_call_id;
  if (message.name !== undefined) wire.name = message.name;
  return wire;
}

function withContextPrompt(history: WireMessage[], contextPrompt: string): WireMessage[] {
  if (contextPrompt.trim() === "") return history;
  const context: WireMessage = { role: "system", content: contextPrompt };
  if (history[0]?.role === "system") return [history[0], context, ...history.slice(1)];
  return [context, ...history];
}

/**
 * One chat-completions call. Throws {@link AgentInterruptedError} (no partial) when
 * `callerSignal` aborts, {@link AgentError} for every other failure.
 */
async function postChatCompletion(
  endpoint: Endpoint,
  body: Record<string, unknown>,
  callerSignal: AbortSignal | undefined,
  model: string,
  onDelta?: (text: string) => void,
): Promise<ParsedReply> {
  if (callerSignal?.aborted) throw new AgentInterruptedError([], undefined, { cause: callerSignal.reason });
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new ThreadlineError("TL_ERR_TIMEOUT", `The model provider sent no reply within ${endpoint.timeoutMs} ms.`)),
    endpoint.timeoutMs,
  );
  const signal = callerSignal === undefined ? timeout.signal : AbortSignal.any([callerSignal, timeout.signal]);
  let status = 0;
  let text = "";
  let retryAfter: string | null;
  let streamed: Record<string, unknown> | null = null;
  try {
    const headers = onDelta === undefined ? endpoint.headers : { ...endpoint.headers, accept: "text/event-stream, application/json" };
    const response = await fetchResettable(endpoint, { method: "POST", headers, body: JSON.stringify(body), signal });
    status = response.status;
    retryAfter = response.headers.get("retry-after");
    const type = response.headers.get("content-type") ?? "";
    if (onDelta !== undefined && status >= 200 && status <= 299 && type.includes("text/event-stream")) {
      streamed = await readChatStream(response.body, onDelta);
    } else {
      text = await response.text();
    }
  } catch (error) {
    if (error instanceof StreamErrorChunk) {
      throw new AgentError(
        `The model provider reported an error in the middle of its streamed reply (${endpoint.shownUrl}). Provider said: ${quoteExcerpt(error.providerMessage)}.`,
        { status, providerMessage: error.providerMessage },
      );
    }
    if (callerSignal?.aborted) throw new AgentInterruptedError([], undefined, { cause: error });
    if (timeout.signal.aborted) {
      throw new AgentError(
        `The model provider sent no reply within ${endpoint.timeoutMs} ms (${endpoint.shownUrl}). ` +
          `It may be overloaded or the model slow to load: retry, or raise provider.timeoutMs.`,
        { cause: error },
      );
    }
    throw connectionError(endpoint, error);
  } finally {
    clearTimeout(timer);
  }

  if (streamed !== null) return parseCompletion(endpoint, status, streamed);
  let json: unknown;
  let parsedJson = true;
  try {
    json = JSON.parse(text);
  } catch {
    parsedJson = false;
  }

  if (status < 200 || status > 299) throw statusError(endpoint, status, parsedJson ? json : text, model, retryAfter);
  if (!parsedJson) {
    throw new AgentError(
      `The model provider's reply is not JSON (HTTP ${status} from ${endpoint.shownUrl}): ${quoteExcerpt(text)}. ` +
        `Check that the base URL points at an OpenAI-compatible API root (usually ending in /v1).`,
      { status },
    );
  }
  const parsed = parseCompletion(endpoint, status, json);
  // A provider that ignored `stream: true` answered in one piece: hand that piece on.
  if (onDelta !== undefined) {
    const whole = parsed.message.content;
    const piece = typeof whole === "string" ? whole : Array.isArray(whole) ? partsText(whole) : "";
    if (piece !== "") {
      try {
        onDelta(piece);
      } catch {
        // A listener's failure must not fail the turn.
      }
    }
  }
  return parsed;
}

/** Attempts of a request whose connection is reset before any reply arrives (the first try included). */
const RESET_ATTEMPTS = 3;

/** Error codes of a connection the server closed before answering (e.g. an idle keep-alive socket it dropped as it was reused). */
const RESET_CODES = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"]);

/**
 * `endpoint.fetch`, tried again (up to {@link RESET_ATTEMPTS} in all, at once, on a new
 * connection) when the connection is reset before the response starts. Under load a client
 * reuses an idle keep-alive connection just as the server closes it; nothing of the request
 * was answered, so sending it again is what OpenAI's own SDK does too. Any other failure, an
 * abort, and a reset after the response began are not retried. When every attempt fails the
 * first reset is thrown (a later attempt may only find the server gone).
 */
async function fetchResettable(endpoint: Endpoint, init: RequestInit & { signal: AbortSignal }): Promise<Response> {
  let first: unknown;
  for (let attempt = 1; ; attempt++) {
    try {
      return await endpoint.fetch(endpoint.url, init);
    } catch (error) {
      if (attempt === 1) first = error;
      const retry = !init.signal.aborted && attempt < RESET_ATTEMPTS && RESET_CODES.has(errorCode(error) ?? "");
      if (!retry) throw first;
    }
  }
}

function connectionError(endpoint: Endpoint, error: unknown): AgentError {
  const code = errorCode(error);
  const where = `the model provider at ${endpoint.shownUrl}`;
  if (code === "ECONNREFUSED") {
    return new AgentError(
      `Could not connect to ${where}: connection refused. Is the server running, and is the base URL (OPENAI_BASE_URL or provider.baseUrl) right?`,
      { cause: error },
    );
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new AgentError(`Could not connect to ${where}: host not found (${code}). Check the base URL (OPENAI_BASE_URL or provider.baseUrl) and DNS.`, {
      cause: error,
    });
  }
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE") {
    return new AgentError(
      `The model provider at ${endpoint.shownUrl} closed the connection before replying (${code}). ` +
        `Retry; if it keeps happening, check the provider's logs and any proxy in between.`,
      { cause: error },
    );
  }
  const detail = code ?? (error instanceof Error ? error.message : String(error));
  return new AgentError(`Could not reach ${where} (${detail}). Check the base URL (OPENAI_BASE_URL or provider.baseUrl) and the network.`, { cause: error });
}

/** The first `code` found on an error or its causes (undici wraps socket errors in `TypeError: fetch failed`). */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const nested = errorCode(errors[0]);
      if (nested !== undefined) return nested;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function statusError(endpoint: Endpoint, status: number, body: unknown, model: string, retryAfter: string | null): AgentError {
  const said = providerMessage(body);
  const saidPart = said === null ? "" : ` Provider said: ${quoteExcerpt(said)}.`;
  let advice: string;
  if (status === 401 || status === 403) {
    advice = `The model provider refused the credentials (HTTP ${status} from ${endpoint.shownUrl}): check OPENAI_API_KEY (or provider.apiKey).`;
  } else if (status === 404) {
    advice =
      `The model provider answered HTTP 404 (${endpoint.shownUrl}, model "${model}"): check the base URL ` +
      `(OPENAI_BASE_URL or provider.baseUrl) and the model name (THREADLINE_MODEL or provider.model).`;
  } else if (status === 429) {
    const wait = retryAfter === null ? "" : ` (the provider suggests waiting ${retryAfter} s)`;
    advice = `The model provider rate-limited the request (HTTP 429): retry later${wait}, or check the account's quota.`;
  } else if (status >= 500) {
    advice = `The model provider failed with HTTP ${status} (a provider error, not Threadline's): retry later.`;
  } else {
    advice =
      `The model provider rejected the request (HTTP ${status} from ${endpoint.shownUrl}): ` +
      `check the model name and options (max tokens, temperature) against the provider's documentation.`;
  }
  return new AgentError(advice + saidPart, { status, providerMessage: said });
}

/** `{error:{message}}` (OpenAI), `{error:"…"}`, `{message:"…"}` or raw text, else `null`. */
function providerMessage(body: unknown): string | null {
  if (typeof body === "string") return body.trim() === "" ? null : body;
  if (!isRecord(body)) return null;
  const error = body.error;
  if (typeof error === "string") return error;
  if (isRecord(error) && typeof error.message === "string") return error.message;
  if (typeof body.message === "string") return body.message;
  if (typeof body.detail === "string") return body.detail;
  return null;
}

function parseCompletion(endpoint: Endpoint, status: number, json: unknown): ParsedReply {
  const choices = isRecord(json) ? json.choices : undefined;
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (!isRecord(choice) || !isRecord(choice.message)) {
    const said = providerMessage(json);
    throw new AgentError(
      `The model provider's reply has no choices (HTTP ${status} from ${endpoint.shownUrl})` +
        (said === null ? "." : `; provider said: ${quoteExcerpt(said)}.`) +
        ` Check that the endpoint speaks the OpenAI chat-completions protocol.`,
      { status },
    );
  }
  const raw = choice.message;
  const message: NewMessage = { role: "assistant", content: mapContent(raw.content) };
  const toolCalls = mapToolCalls(raw.tool_calls);
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  if (typeof choice.finish_reason === "string") message.finishReason = choice.finish_reason;
  const reasoning = typeof raw.reasoning === "string" ? raw.reasoning : typeof raw.reasoning_content === "string" ? raw.reasoning_content : null;
  if (reasoning !== null && reasoning !== "") message.reasoning = reasoning;
  if (raw.reasoning_details !== undefined && raw.reasoning_details !== null) message.reasoningDetails = raw.reasoning_details;

  const usage = mapUsage(isRecord(json) ? json.usage : undefined);
  if (usage.outputTokens !== undefined) message.tokenCount = usage.outputTokens;
  const parsed: ParsedReply = { message, usage };
  if (isRecord(json) && typeof json.model === "string" && json.model.trim() !== "") parsed.model = json.model.trim();
  return parsed;
}

function mapContent(content: unknown): string | ContentPart[] | null {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const parts = content.filter((part): part is ContentPart => isRecord(part) && typeof part.type === "string");
    return parts;
  }
  return null;
}

function mapToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const calls: ToolCall[] = [];
  raw.forEach((entry: unknown, index) => {
    if (!isRecord(entry) || !isRecord(entry.function)) return;
    const fn = entry.function;
    const name = typeof fn.name === "string" && fn.name !== "" ? fn.name : "unknown";
    const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    calls.push({
      ...entry,
      id: typeof entry.id === "string" && entry.id !== "" ? entry.id : `call_${index}`,
      type: typeof entry.type === "string" ? entry.type : "function",
      function: { name, arguments: args },
    });
  });
  return calls;
}

function mapUsage(raw: unknown): UsageUpdate {
  const usage: UsageUpdate = { apiCalls: 1 };
  if (!isRecord(raw)) return usage;
  const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined);
  const input = count(raw.prompt_tokens);
  const output = count(raw.completion_tokens);
  const cached = isRecord(raw.prompt_tokens_details) ? count(raw.prompt_tokens_details.cached_tokens) : undefined;
  const reasoning = isRecord(raw.completion_tokens_details) ? count(raw.completion_tokens_details.reasoning_tokens) : undefined;
  if (input !== undefined) usage.inputTokens = input;
  if (output !== undefined) usage.outputTokens = output;
  if (cached !== undefined) usage.cacheReadTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
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

function partsText(parts: ContentPart[]): string {
  return parts
    .filter((part) => typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

function excerpt(text: string, maxChars: number): string {
  const folded = text.replace(/\s+/gu, " ").trim();
  const chars = [...folded];
  return chars.length <= maxChars ? folded : `${chars.slice(0, maxChars).join("")}…`;
}

function quoteExcerpt(text: string): string {
  return JSON.stringify(excerpt(text, 200));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
