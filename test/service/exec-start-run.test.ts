/**
 * The unit's command run as written: a test reads `ExecStart=`, `Environment=` and
 * `EnvironmentFile=` of a generated unit the way systemd does (systemd-reading.ts), spawns
 * exactly that command with exactly that environment (the built bin: `npm run build` first),
 * and checks that it is a working gateway: `/healthz` answers, and with a turn in flight
 * (a fake model holding its reply) `KillSignal=` (SIGTERM) drains it: the waiting client gets
 * its reply, the reply is stored, and the process exits 0 within `TimeoutStopSec=`.
 * The THREADLINE_HOME has a space in its name, and the provider settings come only from
 * service.env.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { serviceEnvPath, systemdUnitText, writeServiceEnv, type ServiceSpec } from "../../src/service/index.js";
import { openSessionDB } from "../../src/store/index.js";
import { messageText, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor, withDeadline } from "../support/wait-for.js";
import { BIN, freePort, postChat } from "../serve/gateway-process.js";
import { environmentOf, execArgv, parseEnvironmentFile, parseUnitFile, resolveSpecifiers, unitValues } from "./systemd-reading.js";

const scratch = mkdtempSync(join(tmpdir(), "threadline-exec-start-"));
const cleanups: Array<() => Promise<void> | void> = [() => rmSync(scratch, { recursive: true, force: true })];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

it("ExecStart, run as systemd would, serves /healthz and drains a turn in flight on SIGTERM, exiting 0 within TimeoutStopSec", async () => {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const fake: FakeOpenAiServer = await startFakeOpenAiServer({ apiKey: "sk-service-run" });
  cleanups.push(() => fake.close());
  fake.setScript(async (request) => {
    const messages = request.body?.messages ?? [];
    const last = messages.at(-1);
    if (request.kind === "chat" && last !== undefined && messageText(last.content) === "a slow question") await held;
    return null;
  });

  const home = join(scratch, "My Threadline");
  mkdirSync(home);
  const port = await freePort();
  const configPath = join(home, "gateway config.yaml");
  writeFileSync(configPath, `gateway:\n  host: 127.0.0.1\n  port: ${port}\n  drainTimeoutSeconds: 20\n`);
  await writeServiceEnv(serviceEnvPath(home), [
    ["OPENAI_BASE_URL", fake.url],
    ["OPENAI_API_KEY", "sk-service-run"],
    ["THREADLINE_MODEL", "fake-model"],
  ]);
  const spec: ServiceSpec = {
    nodePath: process.execPath,
    entryPath: realpathSync(BIN),
    home,
    configPath,
    drainTimeoutSeconds: 20,
    scope: "user",
    runAs: null,
    extraWritablePaths: [],
  };
  const unit = parseUnitFile(systemdUnitText(spec));
  const argv = execArgv(unitValues(unit, "Service", "ExecStart")[0]!);
  const envFile = resolveSpecifiers(unitValues(unit, "Service", "EnvironmentFile")[0]!);
  // A user manager's own environment (PATH, HOME), then Environment=, then EnvironmentFile= (systemd's order).
  const env = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: scratch,
    ...environmentOf(unitValues(unit, "Service", "Environment")),
    ...parseEnvironmentFile(readFileSync(envFile, "utf8")),
  };
  expect(env).toMatchObject({ THREADLINE_HOME: home, OPENAI_API_KEY: "sk-service-run" });
  const stopTimeoutMs = Number(unitValues(unit, "Service", "TimeoutStopSec")[0]) * 1000;
  const killSignal = unitValues(unit, "Service", "KillSignal")[0] as NodeJS.Signals;

  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });

  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`the service exited early (${child.exitCode}): ${output}`);
      const health = await fetch(`${url}/healthz`).catch(() => null);
      return health?.status === 200 && ((await health.json()) as { status?: string }).status === "ok";
    },
    { what: "GET /healthz of the service", describe: () => output },
  );

  const reply = postChat(url, "a slow question", { user: "service-user" });
  reply.catch(() => {});
  await waitFor(() => fake.chatRequests().some((r) => messageText(r.body?.messages?.at(-1)?.content) === "a slow question"), {
    what: "the model request of the turn",
    describe: () => output,
  });
  child.kill(killSignal);
  await waitFor(() => output.includes("shutting down: draining running turns"), { what: "the gateway to start draining", describe: () => output });
  expect(child.exitCode).toBeNull();
  release();

  const answered = await reply;
  expect(answered.status).toBe(200);
  expect(answered.body.choices[0]!.message.content).toBe("Reply to: a slow question");
  expect(await withDeadline(exited, { timeoutMs: stopTimeoutMs, what: "the service to exit within TimeoutStopSec", describe: () => output })).toEqual({
    code: 0,
    signal: null,
  });
  expect(output).toMatch(/"drained":true/u);

  const db = await openSessionDB(join(home, "state.db"));
  try {
    const [session] = (await db.listSessions()).items;
    const messages = await db.getMessages(session!.id);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "a slow question"],
      ["assistant", "Reply to: a slow question"],
    ]);
  } finally {
    await db.close();
  }
}, 90_000);
