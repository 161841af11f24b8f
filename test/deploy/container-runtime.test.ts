/**
 * The image's command, run as far as this machine can without a container engine: the
 * Dockerfile's ENTRYPOINT and CMD (`node dist/cli/main.js serve --host 0.0.0.0`, paths mapped
 * from /app to this checkout's build) with its ENV, THREADLINE_HOME a temporary folder, and the
 * compose config plus keys. It runs in a network namespace of its own (`unshare --net`, as
 * root in a new user namespace: no privilege needed where user namespaces are allowed), like a
 * container's: port 8787 is free whatever else this machine runs, 0.0.0.0 reaches nothing
 * outside, and a second interface (a veth pair, 10.99.0.2) plays the container's own address,
 * from which requests arrive as from outside. There the HEALTHCHECK command runs exactly as the
 * Dockerfile writes it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { builtCli, NODE_WITH_TSX } from "../cli/cli-run.js";
import { execForm, instructions, parseDockerfile, ROOT, repoFile } from "./container-files.js";
import type { Outcome, Plan, PlannedRequest } from "./container-netns-run.js";

const runtime = parseDockerfile(repoFile("Dockerfile")).at(-1)!;
const APP = instructions(runtime, "WORKDIR").at(-1)!.args;
const healthcheckArgs = instructions(runtime, "HEALTHCHECK").at(-1)!.args;
const HEALTHCHECK = execForm({ args: healthcheckArgs.replace(/^CMD\s+/u, "") });
const DRIVER = fileURLToPath(new URL("./container-netns-run.ts", import.meta.url));

/** The container's own address (a veth interface in the namespace). */
const OUTSIDE = "10.99.0.2";
const KEY = "admin-key-0123456789abcdef";
const TOKEN = "alice-token-0123456789abcdef";
/** The namespace's network, set up before the driver starts: loopback up, and a veth pair. */
const NETWORK_SETUP = `ip link set lo up && ip link add tl0 type veth peer name tl1 && ip addr add ${OUTSIDE}/24 dev tl0 && ip link set tl1 up && ip link set tl0 up`;

const home = mkdtempSync(join(tmpdir(), "tl-container-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** The image's command with its paths in this checkout (the image's /app is this checkout). */
function containerCommand(): string[] {
  const entrypoint = execForm(instructions(runtime, "ENTRYPOINT").at(-1)!);
  const cmd = execForm(instructions(runtime, "CMD").at(-1)!);
  return [...entrypoint, ...cmd].map((word) => (word.startsWith(`${APP}/`) ? `${ROOT}${word.slice(APP.length + 1)}` : word));
}

/** The Dockerfile's ENV for the runtime, with THREADLINE_HOME (the /data volume) the temporary folder. */
function containerEnv(configPath: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of instructions(runtime, "ENV")) {
    const [name, ...value] = args.split("=");
    env[name!] = value.join("=");
  }
  expect(env["THREADLINE_HOME"]).toBe("/data");
  // The compose config with keys added, as a user's copy of it (THREADLINE_CONFIG, as compose sets it).
  return {
    ...env,
    THREADLINE_HOME: home,
    THREADLINE_CONFIG: configPath,
    THREADLINE_DB: "",
    OPENAI_BASE_URL: "",
    OPENAI_API_KEY: "",
    PATH: process.env["PATH"]!,
  };
}

/** The compose config (deploy/docker/config.yaml) with an admin key and a person's token. */
function configWithKeys(): string {
  const doc = parseYaml(repoFile("deploy/docker/config.yaml")) as Record<string, unknown>;
  doc["api"] = { keys: [{ key: KEY }] };
  doc["adapters"] = { apiServer: { tokens: [{ token: TOKEN, userId: "alice", name: "alice-laptop" }] } };
  const path = join(home, "config-with-keys.yaml");
  writeFileSync(path, stringifyYaml(doc), { mode: 0o600 });
  return path;
}

const chat = (address: string, headers: Record<string, string> = {}, host = `${address}:8787`): PlannedRequest => ({
  address,
  host,
  method: "POST",
  path: "/v1/chat/completions",
  headers,
  body: { model: "threadline", messages: [{ role: "user", content: "hello from outside" }] },
});
const uiApi = (address: string, headers: Record<string, string> = {}): PlannedRequest => ({
  address,
  host: `${address}:8787`,
  method: "GET",
  path: "/ui/api/sessions",
  headers,
});

describe("the image's command, in a network namespace of its own", () => {
  it("answers the HEALTHCHECK, refuses keyless and foreign-Host requests, accepts the keys, and stops on SIGTERM", () => {
    builtCli(); // dist/ is built and not older than src/
    const plan: Plan = {
      command: containerCommand(),
      env: containerEnv(configWithKeys()),
      healthcheck: HEALTHCHECK,
      requests: {
        keylessV1FromLoopback: chat("127.0.0.1"),
        keylessV1FromOutside: chat(OUTSIDE),
        wrongTokenV1FromOutside: chat(OUTSIDE, { authorization: "Bearer not-the-token-0123456789" }),
        tokenV1FromOutside: chat(OUTSIDE, { authorization: `Bearer ${TOKEN}` }),
        foreignHostWithToken: chat(OUTSIDE, { authorization: `Bearer ${TOKEN}` }, "gateway.example.com"),
        keylessUiApiFromLoopback: uiApi("127.0.0.1"),
        keylessUiApiFromOutside: uiApi(OUTSIDE),
        keyUiApiFromOutside: uiApi(OUTSIDE, { "x-api-key": KEY }),
        healthzFromOutside: { address: OUTSIDE, host: `${OUTSIDE}:8787`, method: "GET", path: "/healthz" },
      },
    };
    const run = spawnSync(
      "unshare",
      ["--user", "--map-root-user", "--net", "--", "sh", "-c", `${NETWORK_SETUP} && exec "$@"`, "sh", ...NODE_WITH_TSX, DRIVER, JSON.stringify(plan)],
      { encoding: "utf8", timeout: 150_000 },
    );
    expect(run.error, "unshare runs (user and network namespaces allowed)").toBeUndefined();
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const outcome = JSON.parse(run.stdout) as Outcome;
    // The HEALTHCHECK command, exactly as the Dockerfile writes it.
    expect(outcome.healthcheck).toEqual({ status: 0, output: "" });
    expect(outcome.statuses).toEqual({
      keylessV1FromLoopback: 401,
      keylessV1FromOutside: 401,
      wrongTokenV1FromOutside: 401,
      tokenV1FromOutside: 200,
      foreignHostWithToken: 403,
      keylessUiApiFromLoopback: 401,
      keylessUiApiFromOutside: 401,
      keyUiApiFromOutside: 200,
      healthzFromOutside: 200,
    });
    expect(outcome.exitCode, "serve exits 0 on SIGTERM (the image's STOPSIGNAL) after draining").toBe(0);
  }, 180_000);
});
