/**
 * Session ids: `YYYYMMDD_HHMMSS_<8 hex>` in local time, as users read them.
 *
 * @module
 */
import { randomBytes } from "node:crypto";

/** Makes a new session id for the given time (epoch seconds, default now), with `hexDigits` random hex digits. */
export function newSessionId(at: number = Date.now() / 1000, hexDigits = 8): string {
  const d = new Date(at * 1000);
  const p2 = (n: number): string => String(n).padStart(2, "0");
  const stamp = `${d.getFullYear()}${p2(d.getMonth() + 1)}${p2(d.getDate())}_` + `${p2(d.getHours())}${p2(d.getMinutes())}${p2(d.getSeconds())}`;
  const hex = randomBytes(Math.ceil(hexDigits / 2))
    .toString("hex")
    .slice(0, hexDigits);
  return `${stamp}_${hex}`;
}
