/**
 * Runs a benchmark on a reference build and on this checkout, side by side in one run on one
 * machine: the store benchmark (`npm run bench:compare -- <git-ref> <size> [--db TARGET]
 * [--rounds N]`) or the gateway benchmark (`npm run bench:compare -- <git-ref> gateway
 * [bench:gateway options] [--rounds N]`, after building both checkouts, since it runs each one's
 * `dist/`), or the context benchmark (`npm run bench:compare -- <git-ref> context
 * [bench:context options] [--rounds N]`; it runs each checkout's sources, and the reference
 * must have bench/context/run.ts).
 *
 * The reference is checked out into a temporary git worktree (its node_modules: this
 * checkout's when the lockfiles match, else `npm ci`). The two builds then run in turns
 * (reference, current, reference, current, …) so machine noise falls on both alike; each
 * figure is the median of its rounds. Prints one JSON object (`{ ref, rounds, reference,
 * current, ratio }`) on stdout and a table on stderr; removes the worktree afterwards.
 *
 * @module
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE =
  "usage: npm run bench:compare -- <git-ref> <small|medium|large|N> [--db FILE|postgres://URL] [--rounds N]\n" +
  "       npm run bench:compare -- <git-ref> gateway [bench:gateway options] [--rounds N]\n" +
  "       npm run bench:compare -- <git-ref> context [bench:context options] [--rounds N]";

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

function parse(argv: string[]): { ref: string; benchArgs: string[]; rounds: number } {
  const [ref, ...rest] = argv;
  if (ref === undefined || ref.startsWith("-") || rest.length === 0) throw new Error(USAGE);
  let rounds = 2;
  const benchArgs: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--rounds") {
      rounds = Number(rest[++i]);
      if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds needs a positive integer.\n${USAGE}`);
    } else benchArgs.push(arg);
  }
  return { ref, benchArgs, rounds };
}

function main(): void {
  const { ref, benchArgs: given, rounds } = parse(process.argv.slice(2));
  const gateway = given[0] === "gateway";
  const context = given[0] === "context";
  const script = gateway ? "bench/gateway/run.ts" : context ? "bench/context/run.ts" : "bench/run.ts";
  const benchArgs = gateway || context ? given.slice(1) : given;
  const commit = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: root, encoding: "utf8" }).trim();
  const dir = join(mkdtempSync(join(tmpdir(), "threadline-bench-ref-")), "ref");
  execFileSync("git", ["worktree", "add", "--detach", dir, commit], { cwd: root, stdio: "ignore" });
  try {
    if (!existsSync(join(dir, script))) throw new Error(`${ref} has no ${script}: compare against a build that has this benchmark.`);
    const sameLock =
      existsSync(join(dir, "package-lock.json")) &&
      readFileSync(join(dir, "package-lock.json"), "utf8") === readFileSync(join(root, "package-lock.json"), "utf8");
    if (sameLock) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
    else execFileSync("npm", ["ci", "--ignore-scripts=false"], { cwd: dir, stdio: "inherit" });
    // The shared workload beside the project root, and the generated datasets (deterministic), are the same for both.
    symlinkSync(resolve(root, "..", "shared"), join(dirname(dir), "shared"), "dir");
    mkdirSync(join(root, "bench-data"), { recursive: true });
    symlinkSync(join(root, "bench-data"), join(dir, "bench-data"), "dir");
    if (gateway) {
      // The gateway benchmark starts each checkout's built `threadline serve`.
      for (const [where, label] of [
        [dir, "reference"],
        [root, "current checkout"],
      ] as const) {
        process.stderr.write(`[compare] building the ${label}\n`);
        execFileSync("npm", ["run", "-s", "build"], { cwd: where, stdio: ["ignore", "ignore", "inherit"] });
      }
    }
    // A PostgreSQL target gets one schema per side, so the two never share tables.
    const argsFor = (side: string): string[] =>
      benchArgs.map((a) => (/^postgres(ql)?:\/\//.test(a) ? `${a}${a.includes("?") ? "&" : "?"}schema=bench_compare_${side}` : a));
    const reference: Figures[] = [];
    const current: Figures[] = [];
    for (let round = 1; round <= rounds; round++) {
      reference.push(runBench(dir, script, argsFor("ref"), `round ${round}/${rounds}, reference ${ref} (${commit.slice(0, 7)})`));
      current.push(runBench(root, script, argsFor("current"), `round ${round}/${rounds}, current checkout`));
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
