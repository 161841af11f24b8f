/**
 * The provider configuration: the one validator of a `provider` section (used by
 * {@link resolveProviderConfig} and by the `threadline serve` config file), its merge over the
 * environment, and the choice of a provider model for a requested name.
 *
 * Every problem is reported the same way wherever the section comes from:
 * `provider.<key>: must be <what is expected> (got <value>)`; an API key is never echoed.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";
import { PROVIDER_VISION_SETTINGS, type ProviderVisionSetting } from "./vision-support.js";

/** The base URL used when only an API key is configured. */
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";

/** Default time allowed for one model call, in milliseconds. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;

/**
 * The smallest `provider.timeoutMs` (milliseconds): the rule of the configuration reference.
 * No model call is answered sooner; a smaller value is a unit slip (seconds written for milliseconds).
 */
export const MIN_PROVIDER_TIMEOUT_MS = 100;

/** The smallest context window a configuration may give (as `MIN_CONTEXT_WINDOW` in src/context). */
const MIN_WINDOW = 1024;

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
  /** Whether requests may carry images (see {@link ProviderVisionSetting}; default `auto`). */
  vision?: ProviderVisionSetting;
  /** The speech-to-text model of `/audio/transcriptions` (e.g. `whisper-1`); unset: voice notes are not transcribed. */
  transcriptionModel?: string;
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
  /** `auto` unless configured (section, else `THREADLINE_PROVIDER_VISION`). */
  vision: ProviderVisionSetting;
  /** The speech-to-text model (section, else `THREADLINE_TRANSCRIPTION_MODEL`); absent: no transcription. */
  transcriptionModel?: string;
}

/** Options of {@link providerSectionProblems}. */
export interface ProviderSectionCheckOptions {
  /** The tool names `provider.tools` may list (default: any non-blank name). */
  toolNames?: readonly string[];
}

/** One problem of a `provider` section. */
export interface ProviderSectionProblem {
  /** The key it is about, e.g. `provider.timeoutMs`. */
  field: string;
  /** The path of that key inside the section (`[]` for the section itself). */
  path: string[];
  /** What is wrong, without the key: `must be … (got …)` or `unknown key(s) …; allowed: …`. */
  problem: string;
  /** `<field>: <problem>`. */
  message: string;
}

/** The keys of a `provider` section, in the order they are listed. */
const SECTION_KEYS = ["baseUrl", "apiKey", "model", "timeoutMs", "tools", "models", "contextWindow", "vision", "transcriptionModel"] as const;

/**
 * What each key of a `provider` section must be (`provider.models.*` is an entry of `models`),
 * as the `must be …` part of a problem and of the configuration reference.
 */
export function providerExpected(options: ProviderSectionCheckOptions = {}): Readonly<Record<string, string>> {
  const tools =
    options.toolNames === undefined
      ? "auto (default), off, or a list of tool names such as [session_search]"
      : `auto (default), off, or a list of tool names from: ${options.toolNames.join(", ")}`;
  return {
    provider: `a mapping of provider settings (${SECTION_KEYS.join(", ")})`,
    "provider.baseUrl": "an http(s) URL such as https://api.openai.com/v1",
    "provider.apiKey": "a non-empty string (or set OPENAI_API_KEY)",
    "provider.model": "a model name (or set THREADLINE_MODEL)",
    "provider.timeoutMs": `a whole number of milliseconds ≥ ${MIN_PROVIDER_TIMEOUT_MS}`,
    "provider.tools": tools,
    "provider.models":
      "a mapping of requested model names to provider models, e.g. { gpt-4o: llama3.1 } or { gpt-4o: { model: llama3.1, contextWindow: 8192 } }",
    "provider.models.*": "a provider model name (the model answering requests for this name), or { model: <name>, contextWindow: <tokens> }",
    "provider.models.*.model": "the provider model answering requests for this name",
    "provider.models.*.contextWindow": `a whole number of tokens ≥ ${MIN_WINDOW}: this model's context window, e.g. 8192`,
    "provider.contextWindow": `a whole number of tokens ≥ ${MIN_WINDOW}: the model's context window, e.g. 128000 (default: the table of well-known models, else 8192)`,
    "provider.vision": "auto (default: images are sent until the provider refuses them for a model), on or off (or set THREADLINE_PROVIDER_VISION)",
    "provider.transcriptionModel":
      "a speech-to-text model name such as whisper-1, for voice notes and audio files (default: unset, voice is not transcribed; or set THREADLINE_TRANSCRIPTION_MODEL)",
  };
}

/**
 * Every problem of a `provider` section, in key order (`[]` when it is valid). `undefined` and
 * `null` (a section or key written without a value) and blank strings count as unset. Unknown
 * keys are problems. The one check of the section: {@link resolveProviderConfig} throws the first
 * problem, and `threadline serve` reports them all (with `toolNames`, the tools it can give).
 *
 * @example
 * providerSectionProblems({ timeoutMs: 50 })[0]?.message;
 * // "provider.timeoutMs: must be a whole number of milliseconds ≥ 100 (got 50)"
 */
export function providerSectionProblems(section: unknown, options: ProviderSectionCheckOptions = {}): ProviderSectionProblem[] {
  const expected = providerExpected(options);
  const problems: ProviderSectionProblem[] = [];
  const add = (path: string[], problem: string): void => {
    const field = ["provider", ...path].join(".");
    problems.push({ field, path, problem, message: `${field}: ${problem}` });
  };
  const mustBe = (path: string[], what: string, value: unknown): void => add(path, `must be ${what} (got ${JSON.stringify(value)})`);
  if (section === undefined || section === null) return problems;
  if (!isRecord(section)) {
    mustBe([], expected.provider!, section);
    return problems;
  }
  const unknown = Object.keys(section).filter((key) => !(SECTION_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) add([], unknownKeys(unknown, SECTION_KEYS));
  const set = (key: string): boolean => section[key] !== undefined && section[key] !== null;

  if (set("baseUrl")) {
    const value = section.baseUrl;
    if (typeof value !== "string" || (value.trim() !== "" && !isHttpUrl(value.trim()))) mustBe(["baseUrl"], expected["provider.baseUrl"]!, value);
  }
  if (set("apiKey") && typeof section.apiKey !== "string") add(["apiKey"], `must be ${expected["provider.apiKey"]} (got ${typeof section.apiKey})`);
  if (set("model") && typeof section.model !== "string") mustBe(["model"], expected["provider.model"]!, section.model);
  if (set("timeoutMs") && !isWholeAtLeast(section.timeoutMs, MIN_PROVIDER_TIMEOUT_MS)) {
    mustBe(["timeoutMs"], expected["provider.timeoutMs"]!, section.timeoutMs);
  }
  if (set("tools")) {
    const value = section.tools;
    const named = (name: unknown): boolean =>
      typeof name === "string" && name.trim() !== "" && (options.toolNames === undefined || options.toolNames.includes(name.trim()));
    if (value !== "auto" && value !== "off" && !(Array.isArray(value) && value.every(named))) mustBe(["tools"], expected["provider.tools"]!, value);
  }
  if (set("models")) {
    const value = section.models;
    if (!isRecord(value)) mustBe(["models"], expected["provider.models"]!, value);
    else {
      for (const [name, target] of Object.entries(value)) {
        if (name.trim() === "") {
          mustBe(["models"], expected["provider.models"]!, value);
          continue;
        }
        if (typeof target === "string" && target.trim() !== "") continue;
        if (!isRecord(target) || typeof target.model !== "string" || target.model.trim() === "") {
          mustBe(["models", name], expected["provider.models.*"]!, target);
          continue;
        }
        const extra = Object.keys(target).filter((key) => key !== "model" && key !== "contextWindow");
        if (extra.length > 0) add(["models", name], unknownKeys(extra, ["model", "contextWindow"]));
        if (target.contextWindow !== undefined && target.contextWindow !== null && !isWholeAtLeast(target.contextWindow, MIN_WINDOW)) {
          mustBe(["models", name, "contextWindow"], expected["provider.models.*.contextWindow"]!, target.contextWindow);
        }
      }
    }
  }
  if (set("contextWindow") && !isWholeAtLeast(section.contextWindow, MIN_WINDOW)) {
    mustBe(["contextWindow"], expected["provider.contextWindow"]!, section.contextWindow);
  }
  if (set("vision") && !isVisionSetting(section.vision)) mustBe(["vision"], expected["provider.vision"]!, section.vision);
  if (set("transcriptionModel") && (typeof section.transcriptionModel !== "string" || section.transcriptionModel.trim() === "")) {
    mustBe(["transcriptionModel"], expected["provider.transcriptionModel"]!, section.transcriptionModel);
  }
  return problems;
}

/**
 * Merges a configuration-file `provider` section over the environment (`OPENAI_BASE_URL`,
 * `OPENAI_API_KEY`, `THREADLINE_MODEL`, `THREADLINE_PROVIDER_VISION`,
 * `THREADLINE_TRANSCRIPTION_MODEL`) and validates the result. Empty strings count as
 * unset. Returns `null` when no provider is configured, that is when neither a base URL
 * nor an API key is set anywhere (callers then fall back to the echo agent); the base URL
 * defaults to {@link DEFAULT_OPENAI_BASE_URL} when only a key is set.
 *
 * Throws {@link InvalidInputError} (with `field`, e.g. `"provider.baseUrl"`) when a value
 * is invalid (the first problem {@link providerSectionProblems} finds) or the model is missing.
 *
 * @example
 * resolveProviderConfig({ model: "gpt-4o-mini" }, { OPENAI_API_KEY: "sk-…" });
 * // { baseUrl: "https://api.openai.com/v1", apiKey: "sk-…", model: "gpt-4o-mini", timeoutMs: 60000, tools: "auto", models: {}, vision: "auto" }
 * resolveProviderConfig(undefined, {}); // null
 */
export function resolveProviderConfig(
  configSection: ProviderConfigSection | undefined = undefined,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedProviderConfig | null {
  const [first] = providerSectionProblems(configSection);
  if (first !== undefined) throw new InvalidInputError(first.message, { field: first.field });
  const section: Record<string, unknown> = (configSection ?? {}) as Record<string, unknown>;
  const baseUrl = pickString(section, "baseUrl", env, "OPENAI_BASE_URL");
  const apiKey = pickString(section, "apiKey", env, "OPENAI_API_KEY");
  const model = pickString(section, "model", env, "THREADLINE_MODEL");
  if (baseUrl === undefined && apiKey === undefined) return null;

  let resolvedBaseUrl = DEFAULT_OPENAI_BASE_URL;
  if (baseUrl !== undefined) {
    // The section's URL is checked above; one from the environment is checked here, by the same rule.
    if (!isHttpUrl(baseUrl.value)) {
      throw new InvalidInputError(
        `provider.baseUrl: must be ${providerExpected()["provider.baseUrl"]} (got ${JSON.stringify(baseUrl.value)}${fromEnv(baseUrl.envName)})`,
        { field: "provider.baseUrl" },
      );
    }
    resolvedBaseUrl = baseUrl.value.replace(/\/+$/u, "");
  }
  if (model === undefined) {
    throw new InvalidInputError("provider.model is required when a provider is configured (set THREADLINE_MODEL or provider.model).", {
      field: "provider.model",
    });
  }

  const vision = pickString(section, "vision", env, "THREADLINE_PROVIDER_VISION");
  if (vision !== undefined && !isVisionSetting(vision.value)) {
    throw new InvalidInputError(
      `provider.vision: must be ${providerExpected()["provider.vision"]} (got ${JSON.stringify(vision.value)}${fromEnv(vision.envName)})`,
      { field: "provider.vision" },
    );
  }
  const transcriptionModel = pickString(section, "transcriptionModel", env, "THREADLINE_TRANSCRIPTION_MODEL");

  const timeoutMs = typeof section.timeoutMs === "number" ? section.timeoutMs : DEFAULT_PROVIDER_TIMEOUT_MS;
  const tools: ProviderToolsSetting = Array.isArray(section.tools)
    ? section.tools.map((name: string) => name.trim())
    : section.tools === "off"
      ? "off"
      : "auto";
  const { models, contextWindows } = resolveModelMap(section.models);
  const resolved: ResolvedProviderConfig = {
    baseUrl: resolvedBaseUrl,
    model: model.value,
    timeoutMs,
    tools,
    models,
    vision: (vision?.value as ProviderVisionSetting | undefined) ?? "auto",
  };
  if (transcriptionModel !== undefined) resolved.transcriptionModel = transcriptionModel.value;
  if (Object.keys(contextWindows).length > 0) resolved.contextWindows = contextWindows;
  if (typeof section.contextWindow === "number") resolved.contextWindow = section.contextWindow;
  if (apiKey !== undefined) resolved.apiKey = apiKey.value;
  return resolved;
}

/** The model map of a valid section: names and targets trimmed, entries' windows by provider model. */
function resolveModelMap(value: unknown): { models: Record<string, string>; contextWindows: Record<string, number> } {
  const models: Record<string, string> = {};
  const contextWindows: Record<string, number> = {};
  if (!isRecord(value)) return { models, contextWindows };
  for (const [name, target] of Object.entries(value)) {
    if (typeof target === "string") {
      models[name.trim()] = target.trim();
    } else if (isRecord(target) && typeof target.model === "string") {
      const model = target.model.trim();
      models[name.trim()] = model;
      if (typeof target.contextWindow === "number") {
        // Two names for one provider model: the smaller window wins (it fits both).
        const known = contextWindows[model];
        contextWindows[model] = known === undefined ? target.contextWindow : Math.min(known, target.contextWindow);
      }
    }
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

/** A key's value from the (valid) section, else from the environment; blank counts as unset. */
function pickString(section: Record<string, unknown>, key: string, env: NodeJS.ProcessEnv, envName: string): { value: string; envName?: string } | undefined {
  const fromSection = section[key];
  if (typeof fromSection === "string" && fromSection.trim() !== "") return { value: fromSection.trim() };
  const fromEnvironment = env[envName];
  if (fromEnvironment !== undefined && fromEnvironment.trim() !== "") return { value: fromEnvironment.trim(), envName };
  return undefined;
}

function fromEnv(envName: string | undefined): string {
  return envName === undefined ? "" : ` from ${envName}`;
}

function unknownKeys(keys: string[], allowed: readonly string[]): string {
  return `unknown key(s) ${keys.map((key) => JSON.stringify(key)).join(", ")}; allowed: ${allowed.join(", ")}`;
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

function isVisionSetting(value: unknown): value is ProviderVisionSetting {
  return typeof value === "string" && (PROVIDER_VISION_SETTINGS as readonly string[]).includes(value);
}

function isWholeAtLeast(value: unknown, min: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= min;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
