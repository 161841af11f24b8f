/**
 * What the gateway's log may hold about people and endpoints. Logs are shipped, kept and
 * read by more people than the chats are, so:
 *
 * - a session key that contains a phone number (WhatsApp and Signal keys end in the
 *   person's number) is logged as `keyHash`, the first 12 hex digits of its SHA-256 (as the
 *   access log's `sessionKeyHash`), never as the key ({@link redactLogFields},
 *   {@link redactingLogger});
 * - a URL that may carry a secret in its path or query (a webhook callback) is logged as
 *   its origin only ({@link urlOriginForLog}).
 *
 * @module
 */
import type { GatewayLogger } from "./gateway-logger.js";
import { hashIdentifier } from "./session-context.js";

/** Platforms whose user ids, and so session keys, are phone numbers. */
export const PHONE_NUMBER_PLATFORMS: readonly string[] = Object.freeze(["whatsapp", "signal"]);

/** Log fields that hold a session key. */
const KEY_FIELDS = ["key", "sessionKey"] as const;

/** Whether a session key (`agent:<agent>:<platform>:…`) is one of a platform of {@link PHONE_NUMBER_PLATFORMS}. */
function holdsPhoneNumber(key: string): boolean {
  return PHONE_NUMBER_PLATFORMS.includes(key.split(":")[2] ?? "");
}

/**
 * The fields of one log line with every session key that holds a phone number replaced by
 * its hash (`key` → `keyHash`, `sessionKey` → `sessionKeyHash`); other fields as they are.
 * Returns the same object when nothing changes.
 *
 * @example
 * redactLogFields({ key: "agent:main:whatsapp:dm:16505551234", kind: "reply" });
 * // { kind: "reply", keyHash: "…12 hex digits…" }
 */
export function redactLogFields<T extends object>(fields: T): T {
  let out: Record<string, unknown> | null = null;
  for (const name of KEY_FIELDS) {
    const value = (fields as Record<string, unknown>)[name];
    if (typeof value !== "string" || !holdsPhoneNumber(value)) continue;
    out ??= { ...(fields as Record<string, unknown>) };
    delete out[name];
    out[`${name}Hash`] = hashIdentifier(value);
  }
  return (out ?? fields) as T;
}

/** A {@link GatewayLogger} that writes through `log` with {@link redactLogFields} applied to every line. */
export function redactingLogger(log: GatewayLogger): GatewayLogger {
  const debug = log.debug;
  return {
    info: (obj, msg) => log.info(redactLogFields(obj), msg),
    warn: (obj, msg) => log.warn(redactLogFields(obj), msg),
    error: (obj, msg) => log.error(redactLogFields(obj), msg),
    ...(debug === undefined ? {} : { debug: (obj: object, msg?: string) => debug.call(log, redactLogFields(obj), msg) }),
  };
}

/**
 * A URL as the log shows it: its origin (`https://hooks.example.com`), never the path or
 * query, where callback URLs often carry a secret; `(not a URL)` for anything else.
 *
 * @example
 * urlOriginForLog("https://hooks.example.com/replies/abc?key=s3cret"); // "https://hooks.example.com"
 */
export function urlOriginForLog(url: string | null | undefined): string | null {
  if (url === null || url === undefined) return null;
  try {
    return new URL(url).origin;
  } catch {
    return "(not a URL)";
  }
}
