/**
 * Keeping platform tokens out of logs and errors. SDK errors can carry the request URL
 * (Telegram puts the bot token in every URL: `/bot<token>/sendMessage`) or headers; an
 * adapter passes every error it logs or rethrows through {@link redactError}.
 *
 * @module
 */

/** The replacement of a secret. */
export const REDACTED = "[redacted]";

/** `text` with every occurrence of every secret (of 6 characters or more) replaced. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 6) continue;
    out = out.split(secret).join(REDACTED);
    // URL-encoded forms (a `:` in a Telegram token becomes %3A).
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join(REDACTED);
  }
  return out;
}

/**
 * A plain `Error` safe to log: the message and stack of `error` (and of its `cause`
 * chain) with the secrets replaced; name and `code`/`error_code`/`description` kept.
 * Nothing else of the original (request objects, headers) is carried over.
 */
export function redactError(error: unknown, secrets: readonly string[]): Error {
  return cleanedError(error, (text) => redactText(text, secrets));
}

/**
 * A copy of a foreign error (an SDK's, a `fetch` failure) with `clean` applied to every text
 * of it: message, stack, `code`/`error_code`/`description`/`method` when they are strings, and
 * the same for its `cause` chain. The name is kept; nothing else of the original (request
 * objects, headers) is carried over. It is a plain `Error` on purpose: it describes what
 * another library threw, for a log line or as the `cause` of the `PlatformError` an
 * adapter throws, and is never raised as a Threadline error itself.
 *
 * @example
 * const safe = cleanedError(error, (text) => maskPhoneNumbers(text, ownNumber));
 */
export function cleanedError(error: unknown, clean: (text: string) => string): Error {
  if (!(error instanceof Error)) return new Error(clean(String(error)));
  const safe = new Error(clean(error.message));
  safe.name = error.name;
  safe.stack = error.stack === undefined ? undefined : clean(error.stack);
  const fields = error as unknown as Record<string, unknown>;
  for (const key of ["code", "error_code", "description", "method"]) {
    const value = fields[key];
    if (typeof value === "string" || typeof value === "number")
      (safe as unknown as Record<string, unknown>)[key] = typeof value === "string" ? clean(value) : value;
  }
  if (error.cause !== undefined) safe.cause = cleanedError(error.cause, clean);
  return safe;
}
