/**
 * Installs `@mastra/libsql` (and its peer `@mastra/core`) into a temp dir with the ordinary
 * npm client and loads it from there by absolute path, so it never becomes a dependency of
 * Threadline: nothing is added to package.json, the lockfile or node_modules.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { MastraLibSQLModule } from "./mastra-api.js";

/** A temp-dir install of the Mastra store. */
export interface MastraInstall {
  /** The temp dir (holds node_modules; the benchmark's database files go here too). */
  dir: string;
  /** Installed versions, read from the packages' own package.json. */
  versions: { "@mastra/libsql": string; "@mastra/core": string; "@libsql/client": string };
  module: MastraLibSQLModule;
  /** Removes the temp dir. */
  remove(): void;
}

/** npm could not install the package (no registry, unknown version, …); the entry exits 2. */
export class InstallError extends Error {}

/** The flags that keep npm quiet and quick to give up when the registry is unreachable. */
const NPM_FLAGS = ["--no-audit", "--no-fund", "--no-update-notifier", "--fetch-retries=1", "--fetch-timeout=60000"];

function npm(args: string[], cwd: string): string {
  return execFileSync("npm", [...args, ...NPM_FLAGS], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * Resolves `spec` (a version or dist-tag, default `latest`) to one version with `npm view`,
 * installs exactly that version into a fresh temp dir (`npm install --prefix`), npm adding
 * its peer `@mastra/core` (installed explicitly if it did not), and imports it.
 *
 * @throws {InstallError} when npm fails; its stderr is in the message.
 */
export async function installMastra(spec = "latest", log: (line: string) => void): Promise<MastraInstall> {
  const dir = mkdtempSync(join(tmpdir(), "threadline-bench-mastra-"));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "threadline-bench-mastra", private: true })}\n`);
    let version: string;
    try {
      version = JSON.parse(npm(["view", `@mastra/libsql@${spec}`, "version", "--json"], dir)) as string;
      if (Array.isArray(version)) version = (version as string[]).at(-1)!;
    } catch (error) {
      throw new InstallError(`could not look up @mastra/libsql@${spec} in the npm registry: ${npmError(error)}`);
    }
    log(`installing @mastra/libsql@${version} into ${dir}`);
    try {
      npm(["install", "--prefix", dir, "--save-exact", `@mastra/libsql@${version}`], dir);
      if (!installed(dir, "@mastra/core")) {
        const peer = readPackage(dir, "@mastra/libsql").peerDependencies?.["@mastra/core"] ?? "latest";
        log(`npm did not add the peer @mastra/core; installing @mastra/core@${peer}`);
        npm(["install", "--prefix", dir, `@mastra/core@${peer}`], dir);
      }
    } catch (error) {
      throw new InstallError(`npm install @mastra/libsql@${version} into ${dir} failed: ${npmError(error)}`);
    }
    const versions = {
      "@mastra/libsql": readPackage(dir, "@mastra/libsql").version,
      "@mastra/core": readPackage(dir, "@mastra/core").version,
      "@libsql/client": readPackage(dir, "@libsql/client").version,
    };
    const module = (await import(pathToFileURL(entryPoint(dir, "@mastra/libsql")).href)) as MastraLibSQLModule;
    if (typeof module.LibSQLStore !== "function") {
      throw new InstallError(`@mastra/libsql@${versions["@mastra/libsql"]} has no LibSQLStore export; the benchmark needs one.`);
    }
    return { dir, versions, module, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

interface PackageJson {
  version: string;
  main?: string;
  exports?: Record<string, unknown>;
  peerDependencies?: Record<string, string>;
}

function packageDir(dir: string, name: string): string {
  return join(dir, "node_modules", ...name.split("/"));
}

function installed(dir: string, name: string): boolean {
  try {
    readPackage(dir, name);
    return true;
  } catch {
    return false;
  }
}

function readPackage(dir: string, name: string): PackageJson {
  return JSON.parse(readFileSync(join(packageDir(dir, name), "package.json"), "utf8")) as PackageJson;
}

/** The ESM entry of a package: `exports["."].import` (its `default`), else `main`. */
function entryPoint(dir: string, name: string): string {
  const pkg = readPackage(dir, name);
  const root = pkg.exports?.["."];
  let target: unknown = root;
  if (root !== null && typeof root === "object") {
    const imp = (root as Record<string, unknown>)["import"] ?? (root as Record<string, unknown>)["default"];
    target = imp !== null && typeof imp === "object" ? (imp as Record<string, unknown>)["default"] : imp;
  }
  const rel = typeof target === "string" ? target : (pkg.main ?? "index.js");
  return join(packageDir(dir, name), rel);
}

function npmError(error: unknown): string {
  const stderr = (error as { stderr?: unknown }).stderr;
  const text = typeof stderr === "string" && stderr.trim() !== "" ? stderr : error instanceof Error ? error.message : String(error);
  return text
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.includes('Unknown user config "nodedir"'))
    .slice(0, 6)
    .join("\n");
}
