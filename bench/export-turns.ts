/**
 * The export phase alone, of several builds, on one loaded database, in turns:
 * `npx tsx bench/export-turns.ts <small|medium|large> <git-ref>... [--rounds N]` (`.` is this
 * checkout as it is). `bench:compare` ingests the dataset anew for every round of every build
 * (several minutes a side on large); this loads it once, with the first build named (list the
 * oldest first: a newer build opens an older file, not the other way round), gives each build
 * its own copy of the file (opened once by that build first, so its migrations run outside the
 * timing), then runs each build's `bench/phases/export-all.ts` in a fresh process per run,
 * builds in turns (A, B, C, A, B, C, …). Prints a table on stderr and one JSON object (export
 * seconds per build: every round and the median; ratios of the medians against the first build)
 * on stdout. Each reference is a temporary git worktree sharing this checkout's node_modules.
 *
 * @module
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE = "usage: npx tsx bench/export-turns.ts <small|medium|large> <git-ref|.>... [--rounds N]";

interface Build {
  label: string;
  dir: string;
  db: string;
  worktree: boolean;
}

function parse(argv: string[]): { size: string; refs: string[]; rounds: number } {
  let rounds = 3;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--rounds") {
      rounds = Number(argv[++i]);
      if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds needs a positive integer.\n${USAGE}`);
    } else rest.push(argv[i]!);
  }
  const [size, ...refs] = rest;
  if (size === undefined || refs.length === 0) throw new Error(USAGE);
  return { size, refs, rounds };
}

/** Runs `code` (an ES module importing a build by absolute path) with tsx in `dir`; its last stdout line. */
function runScript(work: string, dir: string, name: string, code: string): string {
  const file = join(work, `${name}.mts`);
  writeFileSync(file, code);
  const result = spawnSync("npx", ["tsx", file], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (result.status !== 0) throw new Error(`${name} failed in ${dir} (exit ${result.status}); its log is above.`);
  return result.stdout.trim().split("\n").pop() ?? "";
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function main(): void {
  const { size, refs, rounds } = parse(process.argv.slice(2));
  const dataset = join(root, "bench-data", size, "dataset.jsonl");
  if (!existsSync(dataset)) throw new Error(`${dataset} is missing: run "npm run bench -- ${size}" once to generate it.`);
  const work = mkdtempSync(join(tmpdir(), "threadline-export-turns-"));
  const builds: Build[] = [];
  try {
    for (const [i, ref] of refs.entries()) {
      if (ref === ".") {
        builds.push({ label: "this checkout", dir: root, db: join(work, `build-${i}.db`), worktree: false });
        continue;
      }
      const commit = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: root, encoding: "utf8" }).trim();
      const dir = join(work, `ref-${i}`);
      execFileSync("git", ["worktree", "add", "--detach", dir, commit], { cwd: root, stdio: "ignore" });
      symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
      builds.push({ label: `${ref} (${commit.slice(0, 7)})`, dir, db: join(work, `build-${i}.db`), worktree: true });
    }
    const base = join(work, "base.db");
    process.stderr.write(`[export-turns] loading ${size} with ${builds[0]!.label}\n`);
    runScript(
      work,
      builds[0]!.dir,
      "load",
      `const { openSessionDB } = await import(${JSON.stringify(join(builds[0]!.dir, "src/index.ts"))});
const { runIngest } = await import(${JSON.stringify(join(builds[0]!.dir, "bench/phases/ingest.ts"))});
const db = await openSessionDB(${JSON.stringify(base)});
await runIngest(db, ${JSON.stringify(dataset)});
await db.close();
console.log("{}");`,
    );
    for (const build of builds) {
      copyFileSync(base, build.db);
      runScript(
        work,
        build.dir,
        "open",
        `const { openSessionDB } = await import(${JSON.stringify(join(build.dir, "src/index.ts"))});
const db = await openSessionDB(${JSON.stringify(build.db)});
await db.searchMessages("warm");
await db.close();
console.log("{}");`,
      );
    }
    const seconds = builds.map(() => [] as number[]);
    for (let round = 1; round <= rounds; round++) {
      for (const [i, build] of builds.entries()) {
        process.stderr.write(`[export-turns] round ${round}/${rounds}: ${build.label}\n`);
        const out = runScript(
          work,
          build.dir,
          "export",
          `const { openSessionDB } = await import(${JSON.stringify(join(build.dir, "src/index.ts"))});
const { runExportAll } = await import(${JSON.stringify(join(build.dir, "bench/phases/export-all.ts"))});
const db = await openSessionDB(${JSON.stringify(build.db)});
const result = await runExportAll(db, ${JSON.stringify(join(work, "export.jsonl"))});
await db.close();
console.log(JSON.stringify(result));`,
        );
        seconds[i]!.push((JSON.parse(out) as { seconds: number }).seconds);
      }
    }
    const medians = seconds.map(median);
    const report = builds.map((build, i) => ({
      build: build.label,
      seconds: seconds[i]!.map((s) => Math.round(s * 1000) / 1000),
      median: Math.round(medians[i]! * 1000) / 1000,
      ratio: Math.round((medians[i]! / medians[0]!) * 1000) / 1000,
    }));
    for (const r of report) process.stderr.write(`[export-turns] ${r.build.padEnd(28)} ${r.seconds.join(" / ")} s, median ${r.median} s, x${r.ratio}\n`);
    process.stdout.write(`${JSON.stringify({ size, rounds, builds: report })}\n`);
  } finally {
    for (const build of builds) {
      if (build.worktree) execFileSync("git", ["worktree", "remove", "--force", build.dir], { cwd: root, stdio: "ignore" });
    }
    rmSync(work, { recursive: true, force: true });
  }
}

try {
  main();
} catch (error) {
  process.stderr.write(`export-turns: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
