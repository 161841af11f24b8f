/**
 * `memory`: the agent's persistent, bounded memory of a person (hermes-agent's `memory` tool,
 * same shape): `add` an entry, `replace` or `remove` the entry holding `old_text`, in the
 * agent's notes (`target: "memory"`, hermes' `MEMORY.md`, 2,200 characters) or in what it knows
 * about the person (`target: "user"`, hermes' `USER.md`, 1,375 characters). It writes only the
 * memory of the person speaking (see {@link memoryOwnerFor}); the call has no argument that
 * names another person. A full memory refuses an addition with its usage; every success
 * reports the usage. Writes are optimistic: a change that lost a race with another turn is
 * recomputed on the new entries.
 *
 * @module
 */
import type { AgentTool } from "../agents/index.js";
import {
  InvalidInputError,
  MEMORY_CHAR_LIMIT,
  USER_CHAR_LIMIT,
  type AliasStore,
  type MemoryKind,
  type MemoryOwner,
  type MemoryRecord,
  type MemoryStore,
  type SessionHistory,
} from "../store/index.js";
import { memoryOwnerOfCall } from "./memory-owner.js";
import type { OwnerIdentities } from "./search-scope.js";

/** What joins entries when they are counted (hermes' `ENTRY_DELIMITER`). */
const SEPARATOR = "\n§\n";
/** Attempts of a change that keeps losing version races before the tool gives up. */
const MAX_ATTEMPTS = 10;

/**
 * When the model should use `memory` (the tool's {@link AgentTool.guidance}, put in the system
 * prompt by the gateway).
 */
export const MEMORY_GUIDANCE =
  "You have a small persistent memory of the person you are talking to, shown in the Memory section and kept across sessions. " +
  "Save durable facts with the memory tool: their preferences, their setup, decisions and conventions worth keeping (target user for facts about them, " +
  "memory for your own notes). Keep entries short, replace outdated ones, and never save secrets or one-off details.";

/** The character limit of a target. */
function limitOf(kind: MemoryKind): number {
  return kind === "memory" ? MEMORY_CHAR_LIMIT : USER_CHAR_LIMIT;
}

/** Characters (code points) of entries joined by the separator, as the store counts them. */
function charsOf(entries: readonly string[]): number {
  let chars = 0;
  for (const entry of entries) chars += [...entry].length;
  return chars + Math.max(0, entries.length - 1) * SEPARATOR.length;
}

const number = (n: number): string => n.toLocaleString("en-US");

/** `memory is at 2,140/2,200 chars` / `user memory is at …`. */
function level(kind: MemoryKind, entries: readonly string[]): string {
  return `${kind === "memory" ? "memory" : "user memory"} is at ${number(charsOf(entries))}/${number(limitOf(kind))} chars`;
}

/** {@link level} with the entry count. */
function usage(kind: MemoryKind, entries: readonly string[]): string {
  return `${level(kind, entries)} (${entries.length} ${entries.length === 1 ? "entry" : "entries"})`;
}

/** A change to apply to the current entries: the new entries and what was done, or a refusal. */
type Change = { entries: string[]; done: string } | { refusal: string };

function textArg(args: Record<string, unknown>, name: string): string | null {
  const value = args[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new InvalidInputError(`${name} must be a string.`, { field: name });
  return value.trim();
}

/** The one entry holding `oldText`, or a refusal. */
function find(entries: readonly string[], oldText: string, kind: MemoryKind): { index: number } | { refusal: string } {
  const hits = entries.flatMap((entry, index) => (entry.includes(oldText) ? [index] : []));
  if (hits.length === 0)
    return { refusal: `No ${kind} entry contains ${JSON.stringify(oldText)}; nothing changed. The entries are listed in the Memory section.` };
  if (new Set(hits.map((i) => entries[i])).size > 1) {
    return { refusal: `${hits.length} ${kind} entries contain ${JSON.stringify(oldText)}; give a longer old_text that only one entry holds. Nothing changed.` };
  }
  return { index: hits[0]! };
}

/** The change `action` makes to `entries`. */
function plan(action: string, kind: MemoryKind, entries: readonly string[], content: string | null, oldText: string | null): Change {
  const fits = (next: string[], doing: string, done: string): Change => {
    const after = charsOf(next);
    if (after <= limitOf(kind)) return { entries: next, done };
    return {
      refusal:
        `The ${level(kind, entries)}; ${doing} would make it ${number(after)}. ` +
        "Replace or remove an entry first (or save a shorter one). Nothing was saved.",
    };
  };
  if (action === "add") {
    if (content === null || content === "") throw new InvalidInputError("add needs content: the entry to save.", { field: "content" });
    if (entries.includes(content)) return { entries: [...entries], done: "That entry is already saved." };
    return fits([...entries, content], `adding this entry (${number([...content].length)} chars)`, "Saved the entry.");
  }
  if (oldText === null || oldText === "") throw new InvalidInputError(`${action} needs old_text: a part of the entry to ${action}.`, { field: "old_text" });
  const found = find(entries, oldText, kind);
  if ("refusal" in found) return found;
  if (action === "remove") return { entries: entries.filter((_, i) => i !== found.index), done: "Removed the entry." };
  if (content === null || content === "")
    throw new InvalidInputError("replace needs content: the new text of the entry (use remove to delete it).", { field: "content" });
  return fits(
    entries.map((entry, i) => (i === found.index ? content : entry)),
    "replacing the entry",
    "Replaced the entry.",
  );
}

/** Options of {@link memoryTool}. */
export interface MemoryToolOptions {
  /** The operator's ids per platform (config `gateway.owner`): their memory is one, on every platform. */
  owner?: OwnerIdentities;
}

/** What the `memory` tool needs of the store. */
export type MemoryToolStore = MemoryStore & AliasStore & SessionHistory;

/**
 * Applies one `memory` call for `person` and returns the text the model sees. Exported for the
 * CLI and tests; the tool calls it with the speaker's owner.
 */
export async function applyMemoryAction(db: MemoryStore, person: MemoryOwner, args: Record<string, unknown>): Promise<string> {
  const action = args["action"];
  if (action !== "add" && action !== "replace" && action !== "remove") {
    throw new InvalidInputError('action must be "add", "replace" or "remove".', { field: "action" });
  }
  const target = args["target"] ?? "memory";
  if (target !== "memory" && target !== "user") {
    throw new InvalidInputError('target must be "memory" (your notes) or "user" (about the person).', { field: "target" });
  }
  const content = textArg(args, "content");
  const oldText = textArg(args, "old_text");
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current: MemoryRecord | null = await db.getMemory(person, target);
    const entries = current?.entries ?? [];
    const change = plan(action, target, entries, content, oldText);
    if ("refusal" in change) return change.refusal;
    if (current !== null && change.entries.length === entries.length && change.entries.every((e, i) => e === entries[i])) {
      return `${change.done} The ${usage(target, entries)}.`;
    }
    const written = await db.writeMemory({ owner: person, kind: target, entries: change.entries, expectedVersion: current?.version ?? null });
    if (written !== null) return `${change.done} The ${usage(target, written.entries)}.`;
  }
  return "The memory was being changed by another turn at the same time; nothing was saved. Try again.";
}

/**
 * The `memory` function for agents (hermes' `memory` tool): it writes only the memory of the
 * person speaking (the call's `speaker`; without one, the session's user), and refuses when
 * nobody known is speaking.
 *
 * @example
 * const agent = new OpenAiCompatibleAgent({ ...provider, tools: [memoryTool(db, { owner: { telegram: ["42"] } })] });
 */
export function memoryTool(db: MemoryToolStore, options: MemoryToolOptions = {}): AgentTool {
  return {
    name: "memory",
    description:
      "Save, update or remove an entry of your persistent memory of the person you are talking to (kept across sessions, shown in your system prompt). " +
      `target "user": facts about the person (limit ${number(USER_CHAR_LIMIT)} characters); target "memory": your own notes (limit ${number(MEMORY_CHAR_LIMIT)}). ` +
      "add saves content as a new entry; replace swaps the entry containing old_text for content; remove deletes the entry containing old_text.",
    guidance: MEMORY_GUIDANCE,
    savesState: true,
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["add", "replace", "remove"], description: "What to do." },
        target: { type: "string", enum: ["memory", "user"], description: "memory: your notes; user: facts about the person." },
        content: { type: "string", description: "The entry's text (add, replace)." },
        old_text: { type: "string", description: "A short unique part of the entry to replace or remove." },
      },
      required: ["action", "target"],
      additionalProperties: false,
    },
    async execute(args, context) {
      const person = await memoryOwnerOfCall(db, context.sessionId, context.speaker, options.owner);
      if (person === null) {
        return "Memory is not available in this turn: the person speaking is not known, so nothing was saved.";
      }
      return applyMemoryAction(db, person, args);
    },
  };
}
