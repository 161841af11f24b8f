import { describe, expect, it } from "vitest";
import {
  dailyBoundary,
  DEFAULT_RESET_POLICY,
  evaluateReset,
  formatInactivity,
  parseResetConfig,
  resetModelNotice,
  resetUserNotice,
  resolveResetPolicy,
  shouldNotifyUser,
  type ResetPolicy,
} from "../../src/gateway/reset-policy.js";
import { InvalidInputError } from "../../src/store/errors.js";

/** Local time → epoch seconds (works in any TZ). */
function at(y: number, m: number, d: number, h: number, min = 0, s = 0): number {
  return new Date(y, m - 1, d, h, min, s).getTime() / 1000;
}

const idle60: ResetPolicy = { mode: "idle", idleMinutes: 60, atHour: 4 };
const daily4: ResetPolicy = { mode: "daily", idleMinutes: 1440, atHour: 4 };

describe("evaluateReset: idle", () => {
  const t0 = at(2025, 3, 10, 12);
  it("does not fire at 59 minutes", () => {
    expect(evaluateReset(idle60, t0, t0 + 59 * 60)).toEqual({ reset: false });
  });
  it("does not fire at exactly 60 minutes", () => {
    expect(evaluateReset(idle60, t0, t0 + 3600)).toEqual({ reset: false });
  });
  it("fires just past 60 minutes", () => {
    expect(evaluateReset(idle60, t0, t0 + 3600.001)).toMatchObject({ reset: true, reason: "idle" });
  });
  it("fires at 61 minutes with the inactivity", () => {
    expect(evaluateReset(idle60, t0, t0 + 61 * 60)).toEqual({ reset: true, reason: "idle", inactiveSeconds: 3660 });
  });
  it("ignores the daily hour", () => {
    expect(evaluateReset(idle60, at(2025, 3, 10, 3, 59), at(2025, 3, 10, 4, 30))).toEqual({ reset: false });
  });
  it("never fires for an update in the future", () => {
    expect(evaluateReset({ ...idle60, mode: "both" }, t0 + 100, t0)).toEqual({ reset: false });
  });
});

describe("evaluateReset: daily", () => {
  const updated = at(2025, 3, 1, 23, 30);
  it("does not fire across midnight before the hour (23:30 → 03:59)", () => {
    expect(evaluateReset(daily4, updated, at(2025, 3, 2, 3, 59))).toEqual({ reset: false });
    expect(evaluateReset(daily4, updated, at(2025, 3, 2, 3, 59, 59))).toEqual({ reset: false });
  });
  it("fires at the hour (23:30 → 04:00)", () => {
    expect(evaluateReset(daily4, updated, at(2025, 3, 2, 4))).toEqual({
      reset: true,
      reason: "daily",
      inactiveSeconds: at(2025, 3, 2, 4) - updated,
    });
  });
  it("treats an update exactly at the hour as after the boundary", () => {
    expect(evaluateReset(daily4, at(2025, 3, 2, 4), at(2025, 3, 2, 4, 1))).toEqual({ reset: false });
    expect(evaluateReset(daily4, at(2025, 3, 2, 4), at(2025, 3, 3, 3, 59))).toEqual({ reset: false });
    expect(evaluateReset(daily4, at(2025, 3, 2, 4), at(2025, 3, 3, 4))).toMatchObject({ reset: true, reason: "daily" });
  });
  it("fires for an update one second before the hour", () => {
    expect(evaluateReset(daily4, at(2025, 3, 2, 3, 59, 59), at(2025, 3, 2, 4, 0, 1))).toMatchObject({ reset: true });
  });
  it("uses yesterday's boundary before the hour", () => {
    expect(dailyBoundary(at(2025, 3, 2, 3), 4)).toBe(at(2025, 3, 1, 4));
    expect(dailyBoundary(at(2025, 3, 2, 4), 4)).toBe(at(2025, 3, 2, 4));
    expect(dailyBoundary(at(2025, 3, 2, 23, 59), 0)).toBe(at(2025, 3, 2, 0));
  });
  it("handles DST transition days (boundary is the local hour, not now − 86400)", () => {
    // Whatever the TZ, the boundary of each day of spring/autumn is that day's local 04:00.
    for (const [m, d] of [
      [3, 9],
      [3, 10],
      [3, 30],
      [3, 31],
      [10, 26],
      [10, 27],
      [11, 2],
      [11, 3],
    ] as const) {
      const today = new Date(dailyBoundary(at(2025, m, d, 12), 4) * 1000);
      expect([today.getDate(), today.getHours(), today.getMinutes()]).toEqual([d, 4, 0]);
      const yesterday = new Date(dailyBoundary(at(2025, m, d, 3), 4) * 1000);
      expect([yesterday.getDate(), yesterday.getHours(), yesterday.getMinutes()]).toEqual([d - 1, 4, 0]);
    }
  });
});

describe("evaluateReset: both and none", () => {
  const both: ResetPolicy = { mode: "both", idleMinutes: 60, atHour: 4 };
  it("checks idle first", () => {
    expect(evaluateReset(both, at(2025, 3, 1, 23), at(2025, 3, 2, 5))).toMatchObject({ reset: true, reason: "idle" });
  });
  it("fires daily when not idle long enough", () => {
    expect(evaluateReset(both, at(2025, 3, 2, 3, 30), at(2025, 3, 2, 4, 10))).toEqual({
      reset: true,
      reason: "daily",
      inactiveSeconds: 40 * 60,
    });
  });
  it("does not fire when neither does", () => {
    expect(evaluateReset(both, at(2025, 3, 2, 4, 30), at(2025, 3, 2, 5))).toEqual({ reset: false });
  });
  it("none never fires", () => {
    expect(evaluateReset(DEFAULT_RESET_POLICY, 0, at(2030, 1, 1, 12))).toEqual({ reset: false });
  });
  it("rejects non-finite times", () => {
    expect(() => evaluateReset(both, Number.NaN, 0)).toThrow(InvalidInputError);
  });
});

describe("parseResetConfig", () => {
  it("gives defaults for nothing", () => {
    for (const raw of [undefined, null, {}]) {
      expect(parseResetConfig(raw)).toEqual({
        default: { mode: "none", idleMinutes: 1440, atHour: 4 },
        platforms: {},
        types: {},
        notify: true,
        notifyExclude: ["api-server", "webhook"],
      });
    }
  });

  it("resolves overrides from the top-level policy", () => {
    const config = parseResetConfig({
      mode: "idle",
      idleMinutes: 120,
      atHour: 6,
      notify: false,
      notifyExclude: ["cron"],
      platforms: { telegram: { mode: "daily", atHour: 5 }, slack: {}, "my-app": null },
      types: { group: { idleMinutes: 30 }, dm: { mode: "none" } },
    });
    expect(config.default).toEqual({ mode: "idle", idleMinutes: 120, atHour: 6 });
    expect(config.platforms).toEqual({
      telegram: { mode: "daily", idleMinutes: 120, atHour: 5 },
      slack: { mode: "idle", idleMinutes: 120, atHour: 6 },
      "my-app": { mode: "idle", idleMinutes: 120, atHour: 6 },
    });
    expect(config.types).toEqual({
      group: { mode: "idle", idleMinutes: 30, atHour: 6 },
      dm: { mode: "none", idleMinutes: 120, atHour: 6 },
    });
    expect(config.notify).toBe(false);
    expect(config.notifyExclude).toEqual(["cron"]);
  });

  function errorOf(raw: unknown): InvalidInputError {
    try {
      parseResetConfig(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
      return error as InvalidInputError;
    }
    throw new Error("expected parseResetConfig to throw");
  }

  it.each<[string, unknown, string]>([
    ["top mode", { mode: "weekly" }, 'reset.mode: must be one of none, idle, daily, both (got "weekly")'],
    ["top idleMinutes 0", { idleMinutes: 0 }, "reset.idleMinutes: must be a whole number of minutes greater than 0 (got 0)"],
    ["top idleMinutes fraction", { idleMinutes: 1.5 }, "reset.idleMinutes: must be a whole number of minutes greater than 0 (got 1.5)"],
    ["top idleMinutes string", { idleMinutes: "60" }, 'reset.idleMinutes: must be a whole number of minutes greater than 0 (got "60")'],
    ["top atHour 24", { atHour: 24 }, "reset.atHour: must be a whole hour from 0 to 23 (got 24)"],
    ["top atHour -1", { atHour: -1 }, "reset.atHour: must be a whole hour from 0 to 23 (got -1)"],
    ["notify", { notify: "yes" }, 'reset.notify: must be true or false (got "yes")'],
    ["notifyExclude", { notifyExclude: "webhook" }, 'reset.notifyExclude: must be a list of platform names, e.g. ["api-server", "webhook"] (got "webhook")'],
    ["notifyExclude item", { notifyExclude: ["cli", 3] }, "reset.notifyExclude[1]: must be a platform name (a string) (got 3)"],
    ["platform atHour", { platforms: { telegram: { atHour: 25 } } }, "reset.platforms.telegram.atHour: must be a whole hour from 0 to 23 (got 25)"],
    ["platform mode", { platforms: { slack: { mode: "hourly" } } }, 'reset.platforms.slack.mode: must be one of none, idle, daily, both (got "hourly")'],
    [
      "platform idleMinutes",
      { platforms: { discord: { idleMinutes: -5 } } },
      "reset.platforms.discord.idleMinutes: must be a whole number of minutes greater than 0 (got -5)",
    ],
    ["platform odd name", { platforms: { "my app": { atHour: 99 } } }, 'reset.platforms["my app"].atHour: must be a whole hour from 0 to 23 (got 99)'],
    [
      "platform not a mapping",
      { platforms: { telegram: "daily" } },
      'reset.platforms.telegram: must be a policy mapping ({ mode, idleMinutes, atHour }) or empty (got "daily")',
    ],
    [
      "platforms not a mapping",
      { platforms: ["telegram"] },
      'reset.platforms: must be a mapping from platform name to a policy ({ mode, idleMinutes, atHour }) (got ["telegram"])',
    ],
    ["type atHour", { types: { group: { atHour: 1.5 } } }, "reset.types.group.atHour: must be a whole hour from 0 to 23 (got 1.5)"],
    ["type mode", { types: { thread: { mode: "never" } } }, 'reset.types.thread.mode: must be one of none, idle, daily, both (got "never")'],
    [
      "types not a mapping",
      { types: 3 },
      "reset.types: must be a mapping from chat type (dm, group, channel, thread) to a policy ({ mode, idleMinutes, atHour }) (got 3)",
    ],
    [
      "unknown top key",
      { idle_minutes: 5 },
      'reset: unknown setting "idle_minutes"; allowed: mode, idleMinutes, atHour, notify, notifyExclude, platforms, types',
    ],
    [
      "unknown platform key",
      { platforms: { telegram: { atHours: 5 } } },
      'reset.platforms.telegram: unknown policy setting "atHours"; allowed: mode, idleMinutes, atHour',
    ],
    ["unknown type", { types: { room: {} } }, 'reset.types: unknown chat type "room"; allowed: dm, group, channel, thread'],
    ["unknown type key", { types: { dm: { notify: true } } }, 'reset.types.dm: unknown policy setting "notify"; allowed: mode, idleMinutes, atHour'],
    ["not a mapping", "daily", 'reset: must be a mapping of reset settings (mode, idleMinutes, atHour, notify, notifyExclude, platforms, types) (got "daily")'],
  ])("%s", (_name, raw, message) => {
    expect(errorOf(raw).message).toBe(message);
  });

  it("reports every problem at once, with the first path as the field", () => {
    const error = errorOf({ mode: "x", atHour: 30 });
    expect(error.message).toBe('reset.mode: must be one of none, idle, daily, both (got "x"); reset.atHour: must be a whole hour from 0 to 23 (got 30)');
    expect(error.field).toBe("reset.mode");
    expect(errorOf({ platforms: { a: { atHour: 30 }, b: { mode: "x" } } }).message).toBe(
      'reset.platforms.a.atHour: must be a whole hour from 0 to 23 (got 30); reset.platforms.b.mode: must be one of none, idle, daily, both (got "x")',
    );
  });

  it("validates and keeps platform names that are Object.prototype keys", () => {
    const config = parseResetConfig(JSON.parse('{"platforms": {"__proto__": {"mode": "idle"}, "constructor": {"mode": "daily"}}}'));
    expect(Object.getPrototypeOf(config.platforms)).toBe(Object.prototype);
    expect(resolveResetPolicy(config, "__proto__", "dm").mode).toBe("idle");
    expect(resolveResetPolicy(config, "constructor", "dm").mode).toBe("daily");
    expect(resolveResetPolicy(config, "toString", "dm").mode).toBe("none");
    expect(() => parseResetConfig(JSON.parse('{"platforms": {"__proto__": {"atHour": 30}}}'))).toThrow(
      "reset.platforms.__proto__.atHour: must be a whole hour from 0 to 23 (got 30)",
    );
  });
});

describe("resolveResetPolicy", () => {
  const config = parseResetConfig({
    mode: "idle",
    platforms: { telegram: { mode: "daily" } },
    types: { group: { mode: "both" }, dm: { mode: "none" } },
  });
  it("prefers the platform, then the type, then the default", () => {
    expect(resolveResetPolicy(config, "telegram", "group").mode).toBe("daily");
    expect(resolveResetPolicy(config, "discord", "group").mode).toBe("both");
    expect(resolveResetPolicy(config, "discord", "dm").mode).toBe("none");
    expect(resolveResetPolicy(config, "discord", "channel").mode).toBe("idle");
  });
});

describe("notices", () => {
  it.each([
    [0, "1m"],
    [59, "1m"],
    [60, "1m"],
    [2700, "45m"],
    [3599, "59m"],
    [3600, "1h"],
    [7300, "2h"],
    [86_399, "23h"],
    [86_400, "1d"],
    [270_000, "3d"],
    [-5, "1m"],
  ])("formatInactivity(%d) = %s", (seconds, text) => {
    expect(formatInactivity(seconds)).toBe(text);
  });

  it("tells the user what happened and how to go back", () => {
    expect(resetUserNotice("idle", 7200)).toBe("Session automatically reset (inactive for 2h). Previous conversation is saved; use /resume to go back to it.");
    expect(resetUserNotice("daily", 50_000)).toBe(
      "Session automatically reset (daily reset at 04:00). Previous conversation is saved; use /resume to go back to it.",
    );
    expect(resetUserNotice("daily", 50_000, { atHour: 23 })).toContain("daily reset at 23:00");
  });

  it("tells the model it is a new session", () => {
    const note = resetModelNotice("idle", 3 * 86_400);
    expect(note).toMatch(/new session/);
    expect(note).toMatch(/automatic reset/);
    expect(note).toContain("inactive for 3d");
    expect(resetModelNotice("daily", 10, { atHour: 0 })).toContain("daily reset at 00:00");
  });

  it("notifies only when on, with activity, and not excluded", () => {
    const config = parseResetConfig({});
    expect(shouldNotifyUser(config, "telegram", true)).toBe(true);
    expect(shouldNotifyUser(config, "telegram", false)).toBe(false);
    expect(shouldNotifyUser(config, "api-server", true)).toBe(false);
    expect(shouldNotifyUser(config, "webhook", true)).toBe(false);
    expect(shouldNotifyUser(parseResetConfig({ notify: false }), "telegram", true)).toBe(false);
    expect(shouldNotifyUser(parseResetConfig({ notifyExclude: [] }), "webhook", true)).toBe(true);
  });
});
