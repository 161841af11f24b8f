/**
 * How a chat adapter reports what went wrong on its platform, written once
 * ({@link PlatformFailures}): every error it logs has its secrets removed ({@link redactError}),
 * every failed call it throws is a {@link PlatformError} with that safe error as `cause` and the
 * platform's own code, and a failed start says why in one sentence.
 *
 * @module
 */
import { PlatformError } from "../../store/index.js";
import { redactError } from "./secret-redaction.js";

/** Options of {@link PlatformFailures}. */
export interface PlatformFailuresOptions {
  /** The platform's own code of a failure (Telegram's `error_code`, Slack's `data.error`, a Graph code), when it has one. */
  codeOf?(error: unknown): string | number | null | undefined;
}

/**
 * The error helpers of one adapter.
 *
 * @example
 * ```ts
 * const failures = new PlatformFailures("telegram", [token], { codeOf: (e) => (e as { error_code?: number }).error_code });
 * log.warn({ err: failures.safe(error) }, "telegram: setMyCommands failed");
 * throw failures.failure(error);
 * ```
 */
export class PlatformFailures {
  readonly #platform: string;
  readonly #secrets: readonly string[];
  readonly #codeOf: (error: unknown) => string | number | null | undefined;

  /** @param secrets the tokens that must never be logged or thrown (empty strings are skipped). */
  constructor(platform: string, secrets: readonly string[], options: PlatformFailuresOptions = {}) {
    this.#platform = platform;
    this.#secrets = secrets.filter((s) => s !== "");
    this.#codeOf = options.codeOf ?? (() => null);
  }

  /** `error` safe to log: secrets replaced, the platform's code kept (see {@link redactError}). */
  safe(error: unknown): Error {
    return redactError(error, this.#secrets);
  }

  /** The platform's code of `error` (`null` when it has none). */
  codeOf(error: unknown): string | number | null {
    const code = this.#codeOf(error);
    return typeof code === "string" || typeof code === "number" ? code : null;
  }

  /**
   * A failed platform call as the adapter throws it: a {@link PlatformError} with the safe
   * error's message and code. A plain `PlatformError` the adapter threw itself is passed
   * through (a subclass, e.g. an API client's error, is wrapped like any other).
   */
  failure(error: unknown): PlatformError {
    if (error instanceof PlatformError && Object.getPrototypeOf(error) === PlatformError.prototype) return error;
    const safe = this.safe(error);
    return new PlatformError(this.#platform, safe.message, { platformCode: this.codeOf(error), cause: safe });
  }

  /** A failed start: `<platform>: <why>`, with the safe error as `cause`. */
  connectError(why: string, error: unknown): PlatformError {
    return new PlatformError(this.#platform, `${this.#platform}: ${why}`, { platformCode: this.codeOf(error), cause: this.safe(error) });
  }
}
