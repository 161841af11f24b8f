/**
 * Usage errors of the `threadline` command line in the one style every command uses,
 * `threadline: <what was wrong>. <what to do>`: commander's own messages (unknown command or
 * option, missing or extra argument, missing option value) are rewritten through
 * `configureOutput`, with commander's closest-match suggestion turned into "Did you mean …?".
 *
 * @module
 */
import type { Command } from "commander";
import type { CliIo } from "./cli-io.js";

/** `threadline sessions show`: the command as typed, from the program down. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** The names after the program's (`sessions show`), empty for the program itself. */
function subcommandPath(command: Command): string {
  return commandPath(command).split(" ").slice(1).join(" ");
}

/** commander's `\n(Did you mean x?)` / `\n(Did you mean one of x, y?)` tail, as its candidates. */
function splitSuggestion(message: string): { head: string; candidates: string[] } {
  const match = /\n\(Did you mean (?:one of )?(.+)\?\)$/su.exec(message);
  if (match === null) return { head: message, candidates: [] };
  return { head: message.slice(0, match.index), candidates: match[1]!.split(", ") };
}

function didYouMean(candidates: string[]): string {
  const quoted = candidates.map((c) => `"${c}"`);
  const list = quoted.length <= 1 ? quoted.join("") : `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
  return `Did you mean ${list}?`;
}

/**
 * When an option that takes the rest of the line (a variadic option such as `--session-id
 * <session...>`) was given, a missing argument was most likely typed after it and taken as
 * part of its value: says so (`--session-id takes the rest of the line ("my project
 * out.jsonl"): put <file> before it. `). Empty otherwise.
 */
function restOfLineHint(command: Command, argument: string): string {
  const option = command.options.find((o) => o.variadic && command.getOptionValueSource(o.attributeName()) === "cli");
  if (option === undefined) return "";
  const value: unknown = command.getOptionValue(option.attributeName());
  const words = Array.isArray(value) ? value.map(String).join(" ") : String(value);
  return `${option.long ?? option.flags} takes the rest of the line ("${words}"): put <${argument}> before it. `;
}

/**
 * Rewrites one commander error message (`error: unknown option '--x'` …) raised by `command`
 * into the threadline style; the result has no trailing newline.
 *
 * @example
 * formatUsageError(listCommand, "error: unknown option '--limt'\n(Did you mean --limit?)");
 * // 'threadline: unknown option "--limt" for "threadline sessions list". Did you mean "--limit"?'
 */
export function formatUsageError(command: Command, raw: string): string {
  const { head, candidates } = splitSuggestion(raw.trimEnd());
  const message = head.replace(/^error: /u, "");
  const path = commandPath(command);
  const usage = `Usage: ${command.createHelp().commandUsage(command)}`;
  let m: RegExpExecArray | null;

  if ((m = /^unknown command '(.*)'$/su.exec(message)) !== null) {
    const parent = subcommandPath(command);
    const typed = parent === "" ? m[1]! : `${parent} ${m[1]!}`;
    const advice = candidates.length > 0 ? didYouMean(candidates.map((c) => `${path} ${c}`)) : `Run "${path} --help" to see the commands.`;
    return `threadline: unknown command "${typed}". ${advice}`;
  }
  if ((m = /^unknown option '(.*)'$/su.exec(message)) !== null) {
    const where = command.parent === null ? "" : ` for "${path}"`;
    const advice = candidates.length > 0 ? didYouMean(candidates) : `Run "${path} --help" to see ${command.parent === null ? "the" : "its"} options.`;
    return `threadline: unknown option "${m[1]!}"${where}. ${advice}`;
  }
  if ((m = /^missing required argument '(.*)'$/su.exec(message)) !== null) {
    return `threadline: missing argument <${m[1]!}> for "${path}". ${restOfLineHint(command, m[1]!)}${usage}`;
  }
  if ((m = /^option '(.*)' argument missing$/su.exec(message)) !== null) {
    return `threadline: option "${m[1]!}" needs a value. Run "${path} --help" to see its options.`;
  }
  if ((m = /^too many arguments(?: for '.*')?\. Expected (\d+) arguments? but got (\d+)\.$/su.exec(message)) !== null) {
    if (m[1] === "0") return `threadline: "${path}" takes no arguments (got ${m[2]!}). ${usage}`;
    return `threadline: too many arguments for "${path}" (expected ${m[1]!}, got ${m[2]!}). Quote a value that contains spaces. ${usage}`;
  }
  // Anything else commander reports (conflicting or missing mandatory options …): its words, our frame.
  const text = message.replace(/'([^']*)'/gu, '"$1"').replace(/\.?$/u, ".");
  return `threadline: ${text} Run "${path} --help" for usage.`;
}

/**
 * Whether commander may keep colour in what it writes to `stream` (its own rule, read from the
 * io instead of the process): NO_COLOR or FORCE_COLOR=0/false say no, FORCE_COLOR or
 * CLICOLOR_FORCE say yes, else a terminal that has colours.
 */
function commanderHasColors(io: CliIo, stream: CliIo["stdout"] | CliIo["stderr"]): boolean {
  const env = io.env;
  if (env["NO_COLOR"] || env["FORCE_COLOR"] === "0" || env["FORCE_COLOR"] === "false") return false;
  if (env["FORCE_COLOR"] || env["CLICOLOR_FORCE"] !== undefined) return true;
  return stream.isTTY === true && stream.hasColors?.(16, env) === true;
}

/**
 * Applies the command line's conventions to `program` and every command under it (call it
 * once every command is added): parse failures throw a `CommanderError` instead of exiting
 * (`exitOverride`), closest-match suggestions are on, help goes to `io.stdout` (as wide as
 * the terminal it is on), and errors are written to `io.stderr` in the threadline style
 * ({@link formatUsageError}). Commander reads nothing from `process` (streams, environment).
 */
export function applyUsageErrorStyle(program: Command, io: CliIo): void {
  const visit = (command: Command): void => {
    command.exitOverride();
    command.showSuggestionAfterError(true);
    command.configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Commander's own rule (the terminal's width), with its fallback of 80 columns.
      getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) ?? 80,
      getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) ?? 80,
      getOutHasColors: () => commanderHasColors(io, io.stdout),
      getErrHasColors: () => commanderHasColors(io, io.stderr),
      outputError: (text, write) => write(`${formatUsageError(command, text)}\n`),
    });
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
}
