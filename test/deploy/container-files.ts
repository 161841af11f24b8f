/**
 * Readers for the container files, for the tests that check them without a container engine:
 * the `Dockerfile` (stages and their instructions), `.dockerignore` (which paths the build
 * context lets in), Compose's `${VAR:-default}` interpolation, and the `docker` command lines of
 * the docs (split as sh splits them).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The repository's root (with a trailing slash). */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A file of the repository, as text. */
export function repoFile(path: string): string {
  return readFileSync(`${ROOT}${path}`, "utf8");
}

/** One instruction of a Dockerfile: its keyword (upper case), `--flag=value` options, and the rest. */
export interface DockerInstruction {
  keyword: string;
  flags: Record<string, string>;
  /** The arguments after the flags, as written (continuations joined with a space). */
  args: string;
  /** The line the instruction starts on (1-based). */
  line: number;
}

/** A build stage: its `FROM` image, its name (`AS …`), and its instructions after `FROM`. */
export interface DockerStage {
  image: string;
  name: string | null;
  instructions: DockerInstruction[];
}

/** Splits leading `--name=value` / `--name` options off an instruction's arguments. */
function splitFlags(rest: string): { flags: Record<string, string>; args: string } {
  const flags: Record<string, string> = {};
  let args = rest;
  for (;;) {
    const match = /^--([\w-]+)(?:=(\S*))?\s*/u.exec(args);
    if (match === null) break;
    flags[match[1]!] = match[2] ?? "";
    args = args.slice(match[0].length);
  }
  return { flags, args };
}

/**
 * Parses a Dockerfile: comment and blank lines dropped (also inside a continuation, as Docker
 * does), lines ending in `\` joined to the next, then one instruction per line, grouped by
 * `FROM`. Parser directives and instructions before the first `FROM` (`ARG`) are ignored.
 */
export function parseDockerfile(text: string): DockerStage[] {
  const stages: DockerStage[] = [];
  const logical: Array<{ text: string; line: number }> = [];
  let current: { text: string; line: number } | null = null;
  for (const [index, raw] of text.split("\n").entries()) {
    const trimmed = raw.trim();
    if (trimmed.startsWith("#") || trimmed === "") continue;
    current ??= { text: "", line: index + 1 };
    if (trimmed.endsWith("\\")) {
      current.text += `${trimmed.slice(0, -1).trim()} `;
      continue;
    }
    current.text += trimmed;
    logical.push(current);
    current = null;
  }
  if (current !== null) logical.push(current);
  for (const { text: instruction, line } of logical) {
    const match = /^(\w+)\s*(.*)$/su.exec(instruction.trim());
    if (match === null) throw new Error(`Dockerfile line ${line}: not an instruction: ${instruction}`);
    const keyword = match[1]!.toUpperCase();
    const { flags, args } = splitFlags(match[2]!);
    if (keyword === "FROM") {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/iu.exec(args.trim());
      if (from === null) throw new Error(`Dockerfile line ${line}: FROM ${args}`);
      stages.push({ image: from[1]!, name: from[2] ?? null, instructions: [] });
      continue;
    }
    stages.at(-1)?.instructions.push({ keyword, flags, args: args.trim(), line });
  }
  return stages;
}

/** The words of an instruction in exec form (`["node", "-e", "…"]`); throws on the shell form. */
export function execForm(instruction: DockerInstruction | { args: string }): string[] {
  const value: unknown = JSON.parse(instruction.args);
  if (!Array.isArray(value) || !value.every((w) => typeof w === "string")) throw new Error(`not an exec form: ${instruction.args}`);
  return value;
}

/** The instructions of `stage` with `keyword`. */
export function instructions(stage: DockerStage, keyword: string): DockerInstruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

/** A `COPY`'s sources and destination (the shell form: words split on spaces). */
export function copyParts(instruction: DockerInstruction): { from: string | null; sources: string[]; dest: string } {
  const words = instruction.args.startsWith("[") ? execForm(instruction) : instruction.args.split(/\s+/u);
  return { from: instruction.flags["from"] ?? null, sources: words.slice(0, -1), dest: words.at(-1)! };
}

/** A `.dockerignore` pattern as a regular expression over the whole path (Go's filepath.Match plus `**`). */
function patternRegex(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      // `**/` matches any number of folders (none included); a final `**` anything.
      i++;
      if (pattern[i + 1] === "/") {
        i++;
        source += "(?:.*/)?";
      } else source += ".*";
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/gu, "\\$&");
  }
  return new RegExp(`^${source}$`, "u");
}

/**
 * Whether `.dockerignore` (its text) leaves `path` (relative to the context, `/`-separated) out
 * of the build context, as Docker decides: patterns are cleaned paths (`src/` is `src`), each
 * matches a path or any of its parent folders, `!` lets a path back in, the last match wins.
 */
export function dockerignoreExcludes(ignoreText: string, path: string): boolean {
  const rules = ignoreText
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const negated = line.startsWith("!");
      const pattern = (negated ? line.slice(1) : line).trim().replace(/^\/+/u, "").replace(/\/+$/u, "");
      return { negated, regex: patternRegex(pattern) };
    });
  const parts = path.replace(/\/+$/u, "").split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let excluded = false;
  for (const rule of rules) {
    if (prefixes.some((prefix) => rule.regex.test(prefix))) excluded = !rule.negated;
  }
  return excluded;
}

/**
 * Compose's interpolation of one value: `${VAR}`, `${VAR:-default}` (default when unset or
 * empty), `${VAR:?message}` (an error when unset or empty), `$$` for `$`.
 */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\$|\$\{(\w+)(?:(:?[-?])([^}]*))?\}/gu, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (whole === "$$") return "$";
    const set = env[name!];
    const missing = op?.startsWith(":") ? set === undefined || set === "" : set === undefined;
    if (op?.endsWith("-")) return missing ? arg! : set!;
    if (op?.endsWith("?") && missing) throw new Error(`${name}: ${arg}`);
    return set ?? "";
  });
}

/**
 * The commands of the sh code blocks in `markdown`, each split into words as sh would (quotes
 * removed, `\` + newline joins lines, `#` comments and blank lines dropped).
 */
export function shellCommands(markdown: string): string[][] {
  const commands: string[][] = [];
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```/gmu)) {
    const text = block[1]!.replace(/\\\n/gu, " ");
    for (const line of text.split("\n")) {
      const words = shellWords(line);
      if (words.length > 0) commands.push(words);
    }
  }
  return commands;
}

/** A line split into words as sh splits it (single and double quotes, a `#` comment); no expansion. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unterminated quote: ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (/\s/u.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "#" && word === null) break;
    else word = (word ?? "") + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/** A Markdown section: from the heading line `heading` to the next heading of the same or a higher level. */
export function markdownSection(markdown: string, heading: string): string {
  const start = markdown.split("\n").indexOf(heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/u.exec(heading)![0].length;
  const lines = markdown.split("\n").slice(start + 1);
  const end = lines.findIndex((line) => {
    const m = /^(#+) /u.exec(line);
    return m !== null && m[1]!.length <= level;
  });
  return lines.slice(0, end < 0 ? undefined : end).join("\n");
}
