/**
 * The container files, checked without a container engine (these machines have none): the
 * Dockerfile's stages, users and copied files, `.dockerignore`, the compose file's health checks,
 * start order and stop timeout, the config it mounts (through the built bin's `config check`),
 * and that the `docker` commands of README and docs/deploy.md are the ones these files support.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { builtCli } from "../cli/cli-run.js";
import {
  copyParts,
  dockerignoreExcludes,
  type DockerStage,
  execForm,
  instructions,
  interpolate,
  markdownSection,
  parseDockerfile,
  ROOT,
  repoFile,
  shellCommands,
} from "./container-files.js";

const stages = parseDockerfile(repoFile("Dockerfile"));
const build = stages.find((s) => s.name === "build")!;
const runtime = stages.at(-1)!;
const ignore = repoFile(".dockerignore");
const pkg = JSON.parse(repoFile("package.json")) as { engines: { node: string }; bin: Record<string, string>; scripts: Record<string, string> };

/** The one instruction of `stage` with `keyword` (the last one: the one that counts). */
function last(stage: DockerStage, keyword: string): string {
  const found = instructions(stage, keyword).at(-1);
  if (found === undefined) throw new Error(`no ${keyword} in stage ${stage.name}`);
  return found.args;
}

/** The runtime stage's WORKDIR, where the image keeps the checkout's files. */
const APP = last(runtime, "WORKDIR");
/** A path in the image under APP, as the path in this checkout (after `npm run build`). */
function inCheckout(imagePath: string): string {
  expect(imagePath.startsWith(`${APP}/`), `${imagePath} is under ${APP}`).toBe(true);
  return `${ROOT}${imagePath.slice(APP.length + 1)}`;
}

const EXPOSED = Number(last(runtime, "EXPOSE"));
const HEALTHCHECK = ((): string[] => {
  const args = last(runtime, "HEALTHCHECK");
  expect(args.startsWith("CMD ")).toBe(true);
  return execForm({ args: args.slice(4) });
})();

interface ComposeService {
  image?: string;
  build?: string;
  hostname?: string;
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  env_file?: string | string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
  stop_signal?: string;
}
const compose = parseYaml(repoFile("docker-compose.yml"), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const gateways = Object.entries(compose.services).filter(([, s]) => s.build !== undefined || s.image === "threadline");

/** Compose's interpolation with no variable set but the required ones (as a fresh checkout with .env). */
function composeValue(value: string): string {
  return interpolate(value, { POSTGRES_PASSWORD: "from-dot-env" });
}

/** The config file a gateway service mounts (host path, in this checkout) and where. */
function mountedConfig(service: ComposeService): { host: string; target: string } {
  const target = service.environment?.["THREADLINE_CONFIG"];
  expect(target, "THREADLINE_CONFIG names the mounted config").toBeDefined();
  const mount = (service.volumes ?? []).map((v) => composeValue(v).split(":")).find((parts) => parts[1] === target);
  expect(mount, `a volume mounts the config at ${target}`).toBeDefined();
  return { host: `${ROOT}${mount![0]!.replace(/^\.\//u, "")}`, target: target! };
}

/** Seconds of a compose duration ("45s", "1m30s"). */
function seconds(duration: string): number {
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(h|m|s|ms)/gu)];
  expect(parts.map((p) => p[0]).join(""), `duration ${duration}`).toBe(duration);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * { h: 3600, m: 60, s: 1, ms: 0.001 }[unit as "h" | "m" | "s" | "ms"], 0);
}

/** gateway.drainTimeoutSeconds of a config file (30 when unset, as `serve` reads it). */
function drainTimeout(configPath: string): number {
  const doc = parseYaml(repoFile(configPath.slice(ROOT.length))) as { gateway?: { drainTimeoutSeconds?: number } } | null;
  return doc?.gateway?.drainTimeoutSeconds ?? 30;
}

describe("Dockerfile", () => {
  it("builds in a build stage and runs in a second stage, both on the official Node image of an engines line", () => {
    expect(stages.map((s) => s.name)).toEqual(["build", "runtime"]);
    for (const stage of stages) {
      const match = /^node:(\d+)-bookworm-slim$/u.exec(stage.image);
      expect(match, `${stage.image}: the official node image, a pinned major, bookworm-slim`).not.toBeNull();
      const major = Number(match![1]);
      expect(major % 2, "an even-numbered (LTS) line").toBe(0);
      const lines = pkg.engines.node.split("||").map((range) => semver.minVersion(range.trim())!.major);
      expect(lines).toContain(major);
    }
    expect(runtime.image).toBe(build.image);
  });

  it("runs as a non-root user in the runtime stage", () => {
    const users = instructions(runtime, "USER");
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!;
    expect(user.args).toBe("node");
    expect(["root", "0"]).not.toContain(user.args.split(":")[0]);
    // USER comes before the instructions that describe the running container.
    const entrypoint = instructions(runtime, "ENTRYPOINT")[0]!;
    expect(user.line).toBeLessThan(entrypoint.line);
  });

  it("compiles better-sqlite3 in the build stage only: the compiler is installed there and nowhere else", () => {
    const buildRuns = instructions(build, "RUN").map((i) => i.args);
    const install = buildRuns.find((run) => run.includes("apt-get install"));
    expect(install).toBeDefined();
    for (const tool of ["python3", "make", "g++"]) expect(install!.split(/\s+/u)).toContain(tool);
    expect(buildRuns.some((run) => /npm rebuild better-sqlite3\b.*--build-from-source/u.test(run))).toBe(true);
    expect(buildRuns.some((run) => /npm prune --omit=dev/u.test(run))).toBe(true);
    // The runtime stage installs nothing and compiles nothing: it copies the build stage's modules.
    for (const run of instructions(runtime, "RUN").map((i) => i.args)) {
      expect(run).not.toMatch(/apt-get|apk |python3|\bmake\b|g\+\+|gcc|build-essential|node-gyp|\bnpm\b/u);
    }
    const fromBuild = instructions(runtime, "COPY")
      .map(copyParts)
      .filter((c) => c.from === "build")
      .flatMap((c) => c.sources);
    expect(fromBuild).toEqual(expect.arrayContaining([`${APP}/node_modules`, `${APP}/dist`]));
  });

  it("copies from the build context only files that exist and that .dockerignore lets in", () => {
    const tracked = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);
    let copied = 0;
    for (const stage of stages) {
      for (const copy of instructions(stage, "COPY").map(copyParts)) {
        if (copy.from !== null) {
          expect(
            stages.map((s) => s.name),
            `COPY --from=${copy.from} names an earlier stage`,
          ).toContain(copy.from);
          continue;
        }
        for (const source of copy.sources) {
          const path = source.replace(/\/+$/u, "");
          expect(existsSync(`${ROOT}${path}`), `${source} exists`).toBe(true);
          expect(dockerignoreExcludes(ignore, path), `.dockerignore lets ${path} in`).toBe(false);
          // A folder: every tracked file in it reaches the build (none left out by a later pattern).
          if (statSync(`${ROOT}${path}`).isDirectory()) {
            const files = tracked.filter((f) => f.startsWith(`${path}/`));
            expect(files.length).toBeGreaterThan(0);
            expect(files.filter((f) => dockerignoreExcludes(ignore, f))).toEqual([]);
          }
          copied++;
        }
      }
    }
    expect(copied).toBeGreaterThan(0);
  });

  it("copies what `npm run build` reads before running it", () => {
    const buildCopies = instructions(build, "COPY").map(copyParts);
    const buildRun = instructions(build, "RUN").find((i) => i.args === "npm run build")!;
    expect(buildRun).toBeDefined();
    const before = buildCopies.filter((_, i) => instructions(build, "COPY")[i]!.line < buildRun.line).flatMap((c) => c.sources);
    const needed = ["package.json", "package-lock.json", "src/", ...pkg.scripts["build"]!.split(/\s+/u).filter((w) => /\.(json|mjs)$/u.test(w))];
    // tsconfig.json extends tsconfig.base.json.
    const tsconfig = JSON.parse(repoFile("tsconfig.json")) as { extends?: string };
    if (tsconfig.extends !== undefined) needed.push(tsconfig.extends.replace(/^\.\//u, ""));
    expect(before).toEqual(expect.arrayContaining(needed));
  });

  it("leaves out of the build context node_modules, dist, .git, tests, benchmark data, databases and .env files", () => {
    for (const path of [
      "node_modules",
      "node_modules/x/index.js",
      "dist/cli/main.js",
      ".git/HEAD",
      "test/deploy/x.test.ts",
      "bench-data/a",
      "coverage/x",
      "test-artifacts/x",
      "state.db",
      "src/state.db",
      "src/x.db-wal",
      ".env",
      "src/.env",
      ".env.local",
      "README.md",
    ]) {
      expect(dockerignoreExcludes(ignore, path), path).toBe(true);
    }
  });

  it("starts the built gateway on 0.0.0.0 with its data in the /data volume", () => {
    const entrypoint = execForm(instructions(runtime, "ENTRYPOINT").at(-1)!);
    expect(entrypoint[0]).toBe("node");
    const main = inCheckout(entrypoint[1]!);
    builtCli(); // dist/ exists and is not older than src/
    expect(existsSync(main), `${entrypoint[1]} is in dist/ after npm run build`).toBe(true);
    expect(`${ROOT}${pkg.bin["threadline"]!.replace(/^\.\//u, "")}`).toBe(main);
    expect(execForm(instructions(runtime, "CMD").at(-1)!)).toEqual(["serve", "--host", "0.0.0.0"]);
    expect(instructions(runtime, "ENV").map((i) => i.args)).toContain("THREADLINE_HOME=/data");
    expect(last(runtime, "VOLUME")).toBe("/data");
    // The runtime stage's COPYs put package.json and dist/ where the entry point expects them.
    const dests = instructions(runtime, "COPY")
      .map(copyParts)
      .map((c) => c.dest);
    expect(dests).toEqual(expect.arrayContaining(["./", "./dist"]));
  });

  it("has a health check on /healthz that needs no curl, and stops with SIGTERM", () => {
    expect(HEALTHCHECK.slice(0, 2)).toEqual(["node", "-e"]);
    expect(HEALTHCHECK[2]).toContain(`http://127.0.0.1:${EXPOSED}/healthz`);
    expect(EXPOSED).toBe(8787);
    expect(last(runtime, "STOPSIGNAL")).toBe("SIGTERM");
  });
});

describe("docker-compose.yml", () => {
  it("parses, and runs PostgreSQL with a named volume and a pg_isready health check", () => {
    const postgres = compose.services["postgres"]!;
    expect(postgres.image).toMatch(/^postgres:\d+/u);
    expect(postgres.healthcheck?.test.join(" ")).toContain("pg_isready");
    const volume = (postgres.volumes ?? [])[0]!.split(":")[0]!;
    expect(Object.keys(compose.volumes)).toContain(volume);
  });

  it("runs two gateway replicas of the image, health-checked as the Dockerfile does, started once PostgreSQL is healthy", () => {
    expect(gateways.map(([name]) => name)).toEqual(["gateway-1", "gateway-2"]);
    const hostPorts = new Set<string>();
    for (const [name, service] of gateways) {
      expect(service.build, name).toBe(".");
      expect(service.image, name).toBe("threadline");
      expect(service.healthcheck?.test, name).toEqual(["CMD", ...HEALTHCHECK]);
      expect(service.depends_on?.["postgres"]?.condition, name).toBe("service_healthy");
      const db = new URL(composeValue(service.environment!["THREADLINE_DB"]!));
      expect(db.protocol).toBe("postgres:");
      expect(db.hostname).toBe("postgres");
      for (const port of service.ports ?? []) {
        const parts = port.split(":");
        expect(Number(parts.at(-1)), `${name} publishes the image's port`).toBe(EXPOSED);
        hostPorts.add(parts.slice(0, -1).join(":"));
      }
    }
    expect(hostPorts.size, "each replica has its own host port").toBe(gateways.length);
    expect(new Set(gateways.map(([, s]) => s.hostname)).size, "each replica has its own hostname (gateway.replicaId)").toBe(gateways.length);
  });

  it("keeps secrets out of the file: the password and keys come from .env", () => {
    const text = repoFile("docker-compose.yml");
    expect(() => interpolate(text, {})).toThrow(/POSTGRES_PASSWORD/u);
    for (const [, service] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        if (/PASSWORD|KEY|TOKEN|SECRET/u.test(key)) expect(value, key).toMatch(/^\$\{\w+:\?/u);
        if (value.startsWith("postgres://")) expect(new URL(value.replace(/\$\{[^}]*\}/gu, "x")).password, key).toBe("x");
      }
    }
    for (const [name, service] of gateways) expect(service.env_file, name).toBe(".env");
  });

  it("gives a stop longer than the drain of the config it mounts", () => {
    for (const [name, service] of gateways) {
      const { host } = mountedConfig(service);
      expect(seconds(service.stop_grace_period!), name).toBeGreaterThan(drainTimeout(host));
      expect(service.stop_signal, name).toBe("SIGTERM");
    }
  });

  it("mounts a config file that `threadline config check` accepts, for a gateway on 0.0.0.0 at the image's port", () => {
    const [node, bin] = builtCli();
    for (const [name, service] of gateways) {
      const { host } = mountedConfig(service);
      expect(host).toBe(`${ROOT}deploy/docker/config.yaml`);
      const run = spawnSync(node!, [bin!, "config", "check", "--config", host], { encoding: "utf8", env: { ...process.env, THREADLINE_HOME: "/nonexistent" } });
      expect(run.stderr, name).toBe("");
      expect(run.status, name).toBe(0);
      expect(run.stdout).toBe(`Config OK: ${host}\n`);
      const doc = parseYaml(repoFile("deploy/docker/config.yaml")) as { gateway: { host: string; port?: number } };
      expect(doc.gateway.host).toBe("0.0.0.0");
      expect(doc.gateway.port ?? EXPOSED).toBe(EXPOSED);
    }
  });
});

/** The options of `docker run` the docs use that take a value. */
const RUN_VALUE_OPTIONS = new Set(["--name", "--restart", "--stop-timeout", "-p", "-v", "-e", "--env-file"]);

/** Checks the `docker` commands of one doc section against the files; returns which kinds it had. */
function checkDockerCommands(where: string, markdown: string): Set<string> {
  const kinds = new Set<string>();
  const services = Object.keys(compose.services);
  const entrypoint = execForm(instructions(runtime, "ENTRYPOINT").at(-1)!);
  let container: string | null = null;
  for (const words of shellCommands(markdown)) {
    const [program, command, ...rest] = words;
    const line = `${where}: ${words.join(" ")}`;
    if (program === "cp") {
      // cp deploy/docker/example.env .env: the example exists, and .env is what compose reads.
      expect(existsSync(`${ROOT}${command}`), line).toBe(true);
      expect(rest, line).toEqual([".env"]);
      kinds.add("cp");
      continue;
    }
    expect(program, `${line}: a docker command`).toBe("docker");
    kinds.add(command === "compose" ? `compose ${rest[0]}` : command!);
    if (command === "build") {
      expect(rest, line).toEqual(["-t", "threadline", "."]);
    } else if (command === "run") {
      const options: Array<[string, string | null]> = [];
      let i = 0;
      for (; i < rest.length && rest[i]!.startsWith("-"); i++) {
        const option = rest[i]!;
        options.push([option, RUN_VALUE_OPTIONS.has(option) ? rest[++i]! : null]);
      }
      expect(rest[i], `${line}: the image`).toBe("threadline");
      const value = (name: string): string[] => options.filter(([o]) => o === name).map(([, v]) => v!);
      container = value("--name")[0] ?? null;
      for (const publish of value("-p")) expect(Number(publish.split(":").at(-1)), line).toBe(EXPOSED);
      expect(value("-p").length, line).toBeGreaterThan(0);
      const mounts = value("-v").map((v) => v.split(":"));
      expect(
        mounts.some((m) => m[1] === "/data"),
        `${line}: a volume at /data`,
      ).toBe(true);
      const config = value("-e")
        .find((e) => e.startsWith("THREADLINE_CONFIG="))
        ?.split("=")[1];
      if (config !== undefined)
        expect(
          mounts.some((m) => m[1] === config),
          `${line}: the config file is mounted`,
        ).toBe(true);
      expect(Number(value("--stop-timeout")[0]), `${line}: stop timeout longer than the drain`).toBeGreaterThan(
        drainTimeout(`${ROOT}deploy/docker/config.yaml`),
      );
    } else if (command === "compose") {
      const [sub, ...args] = rest;
      expect(["up", "ps", "logs", "exec", "stop", "down", "build", "pull"], line).toContain(sub);
      const named = args.filter((a) => !a.startsWith("-"));
      if (sub === "exec") {
        expect(services, line).toContain(named[0]);
        expect(named.slice(1, 3), line).toEqual(entrypoint);
      } else for (const service of named) expect(services, line).toContain(service);
    } else if (command === "exec") {
      const named = rest.filter((a) => !a.startsWith("-"));
      expect(named[0], line).toBe(container);
      expect(named.slice(1, 3), line).toEqual(entrypoint);
    } else if (command === "logs" || command === "inspect" || command === "stop") {
      expect(rest.at(-1), line).toBe(container);
    } else {
      throw new Error(`${line}: a docker command this test does not check; add it`);
    }
  }
  return kinds;
}

describe("the docs' docker commands", () => {
  it("README's 'In a container' builds, runs and composes what these files define", () => {
    const section = markdownSection(markdownSection(repoFile("README.md"), "## Run it for real"), "### In a container");
    const kinds = checkDockerCommands("README.md", section);
    expect([...kinds]).toEqual(expect.arrayContaining(["build", "run", "cp", "compose up"]));
    expect(section).toMatch(/not built on our machines/u);
  });

  it("docs/deploy.md's container section does too", () => {
    const section = markdownSection(repoFile("docs/deploy.md"), "## In a container (Docker, Compose)");
    const kinds = checkDockerCommands("docs/deploy.md", section);
    expect([...kinds]).toEqual(expect.arrayContaining(["build", "run", "cp", "compose up", "exec", "compose exec"]));
    expect(section).toMatch(/Not built or run here/u);
  });
});
