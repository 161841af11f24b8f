// The static import graph of the `threadline` command line, and the rule it must keep (run by
// `npm run check-imports` and test/cli/import-graph.test.ts):
// - the program table (src/cli/main.ts: program.ts, top-level.ts and every command's definition)
//   loads only src/cli/ modules that are not actions (*-action.ts), the store's light doors
//   (src/store/errors.ts and src/store/contract/, which import nothing but each other), commander
//   and node: built-ins. Everything else (the store, the gateway, SDKs, string-width …) is loaded
//   by a command's action module, with import(), when that command runs;
// - a command's action module never loads another command's action module (shared code lives in
//   modules that are not actions);
// - the actions of the commands that only read or change stored sessions (sessions list, show,
//   search, export, delete, rename, prune, stats; insights; doctor) load no gateway, server,
//   adapter, agent or chat SDK, no database driver statically (the store loads its backend), and
//   no zod, file-type, gpt-tokenizer or yaml (the store loads its export/import path, which
//   validates records with zod, with import() when it is used; issue 31).
// Edges are the static `import … from`, `export … from` and `import "…"` of the sources; `import
// type` / `export type` are erased by tsc and `import()` loads later, so neither is followed.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";

/** A static import or re-export: `import x from "…"`, `export { x } from "…"`, `import "…"` (group 2: `type`, erased). */
const EDGE = /(?:^|\n)[ \t]*(import|export)\s+(type\s+)?(?:[^;"'`]*?\sfrom\s*)?["']([^"']+)["']/g;

/** The static runtime imports of a source file: relative ones resolved to source paths (root-relative), bare ones as package names. */
export function staticImports(root, file) {
  const text = readFileSync(join(root, file), "utf8");
  const out = [];
  for (const match of text.matchAll(EDGE)) {
    if (match[2] !== undefined) continue; // import type / export type: erased
    const spec = match[3];
    if (spec.startsWith(".")) {
      const target = relative(root, join(root, dirname(file), spec))
        .split(sep)
        .join("/")
        .replace(/\.js$/u, ".ts");
      out.push({ kind: "file", id: target });
    } else if (spec.startsWith("node:")) {
      out.push({ kind: "builtin", id: spec });
    } else {
      const parts = spec.split("/");
      out.push({ kind: "package", id: spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0] });
    }
  }
  return out;
}

/** Every module the static graph from `entry` reaches, each with the chain that reached it first. */
export function staticGraph(root, entry) {
  const reached = new Map([[entry, [entry]]]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const edge of staticImports(root, file)) {
      const key = edge.kind === "file" ? edge.id : `${edge.kind}:${edge.id}`;
      if (reached.has(key)) continue;
      reached.set(key, [...reached.get(file), key]);
      if (edge.kind === "file") queue.push(edge.id);
    }
  }
  return reached;
}

function* sourceFiles(root, dir) {
  for (const name of readdirSync(join(root, dir))) {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) yield* sourceFiles(root, path);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) yield path;
  }
}

const isAction = (id) => /^src\/cli\/.*-action\.ts$/u.test(id);

/** What the program table may load: non-action src/cli modules, the store's light doors, commander, node: built-ins. */
export function allowedInProgramTable(id) {
  if (id.startsWith("builtin:")) return true;
  if (id.startsWith("package:")) return id === "package:commander";
  if (id === "src/store/errors.ts" || id.startsWith("src/store/contract/")) return true;
  return id.startsWith("src/cli/") && !isAction(id);
}

/** The actions that only read or change stored sessions, and what they must not load. */
export const STORE_ONLY_ACTIONS = /^src\/cli\/commands\/(sessions\/(list|show|search|export|delete|rename|prune|stats)|insights|doctor)-action\.ts$/u;
export const HEAVY_FOR_STORE_ONLY =
  /^(src\/(gateway|serve|http-api|adapters|agents|bridges|executions|importers)\/|package:(fastify|@fastify\/.*|grammy|discord\.js|@slack\/.*|matrix-js-sdk|pg|better-sqlite3|pino|@modelcontextprotocol\/.*|zod|file-type|gpt-tokenizer|yaml))/u;

const chain = (path) => path.join(" → ");

/** The problems of the CLI's import graph (empty: it keeps the rule above). */
export function cliImportGraphProblems(root) {
  const problems = [];
  const table = staticGraph(root, "src/cli/main.ts");
  for (const [id, path] of table) {
    if (!allowedInProgramTable(id)) problems.push(`the program table loads ${id} (${chain(path)}); load it from the command's *-action.ts with import()`);
  }
  const actions = [...sourceFiles(root, "src/cli")].filter(isAction).sort();
  for (const action of actions) {
    const heavyShown = new Set();
    for (const [id, path] of staticGraph(root, action)) {
      if (id !== action && isAction(id))
        problems.push(`${action} loads another command's action ${id} (${chain(path)}); share code through a module that is not an action`);
      const heavy = STORE_ONLY_ACTIONS.test(action) ? HEAVY_FOR_STORE_ONLY.exec(id) : null;
      // One line per folder or package: the first chain that reaches it.
      if (heavy !== null && !heavyShown.has(heavy[0])) {
        heavyShown.add(heavy[0]);
        problems.push(`${action} loads ${id} (${chain(path)}), which a command on stored sessions does not need; load it with import() where it is used`);
      }
    }
  }
  return problems;
}
