/**
 * What `threadline memory` acts on: whose memory (`--for <platform>:<userId>`, default the owner:
 * the person at this terminal), which of the two (`--user`: USER, about the person; else MEMORY,
 * the agent's notes) and the gateway's database (as `threadline pairing` picks it).
 *
 * @module
 */
import type { TurnSpeaker } from "../../../agents/index.js";
import { memoryOwnerIdentities } from "../../../serve/internal.js";
import { CliError } from "../../cli-context.js";
import { loadServeConfig } from "../../serve-config-file.js";
import { MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT, type AliasStore, type MemoryKind, type MemoryOwner, type MemoryRecord } from "../../../store/index.js";
import { memoryOwnerFor, OWNER_MEMORY } from "../../../tools/internal.js";
import { printable } from "../pairing/pairing-text.js";

/** Options every `memory` subcommand takes. */
export interface MemoryTargetOptions {
  db?: string;
  config?: string;
  for?: string;
  user?: boolean;
}

/** The kind `--user` selects. */
export function kindOf(options: MemoryTargetOptions): MemoryKind {
  return options.user === true ? "user" : "memory";
}

/** The character limit of a kind. */
export function limitOf(kind: MemoryKind): number {
  return kind === "memory" ? MEMORY_CHAR_LIMIT : USER_CHAR_LIMIT;
}

/** `MEMORY` / `USER`: the kind as hermes names its file. */
export function kindName(kind: MemoryKind): string {
  return kind === "memory" ? "MEMORY" : "USER";
}

/** An owner as the operator reads it: `the owner`, or `telegram:42`. */
export function ownerText(owner: MemoryOwner): string {
  return owner.platform === OWNER_MEMORY.platform && owner.userId === OWNER_MEMORY.userId
    ? "the owner"
    : `${printable(owner.platform)}:${printable(owner.userId)}`;
}

/** The config of the run (for `database` and `gateway.owner`). */
export async function memoryConfig(options: MemoryTargetOptions, env: NodeJS.ProcessEnv) {
  return loadServeConfig(options.config, env);
}

/**
 * Whose memory `--for` names: the owner by default (or for `owner`), else the person's memory
 * owner as the gateway resolves a speaker (their canonical id; an identity of `gateway.owner`
 * is the owner). A value without `:` is a usage error (exit 2).
 */
export async function memoryOwnerOfOption(db: AliasStore, value: string | undefined, config: Awaited<ReturnType<typeof memoryConfig>>): Promise<MemoryOwner> {
  if (value === undefined || value.trim() === "" || value.trim() === "owner" || value.trim() === "owner:owner") return { ...OWNER_MEMORY };
  const at = value.indexOf(":");
  if (at <= 0 || at === value.length - 1) {
    throw new CliError("TL_ERR_USAGE", `--for must be <platform>:<userId>, e.g. telegram:123456789, or "owner" (got ${JSON.stringify(printable(value))}).`);
  }
  const speaker: TurnSpeaker = { platform: value.slice(0, at), userId: value.slice(at + 1), aliases: [], chatType: "dm", chatId: null };
  return (await memoryOwnerFor(db, speaker, memoryOwnerIdentities(config))) ?? { ...OWNER_MEMORY };
}

/** The database target: `--db`/THREADLINE_DB, else the config file's `database`, else the default file. */
export function memoryDatabaseTarget(options: MemoryTargetOptions, config: Awaited<ReturnType<typeof memoryConfig>>): string | undefined {
  if (options.db !== undefined && options.db.trim() !== "") return options.db;
  return config.database ?? undefined;
}

/** Entries as the editor and `show` print them: blocks separated by a line holding only `§`. */
export function entriesText(entries: readonly string[]): string {
  return entries.join("\n§\n");
}

/** Text from the editor as entries: split at lines holding only `§`, each block trimmed, blank blocks dropped. */
export function parseEntriesText(text: string): string[] {
  return text
    .replace(/\r\n/gu, "\n")
    .split(/^[ \t]*§[ \t]*$/mu)
    .map((block) => block.trim())
    .filter((block) => block !== "");
}

/** Text for the terminal: line by line, control characters (and bidi overrides) as `?`, tabs as spaces. */
export function printableLines(text: string): string {
  return text
    .split("\n")
    .map((line) => printable(line.replace(/\t/gu, "    ")))
    .join("\n");
}

/** The `--json` form of one memory (`show`, `edit`): its entries, size, limit and version; empty when there is none. */
export function memoryJson(owner: MemoryOwner, kind: MemoryKind, record: MemoryRecord | null) {
  return {
    owner,
    kind,
    entries: record?.entries ?? [],
    chars: record?.chars ?? 0,
    limit: limitOf(kind),
    updatedAt: record?.updatedAt ?? null,
    version: record?.version ?? null,
  };
}
