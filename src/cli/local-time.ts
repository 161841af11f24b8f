/**
 * Absolute times in the local time zone, as people read them.
 *
 * @module
 */

const p2 = (n: number): string => String(n).padStart(2, "0");

/**
 * Epoch seconds as local `YYYY-MM-DD HH:MM`.
 *
 * @example
 * formatLocalDateTime(1773483300); // "2026-03-14 10:15" (in UTC)
 */
export function formatLocalDateTime(at: number): string {
  const d = new Date(at * 1000);
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}`;
}
