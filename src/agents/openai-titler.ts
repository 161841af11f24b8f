/**
 * {@link OpenAiTitler}: a {@link Titler} that asks an OpenAI-compatible endpoint for a short
 * session title, and {@link cleanModelTitle}, which tidies the model's answer.
 *
 * @module
 */
import { sanitizeTitle } from "../store/index.js";
import type { Titler } from "./agent.js";
import { excerpt, makeEndpoint, partsText, postChatCompletion, trimTrailingSlashes, type Endpoint, type FetchFunction } from "./openai-transport.js";
import { resolveProviderConfig, type ProviderConfigSection } from "./provider-config.js";

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
