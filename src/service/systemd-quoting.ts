/**
 * How a value is written into a systemd unit so systemd reads back exactly that value
 * (systemd.syntax(7), systemd.service(5) "Command lines"): `%` specifiers are doubled
 * everywhere, `$` is doubled in a command line's arguments (systemd expands `$VAR` there, not in
 * the executable's path), and a word with
 * anything but plain path characters is double-quoted with `\` and `"` escaped.
 *
 * @module
 */

/** Characters a word may hold without quotes (no spaces, quotes, backslashes, `;`, `$` or `%`). */
const PLAIN_WORD = /^[\w@+=:,./-]+$/u;

/** Doubles `%` so systemd's specifier expansion gives the character back. */
export function escapeSpecifiers(text: string): string {
  return text.replaceAll("%", "%%");
}

/** One word of a space-separated list (`ReadWritePaths=`): specifiers doubled, quoted unless plain. */
export function systemdWord(word: string): string {
  const escaped = escapeSpecifiers(word);
  if (PLAIN_WORD.test(word)) return escaped;
  return `"${escaped.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** One argument of `ExecStart=`: as {@link systemdWord}, with `$` doubled (no variable expansion). */
export function execArgument(argument: string): string {
  return systemdWord(argument).replaceAll("$", () => "$$");
}

/**
 * A whole `ExecStart=` command line from its argv. The executable (the first word) is not
 * `$`-expanded by systemd, so only the arguments after it get `$` doubled.
 */
export function execCommandLine(argv: readonly string[]): string {
  return argv.map((word, i) => (i === 0 ? systemdWord(word) : execArgument(word))).join(" ");
}

/** An `Environment=` assignment: `"NAME=value"` quoted as one word, specifiers doubled. */
export function environmentAssignment(name: string, value: string): string {
  return systemdWord(`${name}=${value}`);
}
