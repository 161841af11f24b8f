/**
 * Reads a unit file and an environment file the way systemd does, written from the manual
 * pages (systemd.syntax(7), systemd.service(5) "Command lines", systemd.exec(5)
 * "EnvironmentFile=") and independently of the generator in src/service/, so the tests see
 * what systemd would run:
 *
 * - `%%` is a literal `%` (any other specifier is refused: the generator writes none), applied
 *   to the raw value first;
 * - a value is split into words at unquoted whitespace; double and single quotes group, and
 *   backslash escapes (`\\`, `\"`, `\'`, `\n`, `\t`, `\xNN`, `\ `) are resolved;
 * - in a command line, each argument after the executable then gets `$$` → `$` (a `$NAME` or
 *   `${NAME}` would be expanded: refused here, the generator must never leave one);
 * - an environment file has `NAME=value` lines (`#`/`;` comments), values bare, `'…'` literal,
 *   or `"…"` with `\"`, `\\`, `\$`, `` \` `` escapes.
 *
 * @module
 */

/** A unit's sections: section → [key, raw value] in file order. */
export type UnitFile = Map<string, Array<[string, string]>>;

/** Parses a unit file's sections and assignments. */
export function parseUnitFile(text: string): UnitFile {
  const sections: UnitFile = new Map();
  let current: Array<[string, string]> | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    if (line.startsWith("[") && line.endsWith("]")) {
      current = [];
      sections.set(line.slice(1, -1), current);
      continue;
    }
    const at = line.indexOf("=");
    if (at < 0 || current === null) throw new Error(`not a unit assignment: ${raw}`);
    current.push([line.slice(0, at).trim(), line.slice(at + 1).trim()]);
  }
  return sections;
}

/** The raw values of `key` in `section`. */
export function unitValues(unit: UnitFile, section: string, key: string): string[] {
  return (unit.get(section) ?? []).filter(([k]) => k === key).map(([, v]) => v);
}

/** Resolves specifiers: `%%` → `%`; any other is refused. */
export function resolveSpecifiers(value: string): string {
  return value.replace(/%(.?)/gu, (_, next: string) => {
    if (next === "%") return "%";
    throw new Error(`unexpected specifier %${next} in ${value}`);
  });
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'", " ": " ", s: " " };

/** Splits a value into words (quotes group, backslash escapes resolved), after specifiers. */
export function splitWords(value: string): string[] {
  const text = resolveSpecifiers(value);
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      const next = text[i + 1];
      if (next === undefined) throw new Error(`trailing backslash in ${value}`);
      if (next === "x") {
        word = (word ?? "") + String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 4), 16));
        i += 3;
        continue;
      }
      const escaped = ESCAPES[next];
      if (escaped === undefined) throw new Error(`unknown escape \\${next} in ${value}`);
      word = (word ?? "") + escaped;
      i++;
      continue;
    }
    if (quote !== null) {
      if (c === quote) quote = null;
      else word = (word ?? "") + c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      word ??= "";
      continue;
    }
    if (/\s/u.test(c)) {
      if (word !== null) words.push(word);
      word = null;
      continue;
    }
    word = (word ?? "") + c;
  }
  if (quote !== null) throw new Error(`unterminated quote in ${value}`);
  if (word !== null) words.push(word);
  return words;
}

/** `$$` → `$` in a command-line argument; a `$NAME`/`${NAME}` (which systemd would expand) is refused. */
function unescapeDollars(word: string): string {
  return word.replace(/\$(\$|\{?[A-Za-z_]?)/gu, (match, next: string) => {
    if (next === "$") return "$";
    throw new Error(`${word} holds ${match}, which systemd would expand as a variable`);
  });
}

/** The argv systemd runs for an `ExecStart=` value (no `-`, `@`, `+`, `!` prefixes are expected). */
export function execArgv(value: string): string[] {
  const [path, ...args] = splitWords(value);
  if (path === undefined || !path.startsWith("/")) throw new Error(`ExecStart must start with an absolute path: ${value}`);
  return [path, ...args.map(unescapeDollars)];
}

/** The variables of `Environment=` values. */
export function environmentOf(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values) {
    for (const word of splitWords(value)) {
      const at = word.indexOf("=");
      if (at <= 0) throw new Error(`not an assignment: ${word}`);
      out[word.slice(0, at)] = word.slice(at + 1);
    }
  }
  return out;
}

/** Parses an environment file as `EnvironmentFile=` reads it. */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const at = line.indexOf("=");
    if (at <= 0) continue;
    const name = line.slice(0, at).trim();
    const rest = line.slice(at + 1).trimStart();
    let value: string;
    if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      if (end < 0) throw new Error(`unterminated ' in ${raw}`);
      value = rest.slice(1, end);
    } else if (rest.startsWith('"')) {
      value = "";
      let i = 1;
      for (; i < rest.length && rest[i] !== '"'; i++) {
        if (rest[i] === "\\" && '"\\`$'.includes(rest[i + 1] ?? "")) i++;
        value += rest[i];
      }
      if (i >= rest.length) throw new Error(`unterminated " in ${raw}`);
    } else {
      value = rest.trimEnd();
      if (value.includes("\\")) throw new Error(`unquoted backslash in ${raw}`);
    }
    out[name] = value;
  }
  return out;
}
