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
  if (!(error instanceof Error)) return new Error(redactText(String(error), secrets));
  const safe = new Error(redactText(error.message, secrets));
  safe.name = error.name;
  safe.stack = error.stack === undefined ? undefined : redactText(error.stack, secrets);
  const fields = error as unknown as Record<string, unknown>;
  for (const key of ["code", "error_code", "description", "method"]) {
    const value = fields[key];
    if (typeof value === "string" || typeof value === "number") (safe as unknown as Record<string, unknown>)[key] = typeof value === "string" ? redactText(value, secrets) : value;
  }
  if (error.cause !== undefined) safe.cause = redactError(error.cause, secrets);
  return safe;
}
