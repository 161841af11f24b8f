/**
 * The service's environment file (`$THREADLINE_HOME/service.env`, mode 0600): which variables
 * of the installing environment go into it, how a value is written so that both readers take
 * it back unchanged (systemd's `EnvironmentFile=` and Node's `--env-file`, which launchd's
 * agent uses), and how a new install merges into a file that exists. Pure.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";

/**
 * The variables `threadline serve` reads that are not `THREADLINE_*` or `OPENAI_*`: the chat
 * platforms' tokens (each adapter's `*_ENV` name; test/service/service-env-file.test.ts checks
 * this list against src/adapters/) and libpq's connection variables (a `postgres://` database).
 */
export const SERVICE_ENV_NAMES: readonly string[] = [
  "TELEGRAM_BOT_TOKEN",
  "DISCORD_BOT_TOKEN",
  "SLACK_BOT_TOKEN",
  "SLACK_SIGNING_SECRET",
  "SLACK_APP_TOKEN",
  "WHATSAPP_ACCESS_TOKEN",
  "WHATSAPP_APP_SECRET",
  "WHATSAPP_VERIFY_TOKEN",
  "MATRIX_ACCESS_TOKEN",
  "PGHOST",
  "PGPORT",
  "PGUSER",
  "PGPASSWORD",
  "PGDATABASE",
  "PGSSLMODE",
];

/** Variables the service definition sets itself (THREADLINE_HOME) or passes as an argument (THREADLINE_CONFIG: `serve --config`). */
const SET_BY_DEFINITION = new Set(["THREADLINE_HOME", "THREADLINE_CONFIG"]);

/** Whether `serve` reads `name`, so the service needs it: `THREADLINE_*` (but HOME and CONFIG), `OPENAI_*`, and {@link SERVICE_ENV_NAMES}. */
export function isServiceVariable(name: string): boolean {
  if (SET_BY_DEFINITION.has(name)) return false;
  return name.startsWith("THREADLINE_") || name.startsWith("OPENAI_") || SERVICE_ENV_NAMES.includes(name);
}

/** The variables of `env` the service needs ({@link isServiceVariable}) that are set and not blank, sorted by name. */
export function serviceVariables(env: NodeJS.ProcessEnv): Array<[string, string]> {
  return Object.entries(env)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1].trim() !== "" && isServiceVariable(entry[0]))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Characters a value may hold unquoted in both readers. */
const PLAIN_VALUE = /^[\w@%+=:,./~-]*$/u;

/**
 * `NAME=value` as both readers take it back: plain values as they are, others in single quotes
 * (literal in both). A value holding a single quote, a line break or another control character
 * has no spelling both read the same way.
 *
 * @throws {InvalidInputError} naming the variable (never its value).
 */
export function envFileLine(name: string, value: string): string {
  if (PLAIN_VALUE.test(value)) return `${name}=${value}`;
  if (value.includes("'") || /[\u0000-\u001f\u007f]/u.test(value)) {
    throw new InvalidInputError(
      `${name}: its value holds a single quote, line break or control character, which service.env cannot carry for both systemd and Node; ` +
        "put that setting in the config file instead, or set the variable to another value.",
      { field: name },
    );
  }
  return `${name}='${value}'`;
}

const HEADER = [
  "# The environment of the Threadline service (threadline service install): secrets live here, mode 0600.",
  "# Read by systemd (EnvironmentFile=) or by Node (--env-file, launchd). Lines you add are kept on the next install.",
];

/** The name a line assigns (`NAME=…`, optionally after `export `), or `null` for comments and blank lines. */
function assignedName(line: string): string | null {
  const match = /^\s*(?:export\s+)?([A-Za-z_]\w*)\s*=/u.exec(line);
  return match === null ? null : match[1]!;
}

/** What {@link mergeEnvFile} did. */
export interface EnvFileMerge {
  text: string;
  /** Names written from the installing environment. */
  written: string[];
  /** Names of lines that were there already and were kept as they were. */
  kept: string[];
}

/**
 * Merges `variables` into an existing file's text (`null`: no file yet): each variable replaces
 * the first line that assigns it (later duplicates go), new ones are appended, and every other
 * line (comments, variables the installer does not set) is kept in place.
 */
export function mergeEnvFile(existing: string | null, variables: ReadonlyArray<readonly [string, string]>): EnvFileMerge {
  const wanted = new Map(variables.map(([name, value]) => [name, envFileLine(name, value)]));
  const lines = existing === null || existing === "" ? [...HEADER] : existing.replace(/\n$/u, "").split("\n");
  const out: string[] = [];
  const done = new Set<string>();
  const kept: string[] = [];
  for (const line of lines) {
    const name = assignedName(line);
    if (name !== null && wanted.has(name)) {
      if (!done.has(name)) out.push(wanted.get(name)!);
      done.add(name);
      continue;
    }
    if (name !== null && !kept.includes(name)) kept.push(name);
    out.push(line);
  }
  for (const [name, line] of wanted) if (!done.has(name)) out.push(line);
  return { text: `${out.join("\n")}\n`, written: [...wanted.keys()], kept };
}

/**
 * The variables an env file assigns, read as {@link envFileLine} writes them (bare or
 * single-quoted values; a double-quoted value loses its quotes), later lines winning. Used to
 * see what a service will get from lines an earlier install or the user wrote.
 */
export function readEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const name = assignedName(line);
    if (name === null) continue;
    const raw = line.slice(line.indexOf("=") + 1).trim();
    const quoted = /^(['"])(.*)\1$/su.exec(raw);
    out[name] = quoted === null ? raw : quoted[2]!;
  }
  return out;
}
