/**
 * Command line of `npm run bench:cli -- [--root DIR] [--rounds N] [--dataset SIZE]`.
 *
 * @module
 */

/** What a bench:cli run measures, and against which checkout. */
export interface CliBenchArgs {
  /** The checkout whose `dist/` is measured (absolute or relative to the working directory). */
  root: string;
  /** Rounds: each command runs once per round, the commands interleaved. */
  rounds: number;
  /** The shared generator's size (`small`, `medium`, `large` or a count) of the sessions database. */
  dataset: string;
}

/** Default rounds per command. */
export const DEFAULT_ROUNDS = 15;
/** Default dataset: 2,000 sessions. */
export const DEFAULT_DATASET = "medium";

export const USAGE = "usage: npm run bench:cli -- [--root DIR] [--rounds N] [--dataset small|medium|large|N]";

/** A bad command line; the entry prints it with the usage and exits 2. */
export class CliBenchUsageError extends Error {}

/** The value of `--name VALUE` or `--name=VALUE` at `argv[i]`, and the index of the last argument used. */
function optionValue(argv: readonly string[], i: number, name: string): { value: string; next: number } {
  const arg = argv[i] as string;
  const inline = arg.startsWith(`${name}=`);
  const value = inline ? arg.slice(name.length + 1) : argv[i + 1];
  if (value === undefined || value === "") throw new CliBenchUsageError(`${name} needs a value`);
  return { value, next: inline ? i : i + 1 };
}

/**
 * Parses the arguments after `--`.
 *
 * @param defaultRoot The checkout measured without `--root` (this one).
 * @throws {CliBenchUsageError} on an unknown option, a positional argument or a bad value.
 */
export function parseCliBenchArgs(argv: readonly string[], defaultRoot: string): CliBenchArgs {
  const out: CliBenchArgs = { root: defaultRoot, rounds: DEFAULT_ROUNDS, dataset: DEFAULT_DATASET };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.split("=", 1)[0] as string;
    if (name === "--root") {
      const { value, next } = optionValue(argv, i, name);
      out.root = value;
      i = next;
    } else if (name === "--rounds") {
      const { value, next } = optionValue(argv, i, name);
      if (!/^[1-9][0-9]*$/.test(value)) throw new CliBenchUsageError(`--rounds needs a positive integer, not ${JSON.stringify(value)}`);
      out.rounds = Number(value);
      i = next;
    } else if (name === "--dataset") {
      const { value, next } = optionValue(argv, i, name);
      if (!/^(small|medium|large|[1-9][0-9]*)$/.test(value)) throw new CliBenchUsageError(`bad --dataset ${JSON.stringify(value)}`);
      out.dataset = value;
      i = next;
    } else if (arg.startsWith("-")) throw new CliBenchUsageError(`unknown option ${arg}`);
    else throw new CliBenchUsageError(`unexpected argument ${arg}`);
  }
  return out;
}
