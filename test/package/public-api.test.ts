/**
 * The public API is what docs/api.md says it is. For every entry point of package.json
 * `exports`, the built module (dist/, `npm run build` first; `npm test` does) and its type
 * declarations are compared with the entry point's list under "Exports by entry point" in
 * docs/api.md: a name exported but not listed, or listed but not exported, fails the test by
 * name. The list's links must lead somewhere, every export must carry TSDoc, and every type a
 * public signature uses must itself be exported (else users cannot name it).
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const API_MD = "docs/api.md";

/** package.json `exports` as [specifier, built module, built declarations]. */
function entryPoints(): Array<{ specifier: string; js: string; dts: string }> {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as {
    name: string;
    exports: Record<string, string | { types: string; import: string }>;
  };
  return Object.entries(pkg.exports)
    .filter((entry): entry is [string, { types: string; import: string }] => typeof entry[1] === "object")
    .map(([subpath, target]) => ({
      specifier: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
      js: `${ROOT}${target.import.slice(2)}`,
      dts: `${ROOT}${target.types.slice(2)}`,
    }));
}

/** GitHub's heading anchors of a markdown text (headings in code fences excluded). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^```/u.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/u.exec(line);
    if (heading === null) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /gu, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

interface ListedExport {
  name: string;
  link: string;
  kind: string;
}

/** The lists of docs/api.md "Exports by entry point", by entry point specifier. */
function documentedExports(markdown: string): Map<string, ListedExport[]> {
  const start = markdown.indexOf("\n## Exports by entry point\n");
  if (start < 0) throw new Error(`${API_MD} has no "## Exports by entry point" section`);
  const end = markdown.indexOf("\n## ", start + 1);
  const lists = new Map<string, ListedExport[]>();
  let current: ListedExport[] | null = null;
  for (const line of markdown.slice(start, end < 0 ? undefined : end).split("\n")) {
    const heading = /^### `([^`]+)`$/u.exec(line);
    if (heading !== null) {
      current = [];
      lists.set(heading[1]!, current);
      continue;
    }
    const item = /^- \[`([^`]+)`\]\(([^)\s]+)\) — ([a-z]+): \S/u.exec(line);
    if (item !== null) {
      if (current === null) throw new Error(`${API_MD}: "${line}" comes before any entry point heading`);
      current.push({ name: item[1]!, link: item[2]!, kind: item[3]! });
    } else if (line.startsWith("- ") && current !== null) {
      throw new Error(`${API_MD}: cannot read the export line "${line}" (expected "- [\`name\`](#anchor) — kind: what it is")`);
    }
  }
  return lists;
}

/** Every export of each entry point's declarations, with the symbol it stands for. */
function declaredExports(dtsFiles: string[]): { checker: ts.TypeChecker; byFile: Map<string, ts.Symbol[]> } {
  const program = ts.createProgram(dtsFiles, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const byFile = new Map<string, ts.Symbol[]>();
  for (const file of dtsFiles) {
    const source = program.getSourceFile(file);
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`${file} could not be read as a module: run npm run build`);
    byFile.set(file, checker.getExportsOfModule(moduleSymbol));
  }
  return { checker, byFile };
}

const resolveAlias = (checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

const RUNTIME_KINDS = new Set(["class", "function", "const"]);
const TYPE_KINDS = new Set(["interface", "type"]);

describe("the public API", () => {
  const entries = entryPoints();
  const markdown = readFileSync(`${ROOT}${API_MD}`, "utf8");
  const listed = documentedExports(markdown);
  const missingBuild = entries.filter((e) => !existsSync(e.js) || !existsSync(e.dts)).map((e) => e.specifier);
  if (missingBuild.length > 0) throw new Error(`not built (${missingBuild.join(", ")}): run npm run build first`);
  const { checker, byFile } = declaredExports(entries.map((e) => e.dts));

  it("docs/api.md has one list per entry point of package.json, and no other", () => {
    expect([...listed.keys()].sort()).toEqual(entries.map((e) => e.specifier).sort());
  });

  for (const entry of entries) {
    it(`${entry.specifier}: exports exactly the names docs/api.md lists`, async () => {
      const runtime = Object.keys((await import(entry.js)) as Record<string, unknown>);
      const declared = byFile.get(entry.dts)!.map((s) => s.name);
      const documented = listed.get(entry.specifier) ?? [];
      const names = new Set(documented.map((d) => d.name));
      const problems: string[] = [];
      for (const name of new Set([...declared, ...runtime])) {
        if (!names.has(name)) problems.push(`exported but not listed in ${API_MD}: ${name}`);
      }
      for (const name of names) {
        if (!declared.includes(name)) problems.push(`listed in ${API_MD} but not exported: ${name}`);
      }
      for (const name of runtime) {
        if (!declared.includes(name)) problems.push(`exported at run time but missing from ${entry.dts.slice(ROOT.length)}: ${name}`);
      }
      for (const d of documented) {
        if (runtime.includes(d.name) && !RUNTIME_KINDS.has(d.kind)) problems.push(`${d.name} is a value at run time, but ${API_MD} calls it a ${d.kind}`);
        if (!runtime.includes(d.name) && !TYPE_KINDS.has(d.kind) && declared.includes(d.name)) {
          problems.push(`${d.name} is a type only, but ${API_MD} calls it a ${d.kind}`);
        }
      }
      const seen = new Set<string>();
      for (const d of documented) {
        if (seen.has(d.name)) problems.push(`listed twice in ${API_MD}: ${d.name}`);
        seen.add(d.name);
      }
      expect(problems, `${entry.specifier}: update the entry point's index.ts or its list in ${API_MD}`).toEqual([]);
    });
  }

  it("every listed export links to a heading that exists", () => {
    const anchors = new Map<string, Set<string>>([[API_MD, anchorsOf(markdown)]]);
    const broken: string[] = [];
    for (const [specifier, items] of listed) {
      for (const item of items) {
        const [file, anchor] = item.link.startsWith("#") ? [API_MD, item.link.slice(1)] : [`docs/${item.link.split("#")[0]}`, item.link.split("#")[1]];
        if (!anchors.has(file)) anchors.set(file, existsSync(`${ROOT}${file}`) ? anchorsOf(readFileSync(`${ROOT}${file}`, "utf8")) : new Set());
        if (anchor === undefined || !anchors.get(file)!.has(anchor)) broken.push(`${specifier} ${item.name}: ${item.link}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every export carries TSDoc", () => {
    const undocumented: string[] = [];
    for (const entry of entries) {
      for (const symbol of byFile.get(entry.dts)!) {
        const target = resolveAlias(checker, symbol);
        if (ts.displayPartsToString(target.getDocumentationComment(checker)).trim() === "") undocumented.push(`${entry.specifier}: ${symbol.name}`);
      }
    }
    expect(undocumented).toEqual([]);
  });

  it("every type a public declaration uses is exported too (users can name it)", () => {
    const distDir = `${ROOT}dist/`;
    const exported = new Set<ts.Symbol>();
    for (const symbols of byFile.values()) for (const symbol of symbols) exported.add(resolveAlias(checker, symbol));
    const forgotten = new Map<string, Set<string>>();
    const visited = new Set<ts.Symbol>();
    const walk = (node: ts.Node, from: string): void => {
      if ((ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node)) && ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Private) return;
      let name: ts.EntityName | ts.Expression | undefined;
      if (ts.isTypeReferenceNode(node)) name = node.typeName;
      else if (ts.isTypeQueryNode(node)) name = node.exprName;
      else if (ts.isExpressionWithTypeArguments(node)) name = node.expression;
      const left = name !== undefined && ts.isQualifiedName(name) ? name.left : name;
      const found = left === undefined ? undefined : checker.getSymbolAtLocation(left);
      if (found !== undefined) {
        const symbol = resolveAlias(checker, found);
        const file = symbol.declarations?.[0]?.getSourceFile().fileName ?? "";
        if (file.startsWith(distDir) && !exported.has(symbol) && !(symbol.flags & ts.SymbolFlags.TypeParameter)) {
          const key = `${symbol.name} (${file.slice(distDir.length)})`;
          forgotten.set(key, (forgotten.get(key) ?? new Set()).add(from));
          if (!visited.has(symbol)) {
            visited.add(symbol);
            for (const declaration of symbol.declarations ?? []) walk(declaration, `${symbol.name}, used by ${from}`);
          }
        }
      }
      ts.forEachChild(node, (child) => walk(child, from));
    };
    for (const symbol of exported) for (const declaration of symbol.declarations ?? []) walk(declaration, symbol.name);
    expect([...forgotten].map(([type, users]) => `${type} <- ${[...users].join("; ")}`)).toEqual([]);
  });
});
