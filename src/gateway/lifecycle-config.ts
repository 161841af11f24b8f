/**
 * The lifecycle part of the gateway config file (`$THREADLINE_HOME/config.yaml`):
 * the `sessions` section (keys, resume window, queue, expiry, redaction) and the
 * `reset` section (policies per platform and chat type). Other sections belong to the
 * running gateway and are left alone here.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { InvalidInputError, NotFoundError, threadlineHome } from "../store/index.js";
import { parseResetConfig, resetConfigProblems, type ResetConfig } from "./reset-policy.js";
import type { KeySettings } from "./session-key.js";

/** Lifecycle settings with every default resolved. */
export interface LifecycleConfig {
  keySettings: Required<KeySettings>;
  reset: ResetConfig;
  /** A resume marker older than this starts a new session (0 = never stale). Default 3600. */
  resumeFreshnessSeconds: number;
  /** Routing entries idle this many days are pruned hourly (0 = never). Default 0. */
  sessionStoreMaxAgeDays: number;
  /** Seconds between expiry-watcher passes. Default 300. */
  expiryIntervalSeconds: number;
  /** Waiting messages per session before new ones are refused. Default 32. */
  maxQueueDepth: number;
  /** Hash user and chat ids in the model's context. Default false. */
  redactPii: boolean;
}

const sessionsSchema = z.strictObject({
  groupSessionsPerUser: z.boolean().optional(),
  threadSessionsPerUser: z.boolean().optional(),
  resumeFreshnessSeconds: z.number().min(0).optional(),
  sessionStoreMaxAgeDays: z.number().min(0).optional(),
  expiryIntervalSeconds: z.number().positive().optional(),
  maxQueueDepth: z.number().int().min(1).max(10_000).optional(),
  redactPii: z.boolean().optional(),
});

const HINTS: Record<string, string> = {
  groupSessionsPerUser: "true or false",
  threadSessionsPerUser: "true or false",
  resumeFreshnessSeconds: "a number of seconds ≥ 0 (0 = a resume marker never goes stale)",
  sessionStoreMaxAgeDays: "a number of days ≥ 0 (0 = never prune routing entries)",
  expiryIntervalSeconds: "a number of seconds > 0",
  maxQueueDepth: "a whole number from 1 to 10,000",
  redactPii: "true or false",
};

/** The default config file: `$THREADLINE_HOME/config.yaml` (`~/.threadline/config.yaml`), THREADLINE_HOME read from `env`. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(threadlineHome(env), "config.yaml");
}

/**
 * Reads a YAML (or JSON) config file into a plain object. A missing file is a
 * {@link NotFoundError}; a syntax error names the line and column.
 */
export async function readConfigFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new NotFoundError(`No config file at ${path}; create it or pass another path.`, { cause: error });
    }
    throw new InvalidInputError(`Cannot read the config file ${path}: ${(error as Error).message}.`, { cause: error });
  }
  const doc = parseDocument(text, { prettyErrors: true });
  const problem = doc.errors[0];
  if (problem !== undefined) {
    const where = problem.linePos?.[0];
    const at = where ? ` at line ${where.line}, column ${where.col}` : "";
    throw new InvalidInputError(`The config file ${path} is not valid YAML${at}: ${problem.message.split("\n")[0]}`, {
      field: "config",
    });
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidInputError(`The config file ${path} must hold a mapping of sections (sessions:, reset:, …).`, {
      field: "config",
    });
  }
  return value as Record<string, unknown>;
}

/** Every problem of the `sessions` section, each naming its key and the fix. */
function sessionsSectionProblems(raw: unknown): string[] {
  const parsed = sessionsSchema.safeParse(raw);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      return `sessions: unknown setting(s) ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}; allowed: ${Object.keys(HINTS).join(", ")}`;
    }
    const field = String(issue.path[0] ?? "");
    if (field === "") return "sessions: must be a mapping of settings";
    const got = JSON.stringify((raw as Record<string, unknown>)[field]);
    return `sessions.${field}: must be ${HINTS[field]} (got ${got})`;
  });
}

/**
 * Every problem of the lifecycle sections (`sessions`, `reset`) of a config document, all in
 * one list, as {@link parseLifecycleConfig} reports them; empty when it accepts them.
 */
export function lifecycleConfigProblems(doc: Record<string, unknown> = {}): string[] {
  return [...sessionsSectionProblems(doc["sessions"] ?? {}), ...resetConfigProblems(doc["reset"])];
}

/**
 * Validates the lifecycle sections of a config document and resolves defaults.
 * Every error names its path (`sessions.maxQueueDepth: …`, `reset.platforms.telegram.atHour: …`).
 *
 * @example
 * const config = parseLifecycleConfig({ sessions: { groupSessionsPerUser: false }, reset: { mode: "idle", idleMinutes: 120 } });
 * const store = new SessionRouter({ db, keySettings: config.keySettings, reset: config.reset,
 *   resumeFreshnessSeconds: config.resumeFreshnessSeconds });
 */
export function parseLifecycleConfig(doc: Record<string, unknown> = {}): LifecycleConfig {
  const sessionsProblems = sessionsSectionProblems(doc["sessions"] ?? {});
  const resetProblems = resetConfigProblems(doc["reset"]);
  if (sessionsProblems.length > 0 || resetProblems.length > 0) {
    throw new InvalidInputError([...sessionsProblems, ...resetProblems].join("; "), { field: sessionsProblems.length > 0 ? "sessions" : "reset" });
  }
  const s = sessionsSchema.parse(doc["sessions"] ?? {});
  return {
    keySettings: {
      groupSessionsPerUser: s.groupSessionsPerUser ?? true,
      threadSessionsPerUser: s.threadSessionsPerUser ?? false,
    },
    reset: parseResetConfig(doc["reset"]),
    resumeFreshnessSeconds: s.resumeFreshnessSeconds ?? 3600,
    sessionStoreMaxAgeDays: s.sessionStoreMaxAgeDays ?? 0,
    expiryIntervalSeconds: s.expiryIntervalSeconds ?? 300,
    maxQueueDepth: s.maxQueueDepth ?? 32,
    redactPii: s.redactPii ?? false,
  };
}
