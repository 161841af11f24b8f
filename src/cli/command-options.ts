/**
 * Options that several `threadline` commands share, built one way: `--db` (bound to
 * THREADLINE_DB), `--json`, and a repeatable `--source`.
 *
 * @module
 */
import { Option } from "commander";
import type { withDatabase } from "./cli-context.js";

/**
 * `--db <target>`: a SQLite file or a `postgres://` URL; falls back to `$THREADLINE_DB`, then
 * to the default file (`$THREADLINE_HOME/state.db`). A blank value (an empty THREADLINE_DB)
 * counts as not given ({@link withDatabase} ignores it).
 *
 * @example
 * new Command("list").addOption(dbOption()).action(async (options: { db?: string }) => { … });
 */
export function dbOption(): Option {
  return new Option("--db <target>", "database: a SQLite file or a postgres:// URL (default: $THREADLINE_HOME/state.db)")
    .env("THREADLINE_DB");
}

/** `--json`: machine-readable output on stdout (errors still go to stderr). */
export function jsonOption(): Option {
  return new Option("--json", "print JSON instead of text");
}

/**
 * `--source <source>`: may be repeated or comma-separated (`--source cli,telegram`);
 * the parsed value is the list of sources.
 */
export function sourceOption(description = "only sessions from this source (repeatable, or comma-separated)"): Option {
  return new Option("--source <source>", description).argParser((value: string, previous: string[] | undefined) => [
    ...(previous ?? []),
    ...value
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
  ]);
}
