/**
 * Request checks shared by the HTTP adapters: loopback detection, bearer tokens and
 * HMAC signatures, all compared in constant time.
 *
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Whether a remote address is the local machine (127.0.0.0/8, ::1, ::ffff:127.x). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4.startsWith("127.") || address === "::1";
}

function equalSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Whether an `Authorization` header carries one of the tokens (`Bearer <token>`). */
export function bearerMatches(header: string | undefined, tokens: readonly string[]): boolean {
  const match = /^Bearer\s+(\S+)\s*$/iu.exec(header ?? "");
  if (match === null) return false;
  let ok = false;
  for (const token of tokens) ok = equalSecret(match[1]!, token) || ok;
  return ok;
}

/** The signature header value for a body: `sha256=<hex HMAC-SHA256(secret, body)>`. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** Whether a signature header matches the body. */
export function signatureMatches(secret: string, body: string, header: string | undefined): boolean {
  if (typeof header !== "string") return false;
  return equalSecret(signBody(secret, body), header.trim());
}
