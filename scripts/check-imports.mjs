#!/usr/bin/env node
// Checks the layout rules of the source tree (run by `npm test`):
// 1. every relative import ends in ".js";
// 2. src/store/errors.ts imports nothing from the project, and the contract (src/store/contract/, one
//    file per role, and src/store/contract.ts, which re-exports it) nothing but its own files and errors.ts;
// 3. only src/store/sqlite/ imports better-sqlite3 (only src/store/postgres/ imports pg),
//    and backends never import each other;
// 4. the core (src/store outside backend folders) never imports a backend statically;
// 5. outer folders (gateway, executions, cli, http-api, …) reach the core only through
//    src/store/index.ts (the core's door for this package; the public part of it is the
//    explicit list in src/index.ts), and the core never imports them; src/store/session-record.ts
//    (parseSessionRecord, which loads zod) is reached directly by the folders that parse records
//    (importers), so the door src/store/index.ts loads no zod;
// 6. src/web/ (the browser page) imports nothing from the rest of src/, and nothing imports it;
// 7. any other folder of src/ is reached from outside it only through a folder's index.ts
//    (its public API: the package entry point, for the folders package.json exports) or
//    internal.ts (what the package's own folders share beyond that; never an entry point);
// 8. a package entry point (package.json "exports", mapped from dist/ to src/) names its
//    exports: no `export *`, so nothing internal becomes public by accident
//    (test/package/public-api.test.ts compares those names with docs/api.md).
// 9. src/gateway/ takes only types from src/agents/ (`import type` / `export type`), so loading the
//    gateway never loads the agents module: interruption is the core's InterruptedError.
// 10. the agent frameworks are peers of their bridges only: `ai` is imported (as types only) by
//     src/bridges/ai-sdk/, `@openai/agents` (as types only) by src/bridges/openai-agents/, `@langchain/*` by src/bridges/langchain/, and nothing else of src/
//     imports them, so `threadline` and every other entry point load without them.
// 11. the `threadline` command line loads each command's action only when the command runs: the
//     program table (src/cli/main.ts, program.ts and every command's definition) statically imports
//     only non-action src/cli/ modules, src/store/errors.ts, src/store/contract/, commander and node:
//     built-ins; no *-action.ts module imports another command's; the actions on stored sessions load
//     no gateway, server, adapter, agent, driver, zod, file-type, gpt-tokenizer or yaml statically
//     (scripts/cli-import-graph.js, docs/cli.md).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { cliImportGraphProblems } from "./cli-import-graph.js";

const root = new URL("..", import.meta.url).pathname;
const problems = [];

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.(ts|mts|tsx)$/.test(name) && !name.endsWith(".d.ts")) yield path;
  }
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

for (const dir of ["src", "test", "bench"]) {
  let entries;
  try {
    entries = [...files(join(root, dir))];
  } catch {
    continue;
  }
  for (const file of entries) {
    const rel = relative(root, file).split(sep).join("/");
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2];
      const dynamic = match[2] !== undefined;
      if (spec.startsWith(".") && !spec.endsWith(".js")) problems.push(`${rel}: relative import "${spec}" must end in ".js"`);
      if (!rel.startsWith("src/")) continue;
      if (spec.startsWith(".")) {
        const target = join(file, "..", spec);
        const inWeb = (p) => p.startsWith(join(root, "src", "web") + sep);
        if (inWeb(file) !== inWeb(target)) problems.push(`${rel}: src/web/ and the rest of src/ must not import each other ("${spec}")`);
      }
      const inContract = rel === "src/store/contract.ts" || rel.startsWith("src/store/contract/");
      if ((inContract || rel === "src/store/errors.ts") && spec.startsWith(".")) {
        const target = relative(root, join(file, "..", spec))
          .split(sep)
          .join("/");
        const allowed = inContract && (target === "src/store/errors.js" || target.startsWith("src/store/contract/"));
        if (!allowed) problems.push(`${rel}: must not import project modules ("${spec}")`);
      }
      if (spec === "better-sqlite3" && !rel.startsWith("src/store/sqlite/")) problems.push(`${rel}: only src/store/sqlite/ may import better-sqlite3`);
      if (spec === "pg" && !rel.startsWith("src/store/postgres/")) problems.push(`${rel}: only src/store/postgres/ may import pg`);
      if (rel.startsWith("src/store/sqlite/") && spec.includes("/postgres/")) problems.push(`${rel}: backends must not import each other`);
      if (rel.startsWith("src/store/postgres/") && spec.includes("/sqlite/")) problems.push(`${rel}: backends must not import each other`);
      // The CLI's program table may also take the core's light doors (errors.ts and the contract, which import nothing else; rule 11).
      const lightDoor = rel.startsWith("src/cli/") && (spec === "../store/errors.js" || spec.startsWith("../store/contract/"));
      if (/^src\/(gateway|executions|cli|server)\//.test(rel) && spec.startsWith("../store/") && spec !== "../store/index.js" && !lightDoor) {
        problems.push(`${rel}: reach the storage core through "../store/index.js", not "${spec}"`);
      }
      if (spec.startsWith(".") && !rel.startsWith("src/store/") && !rel.startsWith("src/web/")) {
        const target = relative(root, join(file, "..", spec))
          .split(sep)
          .join("/");
        const [, fromTop] = rel.split("/");
        const [targetRoot, targetTop] = target.split("/");
        const door = /\/(index|internal)\.js$/.test(target);
        if (targetRoot === "src" && targetTop !== fromTop && targetTop !== "store" && target.includes("/", 4) && !door) {
          problems.push(`${rel}: reach src/${targetTop}/ through its index.js (public) or internal.js, not "${spec}"`);
        }
      }
      if (rel.startsWith("src/store/") && /\/(gateway|executions|cli|server)\//.test(spec)) {
        problems.push(`${rel}: the storage core must not depend on an outer folder ("${spec}")`);
      }
      if (rel.startsWith("src/gateway/") && spec.startsWith(".") && join(file, "..", spec).startsWith(join(root, "src", "agents") + sep)) {
        const typeOnly = !dynamic && /^\s*(?:import|export)\s+type\s/u.test(match[0]);
        if (!typeOnly) problems.push(`${rel}: src/gateway/ may take only types from src/agents/ ("import type … from "${spec}""), never load it at runtime`);
      }
      if (/^ai(?:\/|$)/u.test(spec)) {
        const typeOnly = !dynamic && /^\s*(?:import|export)\s+type\s/u.test(match[0]);
        if (!rel.startsWith("src/bridges/ai-sdk/")) problems.push(`${rel}: only src/bridges/ai-sdk/ may import "${spec}" (an optional peer)`);
        else if (!typeOnly) problems.push(`${rel}: src/bridges/ai-sdk/ takes only types from "${spec}" ("import type …"), never loads it`);
      }
      if (/^@openai\/agents(?:-[a-z]+)?(?:\/|$)/u.test(spec)) {
        const typeOnly = !dynamic && /^\s*(?:import|export)\s+type\s/u.test(match[0]);
        if (!rel.startsWith("src/bridges/openai-agents/")) problems.push(`${rel}: only src/bridges/openai-agents/ may import "${spec}" (an optional peer)`);
        else if (!typeOnly) problems.push(`${rel}: src/bridges/openai-agents/ takes only types from "${spec}" ("import type …"), never loads it`);
      }
      if (spec.startsWith("@langchain/") && !rel.startsWith("src/bridges/langchain/")) {
        problems.push(`${rel}: only src/bridges/langchain/ may import "${spec}" (an optional peer)`);
      }
      const inCore = rel.startsWith("src/store/") && !/^src\/store\/(sqlite|postgres)\//.test(rel);
      if (inCore && /\/(sqlite|postgres)\//.test(spec) && !dynamic) problems.push(`${rel}: the core may load a backend only with import() ("${spec}")`);
    }
  }
}

problems.push(...cliImportGraphProblems(root));

const exportsMap = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports ?? {};
for (const [subpath, target] of Object.entries(exportsMap)) {
  const built = typeof target === "string" ? target : target.import;
  if (typeof built !== "string" || !built.startsWith("./dist/") || !built.endsWith(".js")) continue;
  const source = built.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts");
  if (/\/internal\.ts$/.test(source)) problems.push(`package.json: "${subpath}" must not export an internal.ts barrel (${source})`);
  let text;
  try {
    text = readFileSync(join(root, source), "utf8");
  } catch {
    problems.push(`package.json: "${subpath}" points at ${built}, but ${source} does not exist`);
    continue;
  }
  if (/(?:^|\n)\s*export\s+(?:type\s+)?\*/.test(text)) {
    problems.push(`${source}: the entry point "${subpath}" must name its exports (no \`export *\`); add the public names and list them in docs/api.md`);
  }
}

if (problems.length) {
  console.error(`check-imports: ${problems.length} problem(s)\n${problems.join("\n")}`);
  process.exit(1);
}
console.log("check-imports: ok");
