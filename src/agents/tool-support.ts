/**
 * Which provider models refuse tools: a server without tool support (an Ollama model
 * without a tool template, vLLM without `--enable-auto-tool-choice`, llama.cpp without
 * `--jinja`) rejects any request that carries `tools`. {@link isToolsUnsupportedError}
 * recognises those refusals; a {@link ToolSupport} remembers them for the life of the
 * process, so later turns go without tools at once instead of being refused first.
 *
 * @module
 */
import { RefusalMemo, type RefusalMemoOptions } from "./refusal-memo.js";

/**
 * How OpenAI-compatible servers word "this model/server cannot take tools":
 * - Ollama (400): `registry.ollama.ai/library/gemma2:2b does not support tools`;
 * - vLLM (400): `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`;
 * - llama.cpp server (500): `tools param requires --jinja flag`;
 * - others: `tools are not supported`, `function calling is not supported by this model`, `tool use is not enabled`.
 */
const TOOLS_UNSUPPORTED: readonly RegExp[] = [
  /\bdoes(?: not|n't) support (?:tools|tool[ _-]?(?:use|calling|calls?)|function[ _-]?call(?:ing|s)?)\b/iu,
  /\btool[ _-]?choice requires --enable-auto-tool-choice\b/iu,
  /\btools? param(?:eter)?s? requires? --jinja\b/iu,
  /\b(?:tools?|tool[ _-]?(?:use|calling|calls?)|function[ _-]?call(?:ing|s)?)\b[^.]{0,40}\b(?:(?:is|are) not (?:supported|enabled|available)|unsupported)\b/iu,
  /\bunsupported\b[^.]{0,20}\b(?:tools?|function[ _-]?calling)\b/iu,
];

/** Statuses such refusals come with (llama.cpp answers 500; nobody answers 401/404/429 for it). */
const REFUSAL_STATUSES = new Set([400, 422, 500, 501]);

/**
 * Whether a provider's failed reply means "no tools here".
 *
 * @example
 * isToolsUnsupportedError(400, "registry.ollama.ai/library/gemma2:2b does not support tools"); // true
 * isToolsUnsupportedError(400, "max_tokens is too large"); // false
 */
export function isToolsUnsupportedError(status: number | null, providerMessage: string | null): boolean {
  if (status === null || !REFUSAL_STATUSES.has(status) || providerMessage === null) return false;
  return TOOLS_UNSUPPORTED.some((pattern) => pattern.test(providerMessage));
}

/** Options of {@link ToolSupport}. */
export type ToolSupportOptions = RefusalMemoOptions;

/**
 * Remembers which endpoint and model refused tools. Agents of one process share one
 * (the default {@link PROCESS_TOOL_SUPPORT}, or the one given to them), so only the first
 * turn after a start pays for the refused request.
 *
 * @example
 * const support = new ToolSupport({ onRefused: ({ model }) => console.warn(`${model}: no tools`) });
 * new OpenAiCompatibleAgent({ baseUrl, model, tools, toolSupport: support });
 */
export class ToolSupport extends RefusalMemo {}

/** The memo agents use when none is given: one per process. */
export const PROCESS_TOOL_SUPPORT = new ToolSupport();
