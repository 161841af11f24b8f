/**
 * Every example in docs/integrations.md runs as written, against the built package, installed the way an app
 * installs it (a project whose node_modules has `threadline` and the frameworks), with nothing leaving the
 * machine:
 *
 * - the OpenAI Agents SDK script runs twice as its shell lines say, against the local fake OpenAI-compatible
 *   server (`OPENAI_BASE_URL`), and the second run's model request carries the first turn; then the CLI
 *   line shows the session;
 * - the AI SDK and LangChain programs (offline mock models) print exactly the output block that follows them;
 * - the MCP section: the desktop client's stdio entry starts the real bin and lists the read tools; the HTTP
 *   server starts from the section's config with its shell line (on a free port), the SDK client program
 *   searches through it with the tenant's key, and the URL entry names a key of that config;
 * - the hermes-agent migration's three commands run on a copy of the fixture; the third imports nothing.
 *
 * A fenced block that no rule covers fails the test, so a new example cannot go unchecked.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { BIN, freePort } from "../serve/gateway-process.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";
import { codeBlocks, run as runWithDeadline, type Block } from "./markdown-examples.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = join(ROOT, "node_modules", ".bin", "tsx");
const HERMES_FIXTURE = join(ROOT, "test", "fixtures", "hermes", "hermes-state.db");

/** An example's command, with two minutes for it (a first tsx compile on a loaded machine is slow). */
const run = (command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): ReturnType<typeof runWithDeadline> =>
  runWithDeadline(command, args, { ...options, timeoutMs: 120_000 });

const blocks = codeBlocks(readFileSync(join(ROOT, "docs", "integrations.md"), "utf8"));
const inSection = (prefix: string): Block[] => blocks.filter((b) => b.section.startsWith(prefix));

type Kind =
  | "agents-script" // the OpenAI Agents SDK program
  | "agents-shell" // its command lines
  | "program" // a TypeScript program run as is
  | "program-output" // the output block after a program
  | "fragment" // a server route that needs an app around it: type-level only, not run
  | "mcp-stdio-entry"
  | "mcp-url-entry"
  | "mcp-config"
  | "mcp-http-shell"
  | "mcp-client"
  | "hermes-shell";

/** What a block is; `null` when no rule covers it (the test then fails). */
function classify(block: Block): Kind | null {
  const { lang, code, section } = block;
  if (section === "OpenAI Agents SDK") {
    if (lang === "js" && code.includes('from "threadline/openai-agents"')) return "agents-script";
    if (lang === "sh" && /node weather\.mjs/u.test(code)) return "agents-shell";
  }
  if (section.startsWith("Vercel AI SDK") || section.startsWith("LangChain JS") || section.startsWith("Long conversations")) {
    if (lang === "ts" && code.includes("export async function POST")) return "fragment";
    if (lang === "ts") return "program";
    if (lang === "text") return "program-output";
  }
  if (section === "Using Threadline from a desktop MCP client") {
    if (lang === "json" && code.includes('"command"')) return "mcp-stdio-entry";
    if (lang === "json" && code.includes('"url"')) return "mcp-url-entry";
    if (lang === "yaml") return "mcp-config";
    if (lang === "sh" && code.includes("threadline mcp --http")) return "mcp-http-shell";
    if (lang === "ts" && code.includes("StreamableHTTPClientTransport")) return "mcp-client";
  }
  if (section === "Migrating from hermes-agent" && lang === "sh" && code.includes("--from hermes")) return "hermes-shell";
  return null;
}

/** The words of a shell line, quotes removed, the trailing `# comment` dropped (the examples use no other shell syntax). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.replace(/\s+#.*$/u, "").matchAll(/"([^"]*)"|(\S+)/gu)) words.push(match[1] ?? match[2]!);
  return words;
}

describe("docs/integrations.md examples", { timeout: 600_000 }, () => {
  let project: string;
  let home: string;
  let fake: FakeOpenAiServer;
  const servers: ChildProcess[] = [];

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), "threadline-integrations-"));
    home = join(project, "home");
    mkdirSync(join(project, "node_modules"), { recursive: true });
    // An app's project: "threadline" is this package (built), the frameworks are what the app installed.
    symlinkSync(ROOT, join(project, "node_modules", "threadline"), "dir");
    for (const name of readdirSync(join(ROOT, "node_modules"))) {
      if (name.startsWith(".") || name === "threadline") continue;
      symlinkSync(join(ROOT, "node_modules", name), join(project, "node_modules", name), "dir");
    }
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "integration-examples", private: true, type: "module" }));
    fake = await startFakeOpenAiServer();
  });

  afterAll(async () => {
    for (const child of servers) if (child.exitCode === null) child.kill("SIGKILL");
    await fake?.close();
    rmSync(project, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const out: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home, NO_COLOR: "1", ...extra };
    for (const name of ["THREADLINE_DB", "THREADLINE_CONFIG", "OPENAI_BASE_URL", "OPENAI_API_KEY", "THREADLINE_MODEL", "THREADLINE_KEY"]) {
      if (!(name in extra)) delete out[name];
    }
    return out;
  };
  const only = (kind: Kind): Block => {
    const found = blocks.filter((b) => classify(b) === kind);
    expect(found, `exactly one "${kind}" block`).toHaveLength(1);
    return found[0]!;
  };

  it("every fenced block is covered by a rule of this test", () => {
    const uncovered = blocks.filter((b) => classify(b) === null).map((b) => `line ${b.line} (${b.lang || "no language"}) in "${b.section}"`);
    expect(uncovered, "blocks no rule runs or skips: run them here, or mark them as fragments").toEqual([]);
    expect(blocks.filter((b) => classify(b) === "program").map((b) => b.section.split(" ")[0])).toEqual(["Vercel", "LangChain", "Long"]);
  });

  it("OpenAI Agents SDK: two runs of the script keep one conversation; the CLI shows it", async () => {
    writeFileSync(join(project, "weather.mjs"), only("agents-script").code);
    const lines = only("agents-shell")
      .code.split("\n")
      .filter((l) => l.trim() !== "");
    const runs = lines.filter((l) => l.includes("node weather.mjs"));
    expect(runs).toHaveLength(2);
    const questions: string[] = [];
    for (const line of runs) {
      const words = shellWords(line);
      expect(words.slice(1, 3)).toEqual(["node", "weather.mjs"]);
      questions.push(words[3]!);
      const result = await run(process.execPath, ["weather.mjs", ...words.slice(3)], {
        cwd: project,
        env: env({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.url }),
      });
      expect(result.code, `${line}\n${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Reply to: ${words[3]}`);
    }
    const last = fake.chatRequests().at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    const userTexts = last.messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    expect(
      userTexts.some((t) => t.includes(questions[0]!)),
      "the second run sent the first turn",
    ).toBe(true);
    expect(userTexts.some((t) => t.includes(questions[1]!))).toBe(true);

    const show = lines.find((l) => l.startsWith("npx threadline "))!;
    const result = await run(process.execPath, [BIN, ...shellWords(show).slice(2)], { cwd: project, env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Weather demo");
    expect(result.stdout).toContain(questions[1]!);
  });

  for (const section of ["Vercel AI SDK", "LangChain JS", "Long conversations with any framework"]) {
    it(`${section}: the program prints the output shown after it`, async () => {
      const [program, output] = inSection(section).filter((b) => classify(b) === "program" || classify(b) === "program-output");
      expect([classify(program!), classify(output!)]).toEqual(["program", "program-output"]);
      const file = join(project, `example-${program!.line}.mts`);
      writeFileSync(file, program!.code);
      const result = await run(TSX, [file], { cwd: project, env: env() });
      expect(result.stderr, `line ${program!.line} wrote to stderr`).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe(output!.code.trim());
    });
  }

  it("MCP: the desktop client's stdio entry starts the server and lists its read tools", async () => {
    const entry = JSON.parse(only("mcp-stdio-entry").code) as { mcpServers: { threadline: { command: string; args: string[] } } };
    const { command, args } = entry.mcpServers.threadline;
    expect(command).toMatch(/\/threadline$/u);
    const db = join(home, "state.db"); // made by the scripts above
    const dbAt = args.indexOf("--db");
    expect(dbAt).toBeGreaterThan(0);
    const client = new Client({ name: "integrations-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, ...args.slice(0, dbAt + 1), db, ...args.slice(dbAt + 2)],
        env: env() as Record<string, string>,
        stderr: "ignore",
      }),
    );
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(["session_search", "session_show", "sessions_list"]);
      const found = (await client.callTool({ name: "session_search", arguments: { query: "Oslo" } })) as { isError?: boolean };
      expect(found.isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("MCP over HTTP: the config and shell line start it; the SDK client searches with the tenant's key", async () => {
    const config = only("mcp-config").code;
    const keys = (parseYaml(config) as { api: { keys: Array<{ key: string; userId?: string }> } }).api.keys;
    writeFileSync(join(project, "config.yaml"), config);
    const line = only("mcp-http-shell")
      .code.split("\n")
      .find((l) => !l.includes("--host"))!;
    const words = shellWords(line);
    expect(words.slice(0, 3)).toEqual(["threadline", "mcp", "--http"]);
    const port = await freePort();
    const server = spawn(process.execPath, [BIN, ...words.slice(1), "--port", String(port), "--db", join(home, "state.db")], {
      cwd: project,
      env: env(),
      stdio: ["ignore", "ignore", "pipe"],
    });
    servers.push(server);
    let log = "";
    server.stderr!.setEncoding("utf8").on("data", (d: string) => (log += d));
    const url = `http://127.0.0.1:${port}/mcp`;
    await waitFor(async () => (await fetch(url, { method: "POST" }).catch(() => null)) !== null, {
      timeoutMs: 30_000,
      what: `threadline mcp --http on ${url}; log: ${log}`,
    });

    const entry = JSON.parse(only("mcp-url-entry").code) as { mcpServers: { threadline: { url: string; headers: Record<string, string> } } };
    const key = entry.mcpServers.threadline.headers["Authorization"]!.replace(/^Bearer /u, "");
    expect(keys.map((k) => k.key)).toContain(key);
    expect(new URL(entry.mcpServers.threadline.url).port).toBe("8789");

    const client = only("mcp-client");
    const file = join(project, `example-${client.line}.mts`);
    writeFileSync(file, client.code.replaceAll("127.0.0.1:8789", `127.0.0.1:${port}`));
    const result = await run(TSX, [file], { cwd: project, env: env({ THREADLINE_KEY: key }) });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stderr).toBe("");

    const refused = await run(TSX, [file], { cwd: project, env: env({ THREADLINE_KEY: "not-a-key" }) });
    expect(refused.code, "a wrong key is refused").not.toBe(0);
    server.kill("SIGTERM");
  });

  it("hermes-agent: dry run, import, and a second import that brings nothing twice", async () => {
    const lines = only("hermes-shell")
      .code.split("\n")
      .filter((l) => l.trim() !== "");
    expect(lines).toHaveLength(3);
    const hermes = join(project, "hermes-state.db");
    copyFileSync(HERMES_FIXTURE, hermes);
    const target = join(project, "hermes-target.db");
    const outputs: string[] = [];
    for (const line of lines) {
      const words = shellWords(line).map((w) => (w === "~/.hermes/state.db" ? hermes : w));
      expect(words[0]).toBe("threadline");
      const result = await run(process.execPath, [BIN, ...words.slice(1), "--db", target], { cwd: project, env: env() });
      expect(result.code, `${line}\n${result.stdout}\n${result.stderr}`).toBe(0);
      outputs.push(result.stdout);
    }
    const expected = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hermes", "hermes-state.json"), "utf8")) as { totals: { sessions: number } };
    expect(outputs[1]).toContain(`Imported ${expected.totals.sessions} sessions`);
    expect(outputs[2]).toContain("Imported 0 sessions");
  });
});
