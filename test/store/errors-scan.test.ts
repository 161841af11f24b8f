/**
 * Keeps the error family closed: no error class in src/ extends `Error` except
 * `ThreadlineError`, and no plain `Error` (or `TypeError`/`RangeError`) is created there, so
 * every error Threadline throws has a stable code. The checks read the source files, so a
 * new file is covered without being listed.
 *
 * Not scanned: src/web/ (the browser page may import nothing from the rest of src/, see
 * scripts/check-imports.mjs; its `ApiError` mirrors the API's error body, `code` included).
 * One file may create plain errors: src/adapters/chat/secret-redaction.ts copies a foreign
 * (SDK) error without its secrets; the copy describes what another library threw, and is
 * only logged or kept as the `cause` of the adapter's `PlatformError`.
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");
const WEB = join(SRC, "web") + sep;
const PLAIN_ERROR_COPIES = new Set(["src/adapters/chat/secret-redaction.ts"]);

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (path + sep !== WEB) yield* sourceFiles(path);
    } else if (/\.(ts|tsx|mts)$/u.test(name) && !name.endsWith(".d.ts")) yield path;
  }
}

/** The text with comments removed (so TSDoc examples do not count), line numbers kept. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//gu, (c) => c.replace(/[^\n]/gu, " ")).replace(/(^|[^:"'`])\/\/.*$/gmu, "$1");
}

function findings(pattern: RegExp, skip: (rel: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(ROOT, file).split(sep).join("/");
    if (skip(rel)) continue;
    code(readFileSync(file, "utf8"))
      .split("\n")
      .forEach((line, i) => {
        if (pattern.test(line)) out.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  return out;
}

it("scans a real tree (src/ has files, and the base class is found)", () => {
  expect([...sourceFiles(SRC)].length).toBeGreaterThan(100);
  expect(findings(/class ThreadlineError extends Error\b/u)).toEqual([expect.stringMatching(/^src\/store\/errors\.ts:/u)]);
});

it("no error class in src/ extends Error (or another built-in error) except ThreadlineError", () => {
  const offenders = findings(/\bextends\s+(?:Error|TypeError|RangeError|SyntaxError)\b/u).filter((f) => !/class ThreadlineError extends Error\b/u.test(f));
  expect(offenders, "extend ThreadlineError (or one of its subclasses) with a TL_ERR_* code instead").toEqual([]);
});

it("no plain Error, TypeError or RangeError is created in src/ (outside the one redaction helper)", () => {
  const offenders = findings(/(?:\bnew\s+|\bthrow\s+|\breject\(\s*)(?:Error|TypeError|RangeError)\s*\(/u, (rel) => PLAIN_ERROR_COPIES.has(rel));
  expect(offenders, "throw a ThreadlineError subclass with a TL_ERR_* code whose message says what was wrong and what to do").toEqual([]);
});

it("the one exception stays a copier of foreign errors", () => {
  const allowed = [...PLAIN_ERROR_COPIES].flatMap((rel) => findings(/\bnew\s+Error\s*\(/u, (r) => r !== rel));
  expect(allowed.length).toBeGreaterThan(0);
  for (const line of allowed) expect(line).toMatch(/new Error\(clean\(/u);
});
