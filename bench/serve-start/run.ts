/**
 * Time from spawn to the first 200 of `GET /healthz` of `threadline serve` without chat
 * platforms (issue 31): `node <root>/dist/cli/main.js serve --port <free>` in a fresh temp
 * THREADLINE_HOME (default config: the api-server adapter and the web page on loopback, the echo
 * agent), polled every 5 ms. Several checkouts are measured interleaved (run 1 of each, then run
 * 2 of each, …) so they share the machine's load. Prints one JSON line per checkout: median,
 * min, max wall ms, and the median CPU time (user + system, from /proc) the child had used when
 * it first answered.
 *
 *   npx tsx bench/serve-start/run.ts --root <checkout> [--root <checkout>…] [--runs 10] [--existing-db] [-- <node options>]
 *
 * `--existing-db`: each checkout gets one home whose database an unmeasured first start creates;
 * the measured starts open it (a restart), instead of creating a new one each time.
 *
 * With `--cpu-prof --cpu-prof-dir=<dir>` after `--`, each child writes a V8 CPU profile
 * (read it with bench/serve-start/profile-summary.ts).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const SCRUBBED = ["OPENAI_BASE_URL", "OPENAI_API_KEY", "THREADLINE_MODEL", "THREADLINE_DB", "THREADLINE_CONFIG", "NODE_OPTIONS", "TELEGRAM_BOT_TOKEN"];

function parseArgs(argv: string[]): { roots: string[]; runs: number; existingDb: boolean; nodeArgs: string[] } {
  const roots: string[] = [];
  let runs = 10;
  let existingDb = false;
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  for (let i = 0; i < own.length; i++) {
    if (own[i] === "--root") roots.push(resolve(own[++i]!));
    else if (own[i] === "--runs") runs = Number(own[++i]);
    else if (own[i] === "--existing-db") existingDb = true;
    else throw new Error(`unknown argument ${own[i]}`);
  }
  if (roots.length === 0) roots.push(process.cwd());
  return { roots, runs, existingDb, nodeArgs: dash === -1 ? [] : argv.slice(dash + 1) };
}

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

/** CPU time (user + system) a process has used, ms (10 ms resolution). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), "threadline-serve-start-"));
  writeFileSync(join(home, "config.yaml"), "gateway:\n  logLevel: info\n");
  return home;
}

/** One start in `home` (a new one, removed after, unless given). */
async function once(root: string, nodeArgs: string[], given?: string): Promise<{ wallMs: number; cpuMs: number }> {
  const home = given ?? newHome();
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home };
  for (const name of SCRUBBED) delete env[name];
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, join(root, "dist", "cli", "main.js"), "serve", "--port", String(port)], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  let result: { wallMs: number; cpuMs: number } | null = null;
  while (child.exitCode === null && performance.now() - started < 30_000) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      await response.text();
      if (response.status === 200) {
        result = { wallMs: performance.now() - started, cpuMs: cpuMs(child.pid!) };
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 5));
  }
  child.kill("SIGTERM");
  await exited;
  if (given === undefined) rmSync(home, { recursive: true, force: true });
  if (result === null) throw new Error(`serve did not answer /healthz:\n${output}`);
  return result;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const { roots, runs, existingDb, nodeArgs } = parseArgs(process.argv.slice(2));
const homes = new Map(roots.map((root) => [root, existingDb ? newHome() : undefined]));
for (const [root, home] of homes) if (home !== undefined) await once(root, [], home);
const results = new Map(roots.map((root) => [root, [] as Array<{ wallMs: number; cpuMs: number }>]));
for (let run = 0; run < runs; run++) for (const root of roots) results.get(root)!.push(await once(root, nodeArgs, homes.get(root)));
for (const home of homes.values()) if (home !== undefined) rmSync(home, { recursive: true, force: true });
for (const [root, samples] of results) {
  const wall = samples.map((s) => s.wallMs);
  console.log(
    JSON.stringify({
      root,
      runs,
      database: existingDb ? "existing" : "new",
      medianMs: Math.round(median(wall)),
      minMs: Math.round(Math.min(...wall)),
      maxMs: Math.round(Math.max(...wall)),
      cpuMedianMs: median(samples.map((s) => s.cpuMs)),
    }),
  );
}
