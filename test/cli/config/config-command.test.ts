// `threadline config show | check | set`, run in process (runCli) on a temp THREADLINE_HOME.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runInProcess, type RunResult } from "../cli-run.js";

/** The environment of a run: THREADLINE_HOME = `home`, THREADLINE_CONFIG blank, no colour. */
function envFor(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, THREADLINE_HOME: home, NO_COLOR: "1", THREADLINE_CONFIG: "", ...extra };
}

function run(home: string, args: string[]): Promise<RunResult> {
  return runInProcess(args, envFor(home));
}

describe("threadline config", () => {
  it("show prints the effective config with defaults and masked secrets; --json parses", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    writeFileSync(
      join(home, "config.yaml"),
      "provider:\n  apiKey: sk-verysecretkey\n  model: m\napi:\n  keys:\n    - { key: alice-api-key-0123456789, userId: alice }\n",
    );
    const json = await run(home, ["config", "show", "--json"]);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.config.api.keys).toEqual([{ key: "ali…(masked key 1, 24 chars)", userId: "alice" }]);
    expect(json.stdout).not.toContain("alice-api-key-0123456789");
    expect(parsed.config.gateway.port).toBe(8787);
    expect(parsed.config.autoPrune).toEqual({ enabled: false, retentionDays: 90, vacuum: true, minIntervalHours: 24 });
    expect(json.stdout).not.toContain("sk-verysecretkey");
    const text = await run(home, ["config", "show"]);
    expect(text.stdout).toMatch(/port: 8787/);
  });

  it("check: valid exits 0; invalid exits 2 naming key, expected and got", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    expect((await run(home, ["config", "check"])).stdout).toMatch(/No config file .* defaults apply/);
    writeFileSync(join(home, "config.yaml"), "gateway:\n  port: 99999\nreset:\n  atHour: 30\n");
    const bad = await run(home, ["config", "check"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/gateway\.port: must be a port number from 0 to 65535 \(got 99999\)/);
    const json = await run(home, ["config", "check", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false });
  });

  it("set writes one key, keeps comments, keeps ids as strings, and refuses invalid values", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    const path = join(home, "config.yaml");
    writeFileSync(path, "# my gateway\ngateway:\n  port: 9000 # custom port\n");
    expect((await run(home, ["config", "set", "homeChannels.telegram.chatId", "-100123"])).code).toBe(0);
    const text = readFileSync(path, "utf8");
    expect(text).toContain("# my gateway");
    expect(text).toContain("# custom port");
    expect(text).toMatch(/chatId: "-100123"/);
    expect((await run(home, ["config", "set", "reset.mode", "idle"])).code).toBe(0);
    const refused = await run(home, ["config", "set", "gateway.port", "huge"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/gateway\.port/);
    expect(readFileSync(path, "utf8")).toMatch(/port: 9000/);
    expect((await run(home, ["config", "check"])).code).toBe(0);
  });

  it("check names what the Telegram adapter is missing; show never prints its token", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    writeFileSync(join(home, "config.yaml"), "adapters:\n  telegram:\n    mode: polling\n");
    const runWith = (args: string[], env: Record<string, string>): Promise<RunResult> => {
      const runEnv = envFor(home, env);
      if (env["TELEGRAM_BOT_TOKEN"] === undefined) delete runEnv["TELEGRAM_BOT_TOKEN"];
      return runInProcess(args, runEnv);
    };
    const missing = await runWith(["config", "check"], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/adapters\.telegram\.token: missing: set it in the config file or in the TELEGRAM_BOT_TOKEN environment variable/);
    const token = "987654:AAsecret-telegram-token";
    const ok = await runWith(["config", "check"], { TELEGRAM_BOT_TOKEN: token });
    expect(ok.code).toBe(0);
    const show = await runWith(["config", "show", "--json"], { TELEGRAM_BOT_TOKEN: token });
    expect(JSON.parse(show.stdout).config.adapters.telegram).toMatchObject({ token: `(set, ${token.length} chars)`, mode: "polling" });
    expect(show.stdout).not.toContain("AAsecret");
  });
});

describe("threadline config show / check round trip", () => {
  it("show prints a config file (no lifecycle:, no nulls, secrets masked) that check accepts", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    writeFileSync(
      join(home, "config.yaml"),
      [
        "provider:\n  apiKey: sk-verysecretkey\n  model: m",
        "adapters:\n  webhook:\n    enabled: true\n    secret: webhook-secret-0123456789",
        "api:\n  keys:\n    - { key: alice-api-key-0123456789, userId: alice }\n    - { key: alice-api-key-9876543210, userId: alice }",
        "sessions:\n  groupSessionsPerUser: false",
        "reset:\n  mode: idle\n  idleMinutes: 60",
        "",
      ].join("\n"),
    );
    const shown = await run(home, ["config", "show"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(/^lifecycle:/mu);
    expect(shown.stdout).not.toMatch(/\bnull\b/u);
    expect(shown.stdout).not.toContain("sk-verysecretkey");
    expect(shown.stdout).not.toContain("webhook-secret-0123456789");
    expect(shown.stdout).not.toContain("alice-api-key-0123456789");
    expect(shown.stdout).toMatch(/^sessions:\n {2}groupSessionsPerUser: false/mu);
    expect(shown.stdout).toMatch(/^reset:\n {2}mode: idle\n {2}idleMinutes: 60/mu);
    const copy = join(home, "shown.yaml");
    writeFileSync(copy, shown.stdout);
    const checked = await run(home, ["config", "check", "--config", copy]);
    expect(checked.stderr).toBe("");
    expect(checked.code).toBe(0);
    // The defaults alone are a valid file too.
    const empty = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    const defaults = await run(empty, ["config", "show"]);
    expect(defaults.stdout).not.toMatch(/\bnull\b|^lifecycle:/mu);
    writeFileSync(join(empty, "config.yaml"), defaults.stdout);
    expect((await run(empty, ["config", "check"])).code).toBe(0);
  });

  it("check and show with --config naming a missing file fail with exit 2, naming the path", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    const missing = join(home, "nope", "config.yaml");
    const check = await run(home, ["config", "check", "--config", missing]);
    expect(check.code).toBe(2);
    expect(check.stdout).toBe("");
    expect(check.stderr).toMatch(/^threadline: /u);
    expect(check.stderr).toContain(missing);
    const show = await run(home, ["config", "show", "--config", missing]);
    expect(show.code).toBe(2);
    expect(show.stderr).toContain(missing);
  });

  it("check refuses hermes-style snake_case keys, suggesting the camelCase path", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    writeFileSync(join(home, "config.yaml"), "group_sessions_per_user: false\nsession_reset:\n  mode: idle\n  idle_minutes: 30\n");
    const bad = await run(home, ["config", "check"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/group_sessions_per_user: unknown key, did you mean "sessions\.groupSessionsPerUser"\?/u);
    expect(bad.stderr).toMatch(/session_reset\.mode: unknown key, did you mean "reset\.mode"\?/u);
    expect(bad.stderr).toMatch(/session_reset\.idle_minutes: unknown key, did you mean "reset\.idleMinutes"\?/u);
  });
});

describe("threadline config check: hermes-agent keys and every problem at once", () => {
  it("maps each hermes-agent key to ours, says when there is none, and reports every problem of the file in one run", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-"));
    writeFileSync(
      join(home, "config.yaml"),
      [
        "sessions:",
        "  auto_prune: true",
        "  retention_days: 30",
        "  vacuum_after_prune: true",
        "  min_interval_hours: 12",
        "  maxQueueDepth: 0",
        "display:\n  resume_display: minimal",
        "group_sessions_per_user: false",
        "session_reset:\n  mode: idle\n  idle_minutes: 30",
        "compression:\n  enabled: true\n  threshold: 0.5\n  target_ratio: 0.3",
        "gateway:\n  port: 99999\n  prot: 1",
        "reset:\n  atHour: 30\n  platforms:\n    telegram:\n      idleMinutes: 0",
        "adapters:\n  webhook:\n    enabled: true\n  telegram:\n    mode: polling",
        "",
      ].join("\n"),
    );
    const env = envFor(home);
    delete env["TELEGRAM_BOT_TOKEN"];
    const bad = await runInProcess(["config", "check"], env);
    expect(bad.code).toBe(2);
    const lines = bad.stderr
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((l) => l.replace(/^ {2}- /u, ""));
    const expected = [
      /^sessions\.auto_prune: unknown key, did you mean "autoPrune\.enabled"\? \(hermes-agent's name\)$/u,
      /^sessions\.retention_days: unknown key, did you mean "autoPrune\.retentionDays"\? \(hermes-agent's name\)$/u,
      /^sessions\.vacuum_after_prune: unknown key, did you mean "autoPrune\.vacuum"\? \(hermes-agent's name\)$/u,
      /^sessions\.min_interval_hours: unknown key, did you mean "autoPrune\.minIntervalHours"\? \(hermes-agent's name\)$/u,
      /^display\.resume_display: unknown key, did you mean "display\.resumeDisplay"\? \(hermes-agent's name\)$/u,
      /^group_sessions_per_user: unknown key, did you mean "sessions\.groupSessionsPerUser"\? \(hermes-agent's name\)$/u,
      /^session_reset\.mode: unknown key, did you mean "reset\.mode"\? \(hermes-agent's name\)$/u,
      /^session_reset\.idle_minutes: unknown key, did you mean "reset\.idleMinutes"\? \(hermes-agent's name\)$/u,
      /^compression\.target_ratio: unknown key, did you mean "compression\.targetRatio"\? \(hermes-agent's name\)$/u,
      /^gateway: unknown key\(s\) "prot"; allowed: /u,
      /^gateway\.port: must be a port number from 0 to 65535 \(got 99999\)$/u,
      /^sessions\.maxQueueDepth: must be a whole number from 1 to 10,000 \(got 0\)$/u,
      /^reset\.atHour: must be a whole hour from 0 to 23 \(got 30\)$/u,
      /^reset\.platforms\.telegram\.idleMinutes: must be a whole number of minutes greater than 0 \(got 0\)$/u,
      /^adapters\.webhook\.secret: required when the webhook adapter is enabled/u,
      /^adapters\.telegram\.token: missing/u,
    ];
    for (const pattern of expected)
      expect(
        lines.filter((l) => pattern.test(l)),
        `${pattern} in\n${bad.stderr}`,
      ).toHaveLength(1);
    expect(lines).toHaveLength(expected.length);
    expect(bad.stderr).not.toMatch(/unknown setting/u);
    // --json lists the same problems, each whole (a problem holding "; " is not split).
    const json = JSON.parse((await runInProcess(["config", "check", "--json"], env)).stdout) as { valid: boolean; problems: string[] };
    expect(json.valid).toBe(false);
    expect(json.problems).toEqual(lines);
  });
});
