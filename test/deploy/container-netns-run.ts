/**
 * Runs inside a network namespace of its own (container-runtime.test.ts starts it through
 * `unshare`), as a container's processes run in theirs: starts the image's command, waits for
 * `/healthz`, runs the image's HEALTHCHECK command, sends the requests it is given, stops the
 * gateway with SIGTERM, and prints what happened as one JSON line. The test asserts on it.
 *
 * Argument: a JSON {@link Plan}.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { request } from "node:http";
import { waitFor, withDeadline } from "../support/wait-for.js";

/** What to run and send. */
export interface Plan {
  /** The container's command: ENTRYPOINT then CMD, with paths in this checkout. */
  command: string[];
  /** Its environment (added to this process's). */
  env: Record<string, string>;
  /** The HEALTHCHECK's exec form (`node -e …`), run as written. */
  healthcheck: string[];
  /** The requests to send, by name. */
  requests: Record<string, PlannedRequest>;
}

/** One HTTP request: to `address`:8787, naming `host` in Host. */
export interface PlannedRequest {
  address: string;
  host: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** What the run printed. */
export interface Outcome {
  /** The HEALTHCHECK command's exit code and output. */
  healthcheck: { status: number | null; output: string };
  /** Each request's HTTP status. */
  statuses: Record<string, number>;
  /** The gateway's exit code after SIGTERM. */
  exitCode: number | null;
}

const PORT = 8787;

/** Sends one request; resolves with its status. */
function send(planned: PlannedRequest): Promise<number> {
  const body = planned.body === undefined ? undefined : JSON.stringify(planned.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: planned.address,
        port: PORT,
        method: planned.method,
        path: planned.path,
        headers: { host: planned.host, ...(body === undefined ? {} : { "content-type": "application/json" }), ...planned.headers },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const plan = JSON.parse(process.argv[2]!) as Plan;
const child = spawn(plan.command[0]!, plan.command.slice(1), { env: { ...process.env, ...plan.env }, stdio: ["ignore", "ignore", "pipe"] });
let stderr = "";
child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
try {
  const state = await waitFor(
    async () => {
      if (child.exitCode !== null) return "exited";
      return (await send({ address: "127.0.0.1", host: `127.0.0.1:${PORT}`, method: "GET", path: "/healthz" })) === 200 && "up";
    },
    { what: "the gateway to answer /healthz", timeoutMs: 60_000, intervalMs: 100, describe: () => stderr },
  );
  if (state === "exited") throw new Error(`the gateway exited: ${stderr}`);
  const health = spawnSync(plan.healthcheck[0]!, plan.healthcheck.slice(1), { encoding: "utf8", timeout: 30_000 });
  const statuses: Record<string, number> = {};
  for (const [name, planned] of Object.entries(plan.requests)) statuses[name] = await send(planned);
  child.kill("SIGTERM");
  const exitCode = await withDeadline(exited, { timeoutMs: 60_000, what: "the gateway to stop after SIGTERM", describe: () => stderr });
  const outcome: Outcome = { healthcheck: { status: health.status, output: `${health.stdout}${health.stderr}` }, statuses, exitCode };
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
} catch (error) {
  child.kill("SIGKILL");
  process.stderr.write(`${(error as Error).message}\n${stderr}\n`);
  process.exitCode = 1;
}
