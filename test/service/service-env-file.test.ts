/**
 * service.env: which variables go in (and the list checked against the adapters' own
 * `*_ENV` names, so a new platform token cannot be forgotten), how a value is written so that
 * both readers take it back unchanged (the real Node `--env-file`, and systemd's
 * EnvironmentFile= rules in systemd-reading.ts), and the merge with an existing file.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { envFileLine, isServiceVariable, mergeEnvFile, readEnvFile, serviceVariables } from "../../src/service/index.js";
import { parseEnvironmentFile } from "./systemd-reading.js";

const scratch = mkdtempSync(join(tmpdir(), "threadline-env-file-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Every `const X_ENV = "NAME"` in src/adapters/. */
function adapterEnvNames(dir = join(import.meta.dirname, "../../src/adapters")): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) names.push(...adapterEnvNames(path));
    else if (entry.endsWith(".ts")) for (const m of readFileSync(path, "utf8").matchAll(/_ENV\s*=\s*"([A-Z0-9_]+)"/gu)) names.push(m[1]!);
  }
  return names;
}

describe("which variables go into service.env", () => {
  it("every platform token variable an adapter reads is taken", () => {
    const names = adapterEnvNames();
    expect(names.length).toBeGreaterThanOrEqual(9);
    expect(names.filter((name) => !isServiceVariable(name))).toEqual([]);
  });

  it("THREADLINE_* and OPENAI_* are taken (but HOME and CONFIG, which the definition sets), others and blanks are not", () => {
    const env = {
      THREADLINE_MODEL: "m",
      THREADLINE_DB: "postgres://u:p@h/db",
      THREADLINE_HOME: "/h",
      THREADLINE_CONFIG: "/c.yaml",
      OPENAI_API_KEY: "sk-x",
      SLACK_APP_TOKEN: "xapp-1",
      PGPASSWORD: "pw",
      OPENAI_BASE_URL: "  ",
      HOME: "/root",
      PATH: "/bin",
      AWS_SECRET_ACCESS_KEY: "not ours",
    };
    expect(serviceVariables(env).map(([name]) => name)).toEqual(["OPENAI_API_KEY", "PGPASSWORD", "SLACK_APP_TOKEN", "THREADLINE_DB", "THREADLINE_MODEL"]);
  });
});

describe("a value both readers read back unchanged", () => {
  const values = ["plain-token_1.2:3/4@x", "sk-with spaces and #hash", 'double "quotes" and $HOME and \\back', "100% = yes; ok", "", "xoxb-1234-5678-abcdef"];

  it("Node's --env-file and systemd's EnvironmentFile= rules give every value back", () => {
    const file = join(scratch, "round-trip.env");
    const vars = values.map((value, i): [string, string] => [`THREADLINE_V${i}`, value]);
    writeFileSync(file, mergeEnvFile(null, vars).text);
    const node = spawnSync(process.execPath, [`--env-file=${file}`, "-e", "process.stdout.write(JSON.stringify(process.env))"], {
      encoding: "utf8",
      env: { PATH: process.env["PATH"] },
    });
    expect(node.status).toBe(0);
    const seenByNode = JSON.parse(node.stdout) as Record<string, string>;
    const seenBySystemd = parseEnvironmentFile(readFileSync(file, "utf8"));
    for (const [name, value] of vars) {
      expect(seenByNode[name], name).toBe(value);
      expect(seenBySystemd[name], name).toBe(value);
    }
  });

  it("a value neither could read back (a single quote, a line break) is refused, naming the variable but not the value", () => {
    for (const value of ["it's-secret", "two\nlines"]) {
      let message = "";
      try {
        envFileLine("SLACK_BOT_TOKEN", value);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^SLACK_BOT_TOKEN: /u);
      expect(message).not.toContain(value.slice(0, 6));
    }
  });
});

describe("merging into an existing service.env", () => {
  it("replaces the variables it writes in place, keeps every other line, drops duplicates, appends new ones", () => {
    const existing = ["# my notes", "CUSTOM_FLAG=1", "OPENAI_API_KEY=old", "export OTHER='x y'", "OPENAI_API_KEY=older", ""].join("\n");
    const merged = mergeEnvFile(existing, [
      ["OPENAI_API_KEY", "sk-new"],
      ["TELEGRAM_BOT_TOKEN", "1:abc"],
    ]);
    expect(merged.text).toBe(["# my notes", "CUSTOM_FLAG=1", "OPENAI_API_KEY=sk-new", "export OTHER='x y'", "TELEGRAM_BOT_TOKEN=1:abc", ""].join("\n"));
    expect(merged.kept).toEqual(["CUSTOM_FLAG", "OTHER"]);
    expect(merged.written).toEqual(["OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN"]);
  });

  it("reads back what it wrote, and the lines it kept (later lines win)", () => {
    const vars: Array<[string, string]> = [
      ["OPENAI_API_KEY", "sk with space"],
      ["THREADLINE_DB", "/mnt/db/state.db"],
    ];
    const text = mergeEnvFile('CUSTOM=1\nexport QUOTED="a b"\nCUSTOM=2\n', vars).text;
    expect(readEnvFile(text)).toEqual({ CUSTOM: "2", QUOTED: "a b", OPENAI_API_KEY: "sk with space", THREADLINE_DB: "/mnt/db/state.db" });
  });

  it("is idempotent: merging the same variables again gives the same text", () => {
    const once = mergeEnvFile(null, [["OPENAI_API_KEY", "sk 1"]]).text;
    expect(mergeEnvFile(once, [["OPENAI_API_KEY", "sk 1"]]).text).toBe(once);
    expect(once.startsWith("# The environment of the Threadline service")).toBe(true);
  });
});
