import { describe, expect, it } from "vitest";
import { configFileDocument, parseServeConfig, suggestConfigKeys } from "../../src/serve/index.js";

describe("hermes-style (snake_case) config keys", () => {
  it("a top-level group_sessions_per_user is refused, pointing at sessions.groupSessionsPerUser", () => {
    expect(() => parseServeConfig({ group_sessions_per_user: false })).toThrow(
      /group_sessions_per_user: unknown key, did you mean "sessions\.groupSessionsPerUser"\?/u,
    );
    expect(() => parseServeConfig({ thread_sessions_per_user: true })).toThrow(/did you mean "sessions\.threadSessionsPerUser"\?/u);
  });

  it("session_reset.mode / idle_minutes / at_hour point at reset.mode / reset.idleMinutes / reset.atHour", () => {
    let message = "";
    try {
      parseServeConfig({ session_reset: { mode: "idle", idle_minutes: 120, at_hour: 5 } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/session_reset\.mode: unknown key, did you mean "reset\.mode"\?/u);
    expect(message).toMatch(/session_reset\.idle_minutes: unknown key, did you mean "reset\.idleMinutes"\?/u);
    expect(message).toMatch(/session_reset\.at_hour: unknown key, did you mean "reset\.atHour"\?/u);
  });

  it("snake_case inside the right section, in records and lists, is matched generically", () => {
    expect(() => parseServeConfig({ sessions: { max_queue_depth: 5 } })).toThrow(
      /sessions\.max_queue_depth: unknown key, did you mean "sessions\.maxQueueDepth"\?/u,
    );
    expect(() => parseServeConfig({ reset: { platforms: { telegram: { idle_minutes: 30 } } } })).toThrow(
      /did you mean "reset\.platforms\.telegram\.idleMinutes"\?/u,
    );
    expect(() => parseServeConfig({ gateway: { drain_timeout_seconds: 5 } })).toThrow(/did you mean "gateway\.drainTimeoutSeconds"\?/u);
    expect(() => parseServeConfig({ api: { keys: [{ key: "admin-key-0123456789", user_id: "alice" }] } })).toThrow(
      /api\.keys\.0\.user_id: unknown key, did you mean "api\.keys\.0\.userId"\?/u,
    );
    expect(() => parseServeConfig({ "auto-prune": { "retention-days": 3 } })).toThrow(/did you mean "autoPrune\.retentionDays"\?/u);
    // A camelCase key in the wrong section is pointed at its section.
    expect(() => parseServeConfig({ redactPii: true })).toThrow(/redactPii: unknown key, did you mean "sessions\.redactPii"\?/u);
  });

  it("keys with no close match keep the list of allowed keys", () => {
    expect(() => parseServeConfig({ reset_triggers: ["reset"] })).toThrow(/config: unknown key\(s\) "reset_triggers"; allowed: /u);
    expect(() => parseServeConfig({ gateway: { prot: 1 } })).toThrow(/gateway: unknown key\(s\) "prot"; allowed: host, port/u);
  });
});

describe("parseServeConfig reports every problem at once", () => {
  it("a misplaced key, a wrong value, a lifecycle problem, a reset platform problem and a cross-field problem in one error", () => {
    let message = "";
    try {
      parseServeConfig({
        sessions: { retention_days: 30, maxQueueDepth: 0 },
        gateway: { port: 99999 },
        reset: { mode: "weekly", platforms: { telegram: { atHour: 25 } } },
        api: { prefix: "/ui" },
        compression: { enabled: true, protect_last_n: 10 },
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split("; allowed").length).toBe(1); // no list of allowed keys: every key here has a better message
    for (const part of [
      'sessions.retention_days: unknown key, did you mean "autoPrune.retentionDays"?',
      'compression.protect_last_n: unknown key, did you mean "compression.protectLastN"? (hermes-agent\'s name)',
      "gateway.port: must be a port number from 0 to 65535 (got 99999)",
      "sessions.maxQueueDepth: must be a whole number from 1 to 10,000 (got 0)",
      "reset.mode: must be one of none, idle, daily, both",
      "reset.platforms.telegram.atHour: must be a whole hour from 0 to 23 (got 25)",
      "api.prefix: /ui is where the web page is served",
    ]) {
      expect(message).toContain(part);
    }
  });

  it("a hermes-agent key is named as such; one with no equivalent says so instead of a generic unknown key", () => {
    expect(() => parseServeConfig({ sessions: { auto_prune: true } })).toThrow(
      /^sessions\.auto_prune: unknown key, did you mean "autoPrune\.enabled"\? \(hermes-agent's name\)$/u,
    );
    expect(() => parseServeConfig({ sessions: { vacuum_after_prune: false } })).toThrow(/did you mean "autoPrune\.vacuum"\?/u);
    expect(() => parseServeConfig({ session_reset: { notify: false, notify_exclude_platforms: ["webhook"] } })).toThrow(
      /^session_reset\.notify: unknown key, did you mean "reset\.notify"\? \(hermes-agent's name\); session_reset\.notify_exclude_platforms: unknown key, did you mean "reset\.notifyExclude"\? \(hermes-agent's name\)$/u,
    );
    expect(() => parseServeConfig({ session_reset: { bg_process_max_age_hours: 24 } })).toThrow(
      /^session_reset\.bg_process_max_age_hours: hermes-agent's background processes have no equivalent in Threadline/u,
    );
    expect(() => parseServeConfig({ compression: { threshold: 0.5, summary_model: "m" } })).toThrow(
      /^compression\.summary_model: unknown key, did you mean "compression\.model"\? \(hermes-agent's name\)$/u,
    );
    expect(() => parseServeConfig({ compression: { abort_on_summary_failure: true } })).toThrow(
      /^compression\.abort_on_summary_failure: unknown key, did you mean "compression\.abortOnSummaryFailure"\? \(hermes-agent's name\)$/u,
    );
    expect(() => parseServeConfig({ compression: { threshold: 1.5 } })).toThrow(
      /^compression\.threshold: must be a share of the context window above 0 and at most 1/u,
    );
    expect(() => parseServeConfig({ compression: { protectLastN: 0 } })).toThrow(
      /^compression\.protectLastN: must be a whole number of messages from 1 to 1,000 \(got 0\)$/u,
    );
    expect(parseServeConfig({ compression: { threshold: 0.6, targetRatio: 0.3 } }).compression).toMatchObject({
      threshold: 0.6,
      targetRatio: 0.3,
      protectLastN: 20,
      enabled: true,
    });
  });
});

describe("configFileDocument (what config show prints)", () => {
  it("has the sections a user writes, no lifecycle section, no nulls, and parses back to the same config", () => {
    const source = {
      database: "/data/state.db",
      gateway: { port: 9000, replicaId: "gw-1" },
      provider: { baseUrl: "https://api.example.com/v1", model: "m" },
      homeChannels: { telegram: { chatId: "-100123" } },
      sessions: { groupSessionsPerUser: false, maxQueueDepth: 8 },
      reset: { mode: "idle", idleMinutes: 120, platforms: { telegram: { mode: "daily", atHour: 5 } }, types: { dm: { mode: "none" } } },
      api: {
        keys: [
          { key: "admin-key-0123456789", name: "ops" },
          { key: "alice-key-0123456789", userId: "alice" },
        ],
      },
    };
    const config = parseServeConfig(source);
    const file = configFileDocument(config);
    expect(Object.keys(file)).not.toContain("lifecycle");
    expect(file).toHaveProperty("sessions");
    expect(file).toHaveProperty("reset");
    expect(JSON.stringify(file)).not.toContain("null");
    expect(parseServeConfig(file)).toEqual(config);
    // Without a provider and a database, those sections are left out rather than null.
    const defaults = configFileDocument(parseServeConfig({}));
    expect(defaults).not.toHaveProperty("provider");
    expect(defaults).not.toHaveProperty("database");
    expect(JSON.stringify(defaults)).not.toContain("null");
    expect(parseServeConfig(defaults)).toEqual(parseServeConfig({}));
  });
});

describe("suggestConfigKeys", () => {
  it("relocates only into a section the written one plausibly means", () => {
    expect(suggestConfigKeys(["session_reset", "mode"])).toEqual(["reset.mode"]);
    expect(suggestConfigKeys(["gatway", "port"])).toEqual(["gateway.port"]);
    // Other gateways' sections with no counterpart get no (misleading) suggestion.
    expect(suggestConfigKeys(["platforms", "telegram", "enabled"])).toEqual([]);
    expect(suggestConfigKeys(["compression", "protect_first_n"])).toEqual(["compression.protectFirstN"]);
    // A top-level key that several sections hold: each is offered.
    expect(suggestConfigKeys(["port"])).toEqual(expect.arrayContaining(["gateway.port", "api.port"]));
    expect(() => parseServeConfig({ port: 9000 })).toThrow(/port: unknown key, did you mean "(gateway|api)\.port" or "(gateway|api)\.port"\?/u);
  });
});
