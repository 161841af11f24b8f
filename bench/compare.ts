/**
 * Runs a benchmark on a reference build and on this checkout, side by side in one run on one
 * machine (usage: {@link COMPARE_USAGE}):
 *
 * - each checkout's own copy of a benchmark: the store benchmark (`npm run bench:compare --
 *   <git-ref> <size> [--db TARGET] [--rounds N]`), the gateway benchmark (`<git-ref> gateway
 *   [bench:gateway options]`; it runs each checkout's `dist/`) or the context benchmark
 *   (`<git-ref> context [bench:context options]`; each checkout's sources; the reference must
 *   have bench/context/run.ts);
 * - THIS checkout's benchmark script against both builds, for benchmarks the reference does
 *   not have: `<git-ref> cli [bench:cli options]` (bench/cli/run.ts) or `<git-ref> script
 *   <path/to/script.ts> [args…]`. The script runs from this checkout (its sources and
 *   node_modules) once with `--root <reference worktree>` and once with `--root <this
 *   checkout>`, and must measure that root's `dist/`.
 *
 * `--rounds N` (default 2) is compare's own: the number of runs of each build. Arguments after
 * a second `--` go to the benchmark untouched (`… cli --rounds 3 -- --rounds 10`: 3 runs of
 * each build, bench:cli's own 10 rounds each).
 *
 * The reference is checked out into a temporary git worktree (its node_modules: this
 * checkout's when the lockfiles match, else `npm ci`, which also builds it). Modes that run a
 * `dist/` build the reference when it has none and always rebuild this checkout. The two builds
 * then run in turns (reference, current, reference, current, …) so machine noise falls on both
 * alike; each figure is the median of its rounds. Prints one JSON object (`{ ref, commit,
 * rounds, reference, current, ratio }`) on stdout and a table on stderr; removes the worktree
 * afterwards.
 *
 * @module
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCompareArgs, type CompareArgs } from "./compare-args.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

type Figures = Record<string, number>;

/** Every numeric leaf of a report, by dotted path (`ingest.per_sec`). */
function flatten(value: unknown, prefix = "", out: Figures = {}): Figures {
  if (typeof value === "number") out[prefix] = value;
  else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix === "" ? key : `${prefix}.${key}`, out);
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function medians(runs: Figures[]): Figures {
  const keys = Object.keys(runs[0] ?? {});
  return Object.fromEntries(keys.map((key) => [key, median(runs.map((r) => r[key]!).filter((v) => v !== undefined))]));
}

/** Runs the benchmark `script` in `dir` with `args`; its report (the last JSON line of stdout). */
function runBench(dir: string, script: string, args: string[], label: string): Figures {
  process.stderr.write(`[compare] ${label}: npx tsx ${script} ${args.join(" ")}\n`);
  const result = spawnSync("npx", ["tsx", script, ...args], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (result.status !== 0) throw new Error(`the ${label} benchmark failed (exit ${result.status}); its log is above.`);
  const last = result.stdout.trim().split("\n").pop() ?? "";
  return flatten(JSON.parse(last));
}

/** Builds `dir` (`npm run build`) unless `onlyWhenMissing` and it already has a `dist/`. */
function build(dir: string, label: string, onlyWhenMissing: boolean): void {
  if (onlyWhenMissing && existsSync(join(dir, "dist", "index.js"))) {
    process.stderr.write(`[compare] the ${label} already has a dist/\n`);
    return;
  }
  process.stderr.write(`[compare] building the ${label}\n`);
  execFileSync("npm", ["run", "-s", "build"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
}

function main(): void {
  const { ref, rounds, bench }: CompareArgs = parseCompareArgs(process.argv.slice(2));
  const { script, args: benchArgs } = bench;
  if (bench.runs === "root" && !existsSync(resolve(root, script))) throw new Error(`this checkout has no ${script}.`);
  const commit = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: root, encoding: "utf8" }).trim();
  const dir = join(mkdtempSync(join(tmpdir(), "threadline-bench-ref-")), "ref");
  execFileSync("git", ["worktree", "add", "--detach", dir, commit], { cwd: root, stdio: "ignore" });
  try {
    if (bench.runs === "own" && !existsSync(join(dir, script))) throw new Error(`${ref} has no ${script}: compare against a build that has this benchmark.`);
    const sameLock =
      existsSync(join(dir, "package-lock.json")) &&
      readFileSync(join(dir, "package-lock.json"), "utf8") === readFileSync(join(root, "package-lock.json"), "utf8");
    if (sameLock) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
    else {
      process.stderr.write(`[compare] ${ref}'s package-lock.json differs from this checkout's: npm ci in ${dir}\n`);
      execFileSync("npm", ["ci", "--ignore-scripts=false"], { cwd: dir, stdio: ["ignore", 2, 2] });
    }
    // The shared workload beside the project root, and the generated datasets (deterministic), are the same for both.
    symlinkSync(resolve(root, "..", "shared"), join(dirname(dir), "shared"), "dir");
    mkdirSync(join(root, "bench-data"), { recursive: true });
    symlinkSync(join(root, "bench-data"), join(dir, "bench-data"), "dir");
    if (bench.needsBuild) {
      // These benchmarks run each checkout's built `dist/` (the reference's npm ci has built it already).
      build(dir, "reference", true);
      build(root, "current checkout", false);
    }
    // A PostgreSQL target gets one schema per side, so the two never share tables.
    const withSchema = (side: string): string[] =>
      benchArgs.map((a) => (/^postgres(ql)?:\/\//.test(a) ? `${a}${a.includes("?") ? "&" : "?"}schema=bench_compare_${side}` : a));
    // `own`: each checkout runs its own script; `root`: this checkout's script measures the build named by --root.
    const sides = {
      ref: bench.runs === "own" ? { cwd: dir, args: withSchema("ref") } : { cwd: root, args: [...withSchema("ref"), "--root", dir] },
      current: bench.runs === "own" ? { cwd: root, args: withSchema("current") } : { cwd: root, args: [...withSchema("current"), "--root", root] },
    };
    const reference: Figures[] = [];
    const current: Figures[] = [];
    for (let round = 1; round <= rounds; round++) {
      reference.push(runBench(sides.ref.cwd, script, sides.ref.args, `round ${round}/${rounds}, reference ${ref} (${commit.slice(0, 7)})`));
      current.push(runBench(sides.current.cwd, script, sides.current.args, `round ${round}/${rounds}, current checkout`));
    }
    const ref50 = medians(reference);
    const cur50 = medians(current);
    const ratio = Object.fromEntries(Object.keys(cur50).map((k) => [k, ref50[k] ? Math.round((cur50[k]! / ref50[k]!) * 1000) / 1000 : null]));
    for (const key of Object.keys(cur50)) {
      process.stderr.write(`[compare] ${key.padEnd(32)} ${String(ref50[key]).padStart(12)} → ${String(cur50[key]).padStart(12)}  ×${ratio[key]}\n`);
    }
    process.stdout.write(`${JSON.stringify({ ref, commit, rounds, reference: ref50, current: cur50, ratio })}\n`);
  } finally {
    execFileSync("git", ["worktree", "remove", "--force", dir], { cwd: root, stdio: "ignore" });
    rmSync(dirname(dir), { recursive: true, force: true });
  }
}

try {
  main();
} catch (error) {
  process.stderr.write(`bench:compare: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
