/**
 * The `compression` settings: when a session is compressed into a continuation session, and
 * how much of it stays verbatim. Names and defaults follow hermes-agent's `compression`
 * section (`threshold`, `protect_first_n`, `protect_last_n`, `target_ratio`,
 * `abort_on_summary_failure`, its hard limit of 5,000 messages).
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";

/** Automatic compression settings, defaults resolved (see {@link resolveCompressionSettings}). */
export interface CompressionSettings {
  /** Compress automatically after a turn (default true). `/compress` works either way. */
  enabled: boolean;
  /**
   * Share of the model's context window the session's whole conversation may take before it
   * is compressed (0 < t ≤ 1). `null` (default): 0.50, or 0.75 for windows under 512K tokens,
   * as hermes-agent does (see {@link effectiveThreshold}).
   */
  threshold: number | null;
  /** Messages at the start kept verbatim (hermes `protect_first_n`, default 3). */
  protectFirstN: number;
  /** Recent messages kept verbatim at least (hermes `protect_last_n`, default 20). */
  protectLastN: number;
  /** The kept tail is about this share of the threshold in tokens (hermes `target_ratio`, default 0.20). */
  targetRatio: number;
  /**
   * A summary that still fails after its retries: `false` (default) compresses anyway with the
   * middle dropped behind a placeholder; `true` freezes the session until `/compress` or `/new`.
   */
  abortOnSummaryFailure: boolean;
  /** A session with more messages than this is compressed whatever its size (default 5,000). */
  hardMessageLimit: number;
  /** The model that writes summaries (`null`: the session's own model). */
  model: string | null;
  /** Tell the chat in one line when its session was compressed (default true). */
  notify: boolean;
}

/** hermes-agent's defaults. */
export const DEFAULT_COMPRESSION_SETTINGS: Readonly<CompressionSettings> = Object.freeze({
  enabled: true,
  threshold: null,
  protectFirstN: 3,
  protectLastN: 20,
  targetRatio: 0.2,
  abortOnSummaryFailure: false,
  hardMessageLimit: 5000,
  model: null,
  notify: true,
});

/** Windows below this many tokens get the higher default threshold (0.75). */
export const LARGE_WINDOW_TOKENS = 512_000;

/** What each `compression.*` key must be (the config file's error messages). */
export const COMPRESSION_EXPECTED: Readonly<Record<string, string>> = Object.freeze({
  compression:
    "a mapping of compression settings (enabled, threshold, protectFirstN, protectLastN, targetRatio, abortOnSummaryFailure, hardMessageLimit, model, notify)",
  "compression.enabled": "true or false",
  "compression.threshold": "a share of the context window above 0 and at most 1, such as 0.5 (default: 0.5, or 0.75 for windows under 512K tokens)",
  "compression.protectFirstN": "a whole number of messages from 0 to 1,000",
  "compression.protectLastN": "a whole number of messages from 1 to 1,000",
  "compression.targetRatio": "a share of the threshold above 0 and below 1, such as 0.2",
  "compression.abortOnSummaryFailure": "true or false",
  "compression.hardMessageLimit": "a whole number of messages from 10 to 1,000,000",
  "compression.model": "a model name for summaries (default: the session's model)",
  "compression.notify": "true or false",
});

/** The keys of the `compression` section. */
export const COMPRESSION_KEYS: readonly string[] = Object.freeze(Object.keys(DEFAULT_COMPRESSION_SETTINGS));

function problem(key: string, value: unknown): InvalidInputError {
  return new InvalidInputError(`compression.${key}: must be ${COMPRESSION_EXPECTED[`compression.${key}`]} (got ${JSON.stringify(value)})`, {
    field: `compression.${key}`,
  });
}

/**
 * Validates a raw `compression` section (any keys left out take their defaults) and returns
 * the settings. Throws {@link InvalidInputError} naming the key, what it must be and what was
 * given.
 *
 * @example
 * resolveCompressionSettings({ threshold: 0.6, protectLastN: 10 }).protectLastN; // 10
 */
export function resolveCompressionSettings(raw: unknown = {}): CompressionSettings {
  if (raw === undefined || raw === null) return { ...DEFAULT_COMPRESSION_SETTINGS };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new InvalidInputError(`compression: must be ${COMPRESSION_EXPECTED["compression"]} (got ${JSON.stringify(raw)})`, { field: "compression" });
  }
  const doc = raw as Record<string, unknown>;
  for (const key of Object.keys(doc)) {
    if (!COMPRESSION_KEYS.includes(key)) {
      throw new InvalidInputError(`compression: unknown key "${key}"; allowed: ${COMPRESSION_KEYS.join(", ")}`, { field: `compression.${key}` });
    }
  }
  const out: CompressionSettings = { ...DEFAULT_COMPRESSION_SETTINGS };
  const bool = (key: "enabled" | "abortOnSummaryFailure" | "notify"): void => {
    const v = doc[key];
    if (v === undefined) return;
    if (typeof v !== "boolean") throw problem(key, v);
    out[key] = v;
  };
  const whole = (key: "protectFirstN" | "protectLastN" | "hardMessageLimit", min: number, max: number): void => {
    const v = doc[key];
    if (v === undefined) return;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) throw problem(key, v);
    out[key] = v;
  };
  bool("enabled");
  bool("abortOnSummaryFailure");
  bool("notify");
  whole("protectFirstN", 0, 1000);
  whole("protectLastN", 1, 1000);
  whole("hardMessageLimit", 10, 1_000_000);
  const threshold = doc["threshold"];
  if (threshold !== undefined && threshold !== null) {
    if (typeof threshold !== "number" || !Number.isFinite(threshold) || threshold <= 0 || threshold > 1) throw problem("threshold", threshold);
    out.threshold = threshold;
  }
  const ratio = doc["targetRatio"];
  if (ratio !== undefined) {
    if (typeof ratio !== "number" || !Number.isFinite(ratio) || ratio <= 0 || ratio >= 1) throw problem("targetRatio", ratio);
    out.targetRatio = ratio;
  }
  const model = doc["model"];
  if (model !== undefined && model !== null) {
    if (typeof model !== "string" || model.trim() === "" || model.length > 200) throw problem("model", model);
    out.model = model.trim();
  }
  return out;
}

/**
 * The threshold in force for a context window: the configured one, else hermes-agent's
 * default (0.50, raised to 0.75 for windows under 512K tokens).
 *
 * @example
 * effectiveThreshold(DEFAULT_COMPRESSION_SETTINGS, 128_000); // 0.75
 * effectiveThreshold(DEFAULT_COMPRESSION_SETTINGS, 1_000_000); // 0.5
 */
export function effectiveThreshold(settings: Pick<CompressionSettings, "threshold">, windowTokens: number): number {
  if (settings.threshold !== null) return settings.threshold;
  return windowTokens < LARGE_WINDOW_TOKENS ? 0.75 : 0.5;
}

/** The threshold in tokens for a context window (at least 1). */
export function thresholdTokens(settings: Pick<CompressionSettings, "threshold">, windowTokens: number): number {
  return Math.max(1, Math.floor(effectiveThreshold(settings, windowTokens) * windowTokens));
}
