/**
 * `npm run bench:cli -- [--root DIR] [--rounds N] [--dataset SIZE]`: how long people wait
 * for the CLI (issue 31).
 *
 * Times, as the median over N rounds (15 by default), the wall time from spawn to exit of
 * `node -e 0`, `threadline --version`, `threadline --help`, `threadline sessions list` and
 * `threadline sessions show <id>` on a database of the shared workload (`medium`: 2,000
 * sessions; sessions-database.ts), each also as a ratio to `node -e 0` of the same run; and
 * `serve_healthz`, spawn of `threadline serve` (no chat platform) → its first 200 from
 * `GET /healthz` (serve-healthz.ts). The commands are interleaved round by round (each round
 * in a rotated order) so machine noise falls on all alike; one untimed warm-up round first.
 *
 * `threadline` is `node <root>/dist/cli/main.js`: `--root` (default this checkout) names the
 * checkout whose build is measured (`npm run bench:compare -- <ref> cli` passes it). Prints
 * one JSON object on stdout; progress and a table with the targets on stderr.
 *
 * @module
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { log } from "../log.js";
import { CliBenchUsageError, USAGE, parseCliBenchArgs } from "./args.js";
import { round, roundOrder, summarize, targetLabel, targetsMet, type CommandFigures } from "./figures.js";
import { makeServeHome, timeServe } from "./serve-healthz.js";
import { ensureSessionsDatabase } from "./sessions-database.js";
import { childEnv, timeCommand, type TimedCommand } from "./timed-command.js";

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BASELINE = "node_e0";
const SERVE = "serve_healthz";

/** What the build of a checkout is made of: a change elsewhere (docs, tests, bench) does not make it dirty. */
const BUILD_INPUTS = ["src", "scripts", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.base.json"];

/** The commit of `root` (with `+dirty` when its build inputs have changes), or `unknown` outside git. */
function commitOf(root: string): string {
  try {
    const git = (args: string[]): string => execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const commit = git(["rev-parse", "--short", "HEAD"]);
    const dirty = git(["status", "--porcelain", "--untracked-files=no", "--", ...BUILD_INPUTS]);
    return dirty === "" ? commit : `${commit}+dirty`;
  } catch {
    return "unknown";
  }
}

/** Runs a command once with its output captured and checks it printed what it should (an untimed sanity check). */
function checkOutput(command: TimedCommand, env: NodeJS.ProcessEnv, expect: RegExp): void {
  const result = spawnSync(process.execPath, command.args, { env, encoding: "utf8" });
  if (result.status !== 0 || !expect.test(result.stdout)) {
    throw new Error(`${command.name} did not print ${expect} (exit ${result.status}):\n${result.stdout.slice(0, 2000)}\n${result.stderr.slice(0, 2000)}`);
  }
}

async function main(): Promise<void> {
  const args = parseCliBenchArgs(process.argv.slice(2), projectRoot);
  const root = resolve(args.root);
  const bin = join(root, "dist", "cli", "main.js");
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run "npm run build" in ${root} first.`);
  const commit = commitOf(root);
  log(
    `bench:cli: ${root} (${commit}), ${args.rounds} rounds, dataset ${args.dataset}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );

  const database = await ensureSessionsDatabase(projectRoot, root, args.dataset);
  // The CLI's home has no config file: the database comes by THREADLINE_DB.
  const cliHome = await mkdtemp(join(tmpdir(), "threadline-bench-cli-home-"));
  const serveHome = await makeServeHome(database.path);
  try {
    const env = childEnv({ THREADLINE_HOME: cliHome, THREADLINE_DB: database.path });
    const commands: TimedCommand[] = [
      { name: BASELINE, args: ["-e", "0"] },
      { name: "version", args: [bin, "--version"] },
      { name: "help", args: [bin, "--help"] },
      { name: "sessions_list", args: [bin, "sessions", "list"] },
      { name: "sessions_show", args: [bin, "sessions", "show", database.showId] },
    ];
    checkOutput(commands[1] as TimedCommand, env, /\d+\.\d+\.\d+/);
    checkOutput(commands[3] as TimedCommand, env, /\S/);
    checkOutput(commands[4] as TimedCommand, env, /\S/);

    const samples = new Map<string, number[]>([...commands.map((c) => [c.name, []] as [string, number[]]), [SERVE, []]]);
    const stopSamples: number[] = [];
    const names = [...commands.map((c) => c.name), SERVE];
    log("warm-up round (untimed)");
    for (const command of commands) await timeCommand(command, env);
    await timeServe(root, serveHome.home);
    for (let r = 0; r < args.rounds; r++) {
      for (const name of roundOrder(names, r)) {
        const command = commands.find((c) => c.name === name);
        if (command !== undefined) samples.get(name)!.push(await timeCommand(command, env));
        else {
          const serve = await timeServe(root, serveHome.home);
          samples.get(SERVE)!.push(serve.healthzMs);
          stopSamples.push(serve.stopMs);
        }
      }
      const last = names.map((n) => `${n} ${(samples.get(n)!.at(-1) as number).toFixed(0)}`).join(", ");
      log(`round ${r + 1}/${args.rounds}: ${last} ms`);
    }

    const baseline = summarize(samples.get(BASELINE)!);
    const figures: Record<string, CommandFigures> = { [BASELINE]: baseline };
    for (const name of names.slice(1)) figures[name] = summarize(samples.get(name)!, baseline.median_ms);
    const serveStop = summarize(stopSamples);
    const met = targetsMet(figures);
    const load = loadavg().map((l) => round(l, 2));

    process.stderr.write(`\nbench:cli ${root} (${commit}), ${args.rounds} rounds, ${database.sessions} sessions; load ${load.join(" ")}\n`);
    process.stderr.write(`${"command".padEnd(16)}${"median ms".padStart(11)}${"min ms".padStart(9)}${"× node -e 0".padStart(13)}  target\n`);
    for (const name of names) {
      const f = figures[name] as CommandFigures;
      const label = targetLabel(name);
      const verdict = label === "" ? "" : `${label} ${met[name] ? "met" : "NOT met"}`;
      process.stderr.write(
        `${name.padEnd(16)}${f.median_ms.toFixed(1).padStart(11)}${f.min_ms.toFixed(1).padStart(9)}${(f.ratio === undefined ? "1" : f.ratio.toFixed(2)).padStart(13)}  ${verdict}\n`,
      );
    }
    process.stderr.write(`serve SIGTERM → exit: median ${serveStop.median_ms} ms\n`);

    const report = {
      bench: "cli",
      root,
      commit,
      node: process.version,
      cpus: cpus().length,
      dataset: args.dataset,
      sessions: database.sessions,
      rounds: args.rounds,
      ...figures,
      serve_stop: serveStop,
      targets_met: met,
      load_avg: load,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await serveHome.remove();
    await rm(cliHome, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  if (error instanceof CliBenchUsageError) process.stderr.write(`bench:cli: ${error.message}\n${USAGE}\n`);
  else process.stderr.write(`bench:cli: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 2;
});
