// The command line loads each command's action only when that command runs (docs/cli.md, "How
// commands are loaded"): checked on the sources' static import graph (scripts/cli-import-graph.js,
// also run by `npm run check-imports`) and on what the built bin really loads.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allowedInProgramTable, cliImportGraphProblems, staticGraph } from "../../scripts/cli-import-graph.js";
import { openSessionDB } from "../../src/index.js";
import { builtCli } from "./cli-run.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

describe("the CLI's static import graph", () => {
  it("keeps the rule: the program table loads no action, store, gateway or SDK; actions load no other command's action", () => {
    expect(cliImportGraphProblems(ROOT)).toEqual([]);
  });

  it("the program table is commander, the definitions and a few small shared modules", () => {
    const table = [...staticGraph(ROOT, "src/cli/main.ts").keys()];
    expect(table).toContain("src/cli/commands/sessions/list-command.ts");
    expect(table).toContain("package:commander");
    expect(table.filter((id) => id.startsWith("package:"))).toEqual(["package:commander"]);
    expect(table.some((id) => id.endsWith("-action.ts"))).toBe(false);
  });

  describe("fails on a tree that breaks it", () => {
    let root: string;
    const write = (path: string, text: string): void => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), "threadline-import-graph-"));
      write("src/cli/main.ts", 'import { runCli } from "./program.js";\nimport type { Heavy } from "../gateway/index.js";\n');
      write("src/cli/program.ts", 'import { Command } from "commander";\nimport { makeList } from "./commands/list-command.js";\n');
      // A definition that imports its action statically, and a store module.
      write(
        "src/cli/commands/list-command.ts",
        'import { run } from "./list-action.js";\nexport { x } from "../../store/index.js";\nconst later = () => import("fastify");\n',
      );
      write("src/cli/commands/list-action.ts", 'import { run as show } from "./show-action.js";\nimport "../../gateway/index.js";\n');
      write("src/cli/commands/show-action.ts", 'import pg from "pg";\n');
      write("src/store/index.ts", "export const x = 1;\n");
      write("src/gateway/index.ts", "export const y = 1;\n");
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it("names each broken edge with the chain that reaches it", () => {
      const problems = cliImportGraphProblems(root).join("\n");
      expect(problems).toContain(
        "the program table loads src/cli/commands/list-action.ts (src/cli/main.ts → src/cli/program.ts → src/cli/commands/list-command.ts → src/cli/commands/list-action.ts)",
      );
      expect(problems).toContain("the program table loads src/store/index.ts");
      expect(problems).toContain("the program table loads src/gateway/index.ts");
      expect(problems).toContain("the program table loads package:pg");
      expect(problems).toContain("src/cli/commands/list-action.ts loads another command's action src/cli/commands/show-action.ts");
      // `import type` is erased and import() loads later: neither is an edge.
      expect(problems).not.toContain("package:fastify");
      expect(staticGraph(root, "src/cli/main.ts").has("src/gateway/index.ts")).toBe(true); // through list-action.ts only
      expect([...staticGraph(root, "src/cli/commands/show-action.ts").keys()]).toEqual(["src/cli/commands/show-action.ts", "package:pg"]);
    });
  });
});

describe("what the built bin loads", { timeout: 60_000 }, () => {
  let dir: string;
  let database: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "threadline-loaded-"));
    // A loader hook that appends the URL of every module the process loads to $THREADLINE_TEST_LOADED.
    writeFileSync(
      join(dir, "hooks.mjs"),
      [
        'import { appendFileSync } from "node:fs";',
        "export async function load(url, context, next) {",
        '  appendFileSync(process.env.THREADLINE_TEST_LOADED, url + "\\n");',
        "  return next(url, context);",
        "}",
        "",
      ].join("\n"),
    );
    writeFileSync(join(dir, "record.mjs"), 'import { register } from "node:module";\nregister(new URL("./hooks.mjs", import.meta.url));\n');
    database = join(dir, "state.db");
    const db = await openSessionDB(database);
    try {
      await db.createSession({ id: "s1", source: "cli", title: "first" });
      await db.appendMessage("s1", { role: "user", content: "hello" });
    } finally {
      await db.close();
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The modules `threadline <argv>` loads: dist files as their source path (src/…ts), packages as `package:<name>`. */
  async function loaded(argv: string[]): Promise<string[]> {
    const list = join(dir, `loaded-${argv.join("_").replace(/\W+/gu, "_")}.txt`);
    writeFileSync(list, "");
    const [node, bin] = builtCli();
    await run(node!, ["--import", pathToFileURL(join(dir, "record.mjs")).href, bin!, ...argv], {
      env: { ...process.env, THREADLINE_TEST_LOADED: list, THREADLINE_HOME: dir, NO_COLOR: "1" },
    });
    const dist = `${pathToFileURL(join(ROOT, "dist")).href}/`;
    const ids = new Set<string>();
    for (const url of readFileSync(list, "utf8")
      .split("\n")
      .filter((line) => line !== "")) {
      if (url.startsWith("node:")) continue;
      const inPackage = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//u.exec(url);
      if (inPackage !== null) ids.add(`package:${inPackage[1]!}`);
      else if (url.startsWith(dist)) ids.add(`src/${url.slice(dist.length).replace(/\.js$/u, ".ts")}`);
      else if (!url.startsWith(pathToFileURL(dir).href)) ids.add(url);
    }
    return [...ids];
  }

  it("--version and --help load the program table only", async () => {
    for (const argv of [["--version"], ["--help"], ["sessions", "list", "--help"]]) {
      const ids = await loaded(argv);
      expect(ids, argv.join(" ")).toContain("src/cli/program.ts");
      expect(
        ids.filter((id) => !allowedInProgramTable(id)),
        argv.join(" "),
      ).toEqual([]);
    }
  });

  it.each([
    ["list", ["sessions", "list"]],
    ["show", ["sessions", "show", "s1"]],
  ])("sessions %s loads its own action and the store, nothing of the gateway, the servers or another command", async (name, argv) => {
    const ids = await loaded([...argv, "--db", database]);
    const action = `src/cli/commands/sessions/${name}-action.ts`;
    expect(ids).toContain(action);
    expect(ids).toContain("src/store/index.ts");
    expect(ids.filter((id) => id.endsWith("-action.ts"))).toEqual([action]);
    // Plain text is measured without string-width (display-width.ts).
    expect(ids).not.toContain("package:string-width");
    const heavy =
      /^(src\/(gateway|serve|http-api|adapters|agents|bridges|executions|importers|tools)\/|package:(fastify|@fastify\/.*|grammy|discord\.js|@slack\/.*|matrix-js-sdk|pg|pino|@modelcontextprotocol\/.*|yaml)$)/u;
    expect(ids.filter((id) => heavy.test(id))).toEqual([]);
    // The store loads its export/import path (zod: session-record.ts) and media sniffing only when used (issue 31).
    const storeHeavy = /^(src\/store\/(session-record|session-import|core\/transfer-methods)\.ts|package:(zod|file-type|gpt-tokenizer))$/u;
    expect(ids.filter((id) => storeHeavy.test(id))).toEqual([]);
  });
});
