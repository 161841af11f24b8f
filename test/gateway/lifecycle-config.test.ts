import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfigPath, parseLifecycleConfig, readConfigFile } from "../../src/gateway/lifecycle-config.js";
import { InvalidInputError, NotFoundError } from "../../src/store/errors.js";

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "tl-cfg-")), "config.yaml");
  writeFileSync(path, text);
  return path;
}

describe("lifecycle config", () => {
  it("defaults: per-user groups, shared threads, no automatic reset, 3600 s resume window, cap 32", () => {
    const config = parseLifecycleConfig({});
    expect(config).toMatchObject({
      keySettings: { groupSessionsPerUser: true, threadSessionsPerUser: false },
      resumeFreshnessSeconds: 3600,
      sessionStoreMaxAgeDays: 0,
      expiryIntervalSeconds: 300,
      maxQueueDepth: 32,
      redactPii: false,
    });
    expect(config.reset.default.mode).toBe("none");
    expect(config.reset.notifyExclude).toEqual(["api-server", "webhook"]);
  });

  it("reads a YAML file with per-platform and per-type policies", async () => {
    const path = file(`
sessions:
  groupSessionsPerUser: false
  resumeFreshnessSeconds: 0
reset:
  mode: idle
  idleMinutes: 120
  platforms:
    telegram: { mode: daily, atHour: 5 }
  types:
    group: { idleMinutes: 30 }
provider:
  model: anything   # other sections belong to the running gateway
`);
    const config = parseLifecycleConfig(await readConfigFile(path));
    expect(config.keySettings.groupSessionsPerUser).toBe(false);
    expect(config.resumeFreshnessSeconds).toBe(0);
    expect(config.reset.platforms["telegram"]).toEqual({ mode: "daily", idleMinutes: 120, atHour: 5 });
    expect(config.reset.types.group).toEqual({ mode: "idle", idleMinutes: 30, atHour: 4 });
  });

  it("every problem of the sessions and reset sections in one error, a top-level reset problem not hiding a platform's", () => {
    let message = "";
    try {
      parseLifecycleConfig({ sessions: { maxQueueDepth: 0 }, reset: { atHour: 30, platforms: { telegram: { idleMinutes: 0 } } } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("sessions.maxQueueDepth: must be a whole number from 1 to 10,000 (got 0)");
    expect(message).toContain("reset.atHour: must be a whole hour from 0 to 23 (got 30)");
    expect(message).toContain("reset.platforms.telegram.idleMinutes: must be a whole number of minutes greater than 0 (got 0)");
  });

  it("errors name the path and the fix", async () => {
    expect(() => parseLifecycleConfig({ sessions: { maxQueueDepth: 0 } })).toThrow(
      /sessions\.maxQueueDepth: must be a whole number from 1 to 10,000 \(got 0\)/,
    );
    expect(() => parseLifecycleConfig({ sessions: { groupSesionsPerUser: true } })).toThrow(/unknown setting\(s\) "groupSesionsPerUser"/);
    expect(() => parseLifecycleConfig({ reset: { platforms: { telegram: { atHour: 25 } } } })).toThrow(
      /reset\.platforms\.telegram\.atHour: must be a whole hour from 0 to 23 \(got 25\)/,
    );
    expect(() => parseLifecycleConfig({ reset: { types: { group: { idleMinutes: 0 } } } })).toThrow(/reset\.types\.group\.idleMinutes/);
    await expect(readConfigFile(file("reset:\n  mode: [unclosed\n"))).rejects.toThrow(/not valid YAML at line \d+/);
    await expect(readConfigFile(file("- a list\n"))).rejects.toBeInstanceOf(InvalidInputError);
    await expect(readConfigFile("/nonexistent/config.yaml")).rejects.toBeInstanceOf(NotFoundError);
    expect(await readConfigFile(file(""))).toEqual({});
    expect(defaultConfigPath()).toMatch(/config\.yaml$/);
  });
});
