/**
 * How many tokens a model's request may hold: the operator's setting (`provider.contextWindow`,
 * or a `provider.models` entry's `contextWindow`), else a small table of well-known models
 * (each number with its source beside it), else {@link DEFAULT_CONTEXT_WINDOW}.
 *
 * Names match by prefix, longest first, case-insensitively, after dropping a provider prefix
 * (`openai/gpt-4o`, `anthropic/claude-3.5-sonnet`); a tag after the name (`llama3.1:8b`,
 * `gpt-4o-2024-08-06`) is part of the prefix match.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";

/**
 * The window assumed for a model that is neither configured nor in the table: 8,192 tokens.
 * Too small only drops older messages sooner (compression then keeps their gist); too large
 * sends requests the provider refuses, or, with Ollama, silently truncates to its `num_ctx`
 * (2,048 to 4,096 by default, smaller than most models' nominal windows). 8,192 is the
 * smallest window of any current chat model in the table (GPT-4, Llama 3), so it fits
 * every model a gateway is likely to be pointed at.
 */
export const DEFAULT_CONTEXT_WINDOW = 8192;

/** The smallest `contextWindow` a configuration may set. */
export const MIN_CONTEXT_WINDOW = 1024;

/** Where a context window came from: the configuration, the table of well-known models, or the default. */
export type ContextWindowSource = "config" | "table" | "default";

/** A model's context window and where the number came from. */
export interface ContextWindow {
  /** Tokens a request (prompt and reply) may hold. */
  tokens: number;
  source: ContextWindowSource;
}

/**
 * Well-known models: name prefix → context window in tokens. Prefixes are lowercase and
 * matched longest first. Each number's source is the vendor page beside it.
 */
const KNOWN_WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  // OpenAI — https://platform.openai.com/docs/models (each model's page: "Context window")
  ["gpt-4o", 128_000], // https://platform.openai.com/docs/models/gpt-4o
  ["gpt-4o-mini", 128_000], // https://platform.openai.com/docs/models/gpt-4o-mini
  ["chatgpt-4o", 128_000], // https://platform.openai.com/docs/models/chatgpt-4o-latest
  ["gpt-4.1", 1_047_576], // https://platform.openai.com/docs/models/gpt-4.1 (mini and nano too)
  ["gpt-4.5", 128_000], // https://platform.openai.com/docs/models/gpt-4.5-preview
  // 400,000 context with up to 128,000 output: the input limit is 272,000.
  ["gpt-5", 272_000], // https://platform.openai.com/docs/models/gpt-5 (mini and nano too)
  ["o1", 200_000], // https://platform.openai.com/docs/models/o1
  ["o1-mini", 128_000], // https://platform.openai.com/docs/models/o1-mini
  ["o3", 200_000], // https://platform.openai.com/docs/models/o3 (o3-mini too)
  ["o4-mini", 200_000], // https://platform.openai.com/docs/models/o4-mini
  ["gpt-4-turbo", 128_000], // https://platform.openai.com/docs/models/gpt-4-turbo
  ["gpt-4-1106", 128_000], // https://platform.openai.com/docs/models/gpt-4-turbo (gpt-4-1106-preview)
  ["gpt-4-0125", 128_000], // https://platform.openai.com/docs/models/gpt-4-turbo (gpt-4-0125-preview)
  ["gpt-4-32k", 32_768], // https://platform.openai.com/docs/models/gpt-4
  ["gpt-4", 8_192], // https://platform.openai.com/docs/models/gpt-4
  ["gpt-3.5-turbo", 16_385], // https://platform.openai.com/docs/models/gpt-3.5-turbo
  ["gpt-oss", 131_072], // https://platform.openai.com/docs/models/gpt-oss-120b (20b too)
  // Anthropic — https://docs.anthropic.com/en/docs/about-claude/models/overview ("Context window: 200K")
  ["claude-3", 200_000], // claude-3-haiku/opus, claude-3-5-sonnet/haiku, claude-3-7-sonnet (also claude-3.5-… on routers)
  ["claude-sonnet-4", 200_000], // claude-sonnet-4-20250514, claude-sonnet-4-5 (200K by default; 1M only in beta)
  ["claude-opus-4", 200_000], // claude-opus-4-20250514, claude-opus-4-1
  ["claude-haiku-4", 200_000], // claude-haiku-4-5
  // Meta Llama — https://github.com/meta-llama/llama-models (each model card: "Context length")
  ["llama3.1", 131_072], // https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md (128K)
  ["llama-3.1", 131_072], // same, Hugging Face / router naming (meta-llama/Llama-3.1-8B-Instruct)
  ["meta-llama-3.1", 131_072], // same
  ["llama3.2", 131_072], // https://github.com/meta-llama/llama-models/blob/main/models/llama3_2/MODEL_CARD.md (128K)
  ["llama-3.2", 131_072], // same
  ["llama3.3", 131_072], // https://github.com/meta-llama/llama-models/blob/main/models/llama3_3/MODEL_CARD.md (128K)
  ["llama-3.3", 131_072], // same
  ["llama3", 8_192], // https://github.com/meta-llama/llama3/blob/main/MODEL_CARD.md (Llama 3: 8K)
  ["llama-3", 8_192], // same
  ["meta-llama-3", 8_192], // same
  // Mistral — https://docs.mistral.ai/getting-started/models/models_overview/ ("Max tokens")
  ["mistral-large", 131_072], // https://docs.mistral.ai/getting-started/models/models_overview/ (128k)
  ["mistral-medium", 131_072], // same (128k)
  ["mistral-small", 32_768], // same (32k for mistral-small-2409; later versions 128k, so the smaller number)
  ["mistral-nemo", 131_072], // https://mistral.ai/news/mistral-nemo (128k)
  ["open-mistral-nemo", 131_072], // same
  ["codestral", 32_768], // https://docs.mistral.ai/getting-started/models/models_overview/ (32k for codestral-2405; 256k later)
  ["mistral", 32_768], // https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.3 (32k; Ollama "mistral")
  ["open-mistral-7b", 32_768], // same
  ["mixtral-8x22b", 65_536], // https://mistral.ai/news/mixtral-8x22b (64K)
  ["open-mixtral-8x22b", 65_536], // same
  ["mixtral", 32_768], // https://mistral.ai/news/mixtral-of-experts (Mixtral 8x7B: 32k)
  ["open-mixtral", 32_768], // same
  // Qwen — https://huggingface.co/Qwen/Qwen2.5-7B-Instruct ("Context Length: Full 131,072 tokens", 32,768 without YaRN)
  ["qwen2.5", 32_768], // native window; 128K needs YaRN rope scaling, which Ollama and most servers do not turn on
  ["qwen-2.5", 32_768], // same, router naming
  // Google Gemini — https://ai.google.dev/gemini-api/docs/models ("Input token limit")
  ["gemini-1.5-pro", 2_097_152], // https://ai.google.dev/gemini-api/docs/models#gemini-1.5-pro
  ["gemini-1.5-flash", 1_048_576], // https://ai.google.dev/gemini-api/docs/models#gemini-1.5-flash
  ["gemini-2.0", 1_048_576], // https://ai.google.dev/gemini-api/docs/models#gemini-2.0-flash
  ["gemini-2.5", 1_048_576], // https://ai.google.dev/gemini-api/docs/models#gemini-2.5-pro (flash too)
  // DeepSeek — https://api-docs.deepseek.com/quick_start/pricing ("Context length")
  ["deepseek-chat", 65_536], // https://api-docs.deepseek.com/quick_start/pricing (64K)
  ["deepseek-reasoner", 65_536], // same (64K)
  ["deepseek-v3", 131_072], // https://huggingface.co/deepseek-ai/DeepSeek-V3 (128K)
  ["deepseek-r1", 131_072], // https://huggingface.co/deepseek-ai/DeepSeek-R1 (128K; Ollama's distills too)
];

/** Longest prefix first, so `gpt-4o` wins over `gpt-4` and `llama3.1` over `llama3`. */
const BY_LENGTH = [...KNOWN_WINDOWS].sort((a, b) => b[0].length - a[0].length);

/** The model name without a provider prefix (`openai/gpt-4o` → `gpt-4o`), lowercase. */
function bareName(model: string): string {
  return model.trim().toLowerCase().split("/").at(-1)!;
}

/**
 * The table's window for a model name, or `null` when the model is not in it.
 *
 * @example
 * knownContextWindow("openai/gpt-4o-mini"); // 128000
 * knownContextWindow("llama3.1:8b"); // 131072
 * knownContextWindow("my-finetune"); // null
 */
export function knownContextWindow(model: string | null | undefined): number | null {
  if (model === null || model === undefined || model.trim() === "") return null;
  const name = bareName(model);
  for (const [prefix, tokens] of BY_LENGTH) if (name.startsWith(prefix)) return tokens;
  return null;
}

/**
 * Checks a configured context window: a whole number of tokens ≥ {@link MIN_CONTEXT_WINDOW}.
 * Throws {@link InvalidInputError} naming `field` otherwise.
 */
export function checkContextWindow(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < MIN_CONTEXT_WINDOW) {
    throw new InvalidInputError(
      `${field} must be a whole number of tokens ≥ ${MIN_CONTEXT_WINDOW}, the model's context window, e.g. 128000 (got ${JSON.stringify(value)}).`,
      { field },
    );
  }
  return value;
}

/**
 * A model's context window: `configured` when given (source `config`), else the table of
 * well-known models (`table`), else {@link DEFAULT_CONTEXT_WINDOW} (`default`).
 *
 * @example
 * contextWindowFor("gpt-4o-mini"); // { tokens: 128000, source: "table" }
 * contextWindowFor("llama3.1", 8192); // { tokens: 8192, source: "config" }
 * contextWindowFor("my-finetune"); // { tokens: 8192, source: "default" }
 */
export function contextWindowFor(model: string | null | undefined, configured?: number | null): ContextWindow {
  if (configured !== undefined && configured !== null) return { tokens: checkContextWindow(configured, "contextWindow"), source: "config" };
  const known = knownContextWindow(model);
  if (known !== null) return { tokens: known, source: "table" };
  return { tokens: DEFAULT_CONTEXT_WINDOW, source: "default" };
}
