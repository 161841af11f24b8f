/** Command-line options of `npm run bench -- <size> [--db TARGET] [--keep]`. */
export interface BenchArgs {
  /** `small`, `medium`, `large` or a positive session count. */
  size: string;
  /** A database file path or a `postgres://` URL; default: a fresh file in the data directory. */
  db: string | undefined;
  /** Keep the database (and the export file) after the run. */
  keep: boolean;
  /** Concurrent-ingest mode: this many writer processes, each owning a slice of the sessions. */
  writers: number | undefined;
}

export const USAGE = "usage: npm run bench -- <small|medium|large|N> [--db FILE|postgres://URL] [--keep] [--writers N]";

/** Thrown for a bad command line; the entry prints it with the usage and exits 2. */
export class UsageError extends Error {}

/** Parses the arguments after `--`. */
export function parseArgs(argv: readonly string[]): BenchArgs {
  let size: string | undefined;
  let db: string | undefined;
  let keep = false;
  let writers: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--keep") keep = true;
    else if (arg === "--writers" || arg.startsWith("--writers=")) {
      const value = arg === "--writers" ? argv[++i] : arg.slice("--writers=".length);
      if (value === undefined || !/^[1-9][0-9]*$/.test(value)) throw new UsageError("--writers needs a positive integer");
      writers = Number(value);
    } else if (arg === "--db") {
      db = argv[++i];
      if (db === undefined || db === "") throw new UsageError("--db needs a value");
    } else if (arg.startsWith("--db=")) db = arg.slice("--db=".length);
    else if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`);
    else if (size === undefined) size = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (size === undefined) throw new UsageError("missing <size>");
  if (!/^(small|medium|large|[1-9][0-9]*)$/.test(size)) throw new UsageError(`bad size ${size}`);
  return { size, db: db === "" ? undefined : db, keep, writers };
}
