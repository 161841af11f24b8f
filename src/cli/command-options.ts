/**
 * Options that several `threadline` commands share, built one way: `--db` (bound to
 * THREADLINE_DB), `--json`, a repeatable `--source` and `--port`. Only commander and the store's error classes are loaded: command
 * definitions use these (the config file is read by serve-config-file.ts, in the actions).
 *
 * @module
 */
import { Option } from "commander";
import { InvalidInputError } from "../store/errors.js";
import type { withDatabase } from "./cli-context.js";
import { bindEnv } from "./option-env.js";

/**
 * `--db <target>`: a SQLite file or a `postgres://` URL; falls back to `$THREADLINE_DB`, then
 * to the default file (`$THREADLINE_HOME/state.db`). A blank value (an empty THREADLINE_DB)
 * counts as not given ({@link withDatabase} ignores it).
 *
 * @example
 * new Command("list").addOption(dbOption()).action(async (options: { db?: string }) => { … });
 */
export function dbOption(): Option {
  return bindEnv(new Option("--db <target>", "database: a SQLite file or a postgres:// URL (default: $THREADLINE_HOME/state.db)"), "THREADLINE_DB");
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

/**
 * `--port <port>`: a port number from 0 to 65535 (`what` names the setting it overrides); any
 * other value is an {@link InvalidInputError} (a usage error, exit 2).
 */
export function portOption(what: string): Option {
  return new Option("--port <port>", `HTTP port (overrides ${what})`).argParser((value: string) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isInteger(n) || n < 0 || n > 65535) {
      throw new InvalidInputError(`--port must be a port number from 0 to 65535 (got "${value}").`, { field: "--port" });
    }
    return n;
  });
}
