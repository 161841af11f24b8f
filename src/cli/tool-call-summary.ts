/**
 * Tool calls collapsed to one line, `[3 tool calls: terminal, web_search]`: the count of
 * calls and their distinct names in order of first use.
 *
 * @module
 */
import type { Message } from "../store/index.js";

/**
 * The one-line summary of some tool calls, by name (repeats counted, listed once).
 *
 * @example
 * summarizeToolCalls(["terminal", "web_search", "terminal"]); // "[3 tool calls: terminal, web_search]"
 * summarizeToolCalls(["terminal"]);                           // "[1 tool call: terminal]"
 */
export function summarizeToolCalls(names: readonly string[]): string {
  const distinct = [...new Set(names.map((n) => (n.trim() === "" ? "?" : n)))];
  const count = names.length;
  return `[${count} tool call${count === 1 ? "" : "s"}${distinct.length > 0 ? `: ${distinct.join(", ")}` : ""}]`;
}

/** The names of the tool calls an assistant message makes (empty for other messages). */
export function toolCallNames(message: Pick<Message, "toolCalls">): string[] {
  return (message.toolCalls ?? []).map((call) => call.function?.name ?? "?");
}
