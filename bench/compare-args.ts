/**
 * Command line of `npm run bench:compare` (bench/compare.ts): the reference, the benchmark
 * (which script, run from which checkout, with which arguments) and the rounds.
 *
 * @module
 */

export const COMPARE_USAGE =
  "usage: npm run bench:compare -- <git-ref> <small|medium|large|N> [--db FILE|postgres://URL] [--rounds N]\n" +
  "       npm run bench:compare -- <git-ref> gateway [bench:gateway options] [--rounds N]\n" +
  "       npm run bench:compare -- <git-ref> context [bench:context options] [--rounds N]\n" +
  "       npm run bench:compare -- <git-ref> cli [bench:cli options] [--rounds N] [-- bench:cli options]\n" +
  "       npm run bench:compare -- <git-ref> script <path/to/script.ts> [script args] [--rounds N] [-- script args]\n" +
  "(--rounds N: the alternating runs of each build, 2 by default; arguments after a second `--` go to the benchmark as they are, --rounds included)";

/** Which benchmark runs, and how each build is handed to it. */
export interface CompareBench {
  /** The benchmark script, relative to the checkout it runs in. */
  script: string;
  /** Its arguments (without `--root`). */
  args: string[];
  /**
   * `own`: each checkout runs its own copy of `script` (the store, gateway and context
   * benchmarks). `root`: THIS checkout's `script` runs for both builds, given `--root <dir>`
   * of the build to measure (cli, script).
   */
  runs: "own" | "root";
  /** Both checkouts need a `dist/` (built before the rounds). */
  needsBuild: boolean;
}

/** A parsed compare command line. */
export interface CompareArgs {
  ref: string;
  rounds: number;
  bench: CompareBench;
}

/** A bad compare command line (its message ends with the usage). */
export class CompareUsageError extends Error {}

function usageError(problem: string): CompareUsageError {
  return new CompareUsageError(`${problem}\n${COMPARE_USAGE}`);
}

/**
 * Parses the arguments after `--`: `<git-ref>`, then the mode (`gateway`, `context`, `cli`,
 * `script <path>`, or a dataset size for the store benchmark) and the benchmark's arguments.
 * `--rounds N` anywhere before a literal `--` is compare's own; everything after that `--`
 * goes to the benchmark untouched.
 *
 * @throws {CompareUsageError} without a ref or a mode, with a bad `--rounds`, or `script` without a path.
 */
export function parseCompareArgs(argv: readonly string[]): CompareArgs {
  const [ref, ...rest] = argv;
  if (ref === undefined || ref.startsWith("-")) throw usageError("missing <git-ref>");
  let rounds = 2;
  const given: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === "--") {
      given.push(...rest.slice(i + 1));
      break;
    }
    if (arg === "--rounds") {
      rounds = Number(rest[++i]);
      if (!Number.isInteger(rounds) || rounds < 1) throw usageError("--rounds needs a positive integer.");
    } else given.push(arg);
  }
  const [mode, ...modeArgs] = given;
  if (mode === undefined) throw usageError("missing the benchmark (a dataset size, gateway, context, cli or script <path>)");
  return { ref, rounds, bench: benchOf(mode, modeArgs, given) };
}

function benchOf(mode: string, modeArgs: string[], given: string[]): CompareBench {
  switch (mode) {
    case "gateway":
      return { script: "bench/gateway/run.ts", args: modeArgs, runs: "own", needsBuild: true };
    case "context":
      return { script: "bench/context/run.ts", args: modeArgs, runs: "own", needsBuild: false };
    case "cli":
      return { script: "bench/cli/run.ts", args: modeArgs, runs: "root", needsBuild: true };
    case "script": {
      const [script, ...args] = modeArgs;
      if (script === undefined || script.startsWith("-")) throw usageError("script needs the path of a benchmark script (relative to this checkout)");
      if (args.includes("--root")) throw usageError("script: compare passes --root itself");
      return { script, args, runs: "root", needsBuild: true };
    }
    default:
      return { script: "bench/run.ts", args: given, runs: "own", needsBuild: false };
  }
}
