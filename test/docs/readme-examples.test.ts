/**
 * Every example in README.md runs as written, twice in a row in the same THREADLINE_HOME
 * (a user trying the quick start twice must not hit an error).
 *
 * The README's fenced blocks are extracted and each is classified: TypeScript examples run
 * with tsx against the built package; `threadline serve` / `threadline api` command lines
 * start the real built bin on a free loopback port (with the environment the line sets);
 * curl and OpenAI-client examples then run against it with only the port rewritten; YAML
 * configs are validated (the API's is written as the config file the API runs with). The
 * PostgreSQL example gets the test server's URL and a fresh schema instead of its
 * placeholder. The chat platform example (its config and its serve line) runs against the
 * local Telegram, Slack and Discord fakes: only their API base URLs are added to the config
 * and the tokens swapped for the fakes' own; a DM on each platform must be answered. Install/test/benchmark commands are not examples and are skipped by name; a
 * block that no rule covers fails the test, so new examples cannot go unchecked.
 *
 * @module
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseServeConfig } from "../../src/serve/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { DISCORD_IDS, discordMessage, startFakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { startFakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { startFakeTelegramServer, telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { BIN, cleanupProcesses, freePort, makeHome, spawnGateway, waitFor, type GatewayProcess } from "../serve/gateway-process.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { codeBlocks, run, type Block } from "./markdown-examples.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = join(ROOT, "node_modules", ".bin", "tsx");

type Kind =
  | "not-an-example" // installing, testing or benchmarking Threadline itself
  | "serve" // starts the gateway
  | "chat-client" // talks to the running gateway
  | "gateway-config" // a config.yaml for the gateway
  | "api-config" // the config.yaml the API example runs with
  | "api-session" // starts the API and calls it
  | "platform-config" // a config.yaml with chat platform adapters
  | "platform-serve" // starts the gateway with platform tokens
  | "container" // docker commands: no container engine here; test/deploy/container-files.test.ts checks them against the files
  | "operations" // "Run it for real" steps (service, backup, copy): each is tested where it is documented; here, that they name real commands and options
  | "typescript";

/** What a block is; `null` when no rule covers it (the test then fails). */
function classify(block: Block): Kind | null {
  const code = block.code.trim();
  if (
    block.lang === "sh" &&
    /^(npm install|npm test|THREADLINE_TEST_PG_URL=\S+ npm test|npm run bench|npm run build && npm run -s bench:gateway|npx tsx bench\/)\b/u.test(code) &&
    !code.includes("threadline serve")
  ) {
    return "not-an-example";
  }
  if (block.lang === "sh" && /^(docker |cp deploy\/docker\/)/u.test(code)) return "container";
  if (block.lang === "sh" && block.section === "Run it for real") return "operations";
  if (block.lang === "sh" && code.startsWith("npx threadline api &")) return "api-session";
  if (block.lang === "sh" && /_BOT_TOKEN=\S+ .*npx threadline serve/u.test(code)) return "platform-serve";
  if (block.lang === "yaml" && /^adapters:\n(\s+(#.*|(telegram|slack|discord):.*)\n?)+$/u.test(code.replace(/^#.*\n/u, ""))) return "platform-config";
  if (block.lang === "sh" && /npx threadline serve/u.test(code)) return "serve";
  if (block.lang === "sh" && code.startsWith("curl ") && code.includes("/v1/chat/completions")) return "chat-client";
  if (block.lang === "js" && code.includes('from "openai"')) return "chat-client";
  if (block.lang === "yaml" && /^api:/mu.test(code)) return "api-config";
  if (block.lang === "yaml" && /^gateway:/mu.test(code)) return "gateway-config";
  if (block.lang === "ts") return "typescript";
  return null;
}

/** `npx threadline serve` lines of a serve block as (environment, args); comments and `npm install` are not commands. */
function serveCommands(code: string): Array<{ env: Record<string, string>; args: string[] }> {
  const out: Array<{ env: Record<string, string>; args: string[] }> = [];
  for (const raw of code.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line === "npm install") continue;
    const words = line.split(/\s+/u);
    const env: Record<string, string> = {};
    while (words.length > 0 && /^[A-Z_]+=/u.test(words[0]!)) {
      const [name, ...value] = words.shift()!.split("=");
      env[name!] = value.join("=");
    }
    expect(words.slice(0, 3), `a serve line: ${line}`).toEqual(["npx", "threadline", "serve"]);
    out.push({ env, args: words.slice(3) });
  }
  return out;
}

const blocks = codeBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));

describe("README examples", { timeout: 600_000 }, () => {
  let project: string;
  let home: string;
  let fake: FakeOpenAiServer;
  const schema = `tl_test_${randomBytes(6).toString("hex")}`;
  const apis: ChildProcess[] = [];

  beforeAll(async () => {
    await requirePostgres();
    project = mkdtempSync(join(tmpdir(), "threadline-readme-"));
    home = join(project, "home");
    mkdirSync(join(project, "node_modules"), { recursive: true });
    // The examples import "threadline" (this package, built) and "openai", as an installed app would.
    symlinkSync(ROOT, join(project, "node_modules", "threadline"), "dir");
    symlinkSync(join(ROOT, "node_modules", "openai"), join(project, "node_modules", "openai"), "dir");
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "readme-examples", private: true, type: "module" }));
    fake = await startFakeOpenAiServer();
  });

  afterAll(async () => {
    for (const child of apis) if (child.exitCode === null) child.kill("SIGKILL");
    await cleanupProcesses();
    await fake?.close();
    await dropSchema(schema).catch(() => {});
    rmSync(project, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const out: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home, NO_COLOR: "1", ...extra };
    for (const name of ["THREADLINE_DB", "THREADLINE_CONFIG", "OPENAI_BASE_URL", "OPENAI_API_KEY", "THREADLINE_MODEL"]) {
      if (!(name in extra)) delete out[name];
    }
    return out;
  };

  it("every fenced block is covered by a rule of this test", () => {
    const uncovered = blocks.filter((b) => classify(b) === null).map((b) => `line ${b.line} (${b.lang || "no language"}) in "${b.section}"`);
    expect(uncovered, "README blocks no rule runs or skips: run them here, or mark them as not examples").toEqual([]);
    expect(
      blocks.filter((b) => classify(b) === "platform-serve").map((b) => b.section),
      "the chat platform example is run",
    ).toEqual(["Run the gateway"]);
    expect(blocks.filter((b) => classify(b) === "typescript").length).toBeGreaterThanOrEqual(4);
  });

  async function runTypeScript(block: Block, round: number): Promise<void> {
    let code = block.code;
    if (code.includes("postgres://")) {
      // The placeholder server becomes the test server, and the schema a fresh one of this test.
      code = code.replace(/"postgres:\/\/[^"]+"/u, JSON.stringify(TEST_PG_URL)).replace(/schema: "[^"]*"/u, `schema: "${schema}"`);
      expect(code, `line ${block.line}: the PostgreSQL example names a schema`).toContain(schema);
    }
    const file = join(project, `example-${block.line}.mts`);
    writeFileSync(file, code);
    const result = await run(TSX, [file], { cwd: project, env: env(), timeoutMs: 120_000 });
    expect(result.stderr, `README line ${block.line} (round ${round}) wrote to stderr`).toBe("");
    expect(result.code, `README line ${block.line} (round ${round}) failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
  }

  async function runChatClients(gateway: GatewayProcess, clients: Block[], round: number): Promise<void> {
    for (const block of clients) {
      const code = block.code.replaceAll("127.0.0.1:8787", `127.0.0.1:${gateway.port}`);
      expect(code, `line ${block.line} talks to the default port`).not.toBe(block.code);
      if (block.lang === "sh") {
        const result = await run("bash", ["-c", code], { cwd: project, env: env() });
        expect(result.code, `README line ${block.line} (round ${round}): ${result.stderr}`).toBe(0);
        const body = JSON.parse(result.stdout) as { choices?: Array<{ message?: { content?: string } }> };
        expect(body.choices?.[0]?.message?.content, `README line ${block.line}: ${result.stdout}`).toBeTruthy();
      } else {
        const file = join(project, `example-${block.line}.mjs`);
        writeFileSync(file, code);
        const result = await run(process.execPath, [file], { cwd: project, env: env() });
        expect(result.code, `README line ${block.line} (round ${round}):\n${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout.trim(), `README line ${block.line} printed the reply`).not.toBe("");
      }
    }
  }

  async function runServe(block: Block, clients: Block[], round: number): Promise<void> {
    for (const command of serveCommands(block.code)) {
      const extra = { ...command.env };
      if (extra["OPENAI_BASE_URL"] !== undefined) {
        const rewritten = extra["OPENAI_BASE_URL"].replace(/:(\d+)\//u, `:${fake.port}/`);
        expect(rewritten, `line ${block.line}: a provider URL with a port`).not.toBe(extra["OPENAI_BASE_URL"]);
        extra["OPENAI_BASE_URL"] = rewritten;
      }
      const before = fake.chatRequests().length;
      const gateway = await spawnGateway({ home, env: env(extra), args: command.args });
      try {
        await runChatClients(gateway, clients, round);
      } finally {
        await gateway.stop();
      }
      if (command.env["OPENAI_BASE_URL"] !== undefined) {
        expect(fake.chatRequests().length, `line ${block.line}: the gateway asked the configured provider`).toBeGreaterThan(before);
      }
    }
  }

  async function runApiSession(block: Block, round: number): Promise<void> {
    const [start, ...lines] = block.code
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    expect(start).toMatch(/^npx threadline api &/u);
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, "api", "--port", String(port)], { env: env(), stdio: ["ignore", "pipe", "pipe"] });
    apis.push(child);
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    try {
      await waitFor(async () => child.exitCode === null && (await fetch(`http://127.0.0.1:${port}/openapi.json`)).status === 200, {
        what: "the API to listen",
        timeoutMs: 30_000,
        describe: () => output,
      });
      for (const line of lines) {
        const command = line.replaceAll("127.0.0.1:8788", `127.0.0.1:${port}`);
        expect(command, `line ${block.line}: "${line}" talks to the API's default port`).not.toBe(line);
        const result = await run("bash", ["-c", command], { cwd: project, env: env() });
        expect(result.code, `README line ${block.line} (round ${round}): ${line}\n${result.stderr}`).toBe(0);
        const redirect = /> (\S+)$/u.exec(command);
        const body = redirect === null ? result.stdout : readFileSync(join(project, redirect[1]!), "utf8");
        expect(body.trim(), `README (round ${round}): ${line}`).not.toBe("");
        expect(body, `README (round ${round}): ${line} answered an error`).not.toMatch(/^\{"error"/u);
        if (redirect !== null) expect(statSync(join(project, redirect[1]!)).size).toBeGreaterThan(0);
      }
    } finally {
      child.kill("SIGTERM");
      await waitFor(() => child.exitCode !== null || child.signalCode !== null, { what: "the API to stop", timeoutMs: 20_000 });
    }
  }

  /**
   * The platform example: the README's config plus the fakes' base URLs, the serve line's
   * environment with the fakes' tokens; the startup log names each adapter and bot, and a DM
   * on each platform is answered there (echo agent).
   */
  async function runPlatforms(config: Block | null, block: Block, round: number): Promise<void> {
    expect(config, `line ${block.line}: the platform serve line follows its config`).not.toBeNull();
    const written = parseYaml(config!.code) as { adapters: Record<string, Record<string, unknown>> };
    parseServeConfig(written as Record<string, unknown>);
    const [command] = serveCommands(block.code);
    const telegram = await startFakeTelegramServer();
    const slack = await startFakeSlackServer();
    const discord = await startFakeDiscordServer();
    try {
      const platformHome = await makeHome({
        ...written,
        adapters: {
          ...written.adapters,
          telegram: { ...written.adapters["telegram"], apiRoot: telegram.url },
          slack: { ...written.adapters["slack"], apiUrl: slack.url },
          discord: { ...written.adapters["discord"], apiUrl: discord.url, gatewayUrl: discord.gatewayUrl },
        },
      });
      const given = command!.env;
      for (const name of ["TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_BOT_TOKEN"]) {
        expect(given[name], `line ${block.line} sets ${name}`).toBeTruthy();
      }
      const gateway = await spawnGateway({
        home: platformHome,
        args: command!.args,
        env: { ...given, TELEGRAM_BOT_TOKEN: telegram.token, SLACK_BOT_TOKEN: slack.botToken, DISCORD_BOT_TOKEN: discord.token },
      });
      try {
        for (const platform of ["telegram", "slack", "discord"]) {
          await waitFor(() => new RegExp(`${platform} adapter connected as \\S.* \\(\\w+\\)`, "u").test(gateway.output()), {
            what: `README line ${block.line} (round ${round}): the ${platform} adapter to connect`,
            describe: () => gateway.output(),
          });
        }
        telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: round, text: "hello from telegram" }));
        const answer = await postSlackEvent(`${gateway.url}/slack/events`, slackEvent("event-message-im", { ts: slackTs(), text: "hello from slack" }), {
          signingSecret: given["SLACK_SIGNING_SECRET"]!,
        });
        expect(answer.status).toBe(200);
        discord.pushMessage(discordMessage("message-dm", { id: String(1500000000000000900n + BigInt(round)), content: "hello from discord" }));
        await waitFor(
          () =>
            telegram.sentTo(111111).some((m) => m.plain.includes("hello from telegram")) &&
            slack.sentTo("D0ALICEDM1").some((m) => m.text.includes("hello from slack")) &&
            discord.sentTo(DISCORD_IDS.dm).some((m) => m.content.includes("hello from discord")),
          { what: `README line ${block.line} (round ${round}): a reply on each platform`, timeoutMs: 30_000, describe: () => gateway.output() },
        );
      } finally {
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      }
    } finally {
      await Promise.all([telegram.close(), slack.close(), discord.close()]);
    }
  }

  it("the steps of 'Run it for real' name real commands and options", () => {
    const steps = blocks.filter((b) => classify(b) === "operations");
    expect(steps.length, "the service, backup and copy steps").toBeGreaterThanOrEqual(3);
    for (const block of steps) {
      for (const raw of block.code.split("\n")) {
        // A step may set variables for its command (`PGPASSWORD=… npx threadline db copy …`).
        const line = raw
          .replace(/\s+#.*$/u, "")
          .trim()
          .replace(/^([A-Z_]+=\S*\s+)+/u, "");
        if (line === "" || line.startsWith("#")) continue;
        // Not ours: the directory a backup goes to, and systemd's linger (docs/deploy.md says what they do).
        if (/^(mkdir -p |loginctl enable-linger )/u.test(line)) continue;
        expect(line, `README line ${block.line}: a step is a threadline command`).toMatch(/^npx threadline /u);
        const words = line.split(/\s+/u).slice(2);
        const options = words.filter((w) => w.startsWith("-")).map((w) => w.split("=")[0]!);
        const positional = words.filter((w) => !w.startsWith("-"));
        const help = spawnSync(process.execPath, [BIN, ...positional, "--help"], { encoding: "utf8", env: env() });
        expect(help.status, `${line}: --help of its command`).toBe(0);
        const usage = /^Usage: threadline ([a-z -]+?) \[/mu.exec(help.stdout)?.[1] ?? "";
        expect(positional.join(" ").startsWith(usage) && usage.split(" ").length >= 2, `${line}: names a subcommand (help is for "${usage}")`).toBe(true);
        for (const option of options) expect(help.stdout, `${line}: ${option} is an option of threadline ${usage}`).toContain(option);
      }
    }
  });

  for (const round of [1, 2]) {
    it(`round ${round}: every example runs as written`, async () => {
      let platformConfig: Block | null = null;
      for (const block of blocks) {
        const kind = classify(block);
        switch (kind) {
          case "platform-config":
            expect(() => parseServeConfig(parseYaml(block.code) as Record<string, unknown>), `README line ${block.line}`).not.toThrow();
            platformConfig = block;
            break;
          case "platform-serve":
            await runPlatforms(platformConfig, block, round);
            break;
          case "typescript":
            await runTypeScript(block, round);
            break;
          case "serve":
            await runServe(
              block,
              blocks.filter((b) => b.section === block.section && classify(b) === "chat-client"),
              round,
            );
            break;
          case "gateway-config":
            expect(() => parseServeConfig(parseYaml(block.code) as Record<string, unknown>), `README line ${block.line}`).not.toThrow();
            break;
          case "api-config":
            parseServeConfig(parseYaml(block.code) as Record<string, unknown>);
            mkdirSync(home, { recursive: true });
            writeFileSync(join(home, "config.yaml"), block.code);
            break;
          case "api-session":
            await runApiSession(block, round);
            break;
          default:
            break; // chat clients run with their serve block; the rest are not examples
        }
      }
    });
  }
});
