/**
 * Byte counts as people read them.
 *
 * @module
 */

/**
 * `0 B`, `512 B`, `1.5 KiB`, `4.2 MiB`, `1.1 GiB` (powers of 1,024, one decimal from KiB on).
 *
 * @example
 * formatBytes(1536); // "1.5 KiB"
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(Number.isFinite(bytes) ? bytes : 0))} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
