/** Progress and diagnostics: everything but the result goes to stderr. */
export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Seconds with 3 decimals, for log lines. */
export function fmtSeconds(seconds: number): string {
  return `${seconds.toFixed(3)} s`;
}
