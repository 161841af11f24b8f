// `threadline config set|check` and `homeChannels.<platform>` (issue 26, point 11), run in
// process (runCli) on a temp THREADLINE_HOME: a platform Threadline does not know is refused,
// naming the closest one; the file is left as it was.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runInProcess, type RunResult } from "../cli-run.js";

function run(home: string, args: string[]): Promise<RunResult> {
  return runInProcess(args, { ...process.env, THREADLINE_HOME: home, NO_COLOR: "1", THREADLINE_CONFIG: "" });
}

describe("threadline config: home channel platforms", () => {
  it("set refuses a misspelt or unknown platform with the closest name and writes nothing; known ones are set", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-home-"));
    const path = join(home, "config.yaml");
    const typo = await run(home, ["config", "set", "homeChannels.telegarm.chatId", "12"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('homeChannels.telegarm: unknown platform "telegarm". Did you mean "telegram"?');
    const unknown = await run(home, ["config", "set", "homeChannels.nosuch.chatId", "12"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'homeChannels.nosuch: unknown platform "nosuch". Home channels can be on: telegram, discord, slack, whatsapp, matrix, signal, webhook.',
    );
    expect(existsSync(path)).toBe(false);
    expect((await run(home, ["config", "set", "homeChannels.telegram.chatId", "12"])).code).toBe(0);
    expect((await run(home, ["config", "set", "homeChannels.telegram.chatType", "group"])).code).toBe(0);
    expect(readFileSync(path, "utf8")).toMatch(/chatType: group/);
  });

  it("check reports a home channel on an unknown platform", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-cfg-home-"));
    writeFileSync(join(home, "config.yaml"), "homeChannels:\n  slak:\n    chatId: C1\n");
    const bad = await run(home, ["config", "check"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('homeChannels.slak: unknown platform "slak". Did you mean "slack"?');
  });
});
