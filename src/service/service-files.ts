/**
 * Writing and removing the service's files: the definition (unit or plist, rewritten only when
 * its text changed) and `service.env` (merged, mode 0600 always, written under a temp name and
 * renamed so a reader never sees half a file).
 *
 * @module
 */
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { mergeEnvFile, type EnvFileMerge } from "./service-env-file.js";

/** The text of a file, or `null` when there is none. */
export async function readIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Writes `text` to `path` (mode `mode`) through a temp file and a rename, creating the folder. */
async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, text, { mode });
  await chmod(temp, mode);
  await rename(temp, path);
}

/** Writes the definition unless it holds `text` already; resolves `true` when it wrote. */
export async function writeDefinition(path: string, text: string): Promise<boolean> {
  if ((await readIfExists(path)) === text) return false;
  await writeAtomically(path, text, 0o644);
  return true;
}

/** What {@link writeServiceEnv} did. */
export interface EnvFileWrite extends EnvFileMerge {
  /** True when the file's text changed. */
  changed: boolean;
  /** True when its mode was looser than 0600 and was tightened. */
  modeFixed: boolean;
}

/** Merges `variables` into the env file at `path` (kept lines stay), mode 0600 always. */
export async function writeServiceEnv(path: string, variables: ReadonlyArray<readonly [string, string]>): Promise<EnvFileWrite> {
  const existing = await readIfExists(path);
  const merge = mergeEnvFile(existing, variables);
  const looser = existing !== null && ((await stat(path)).mode & 0o077) !== 0;
  const changed = merge.text !== existing;
  if (changed) await writeAtomically(path, merge.text, 0o600);
  else if (looser) await chmod(path, 0o600);
  return { ...merge, changed, modeFixed: looser };
}

/** Removes the definition; resolves `false` when there was none. */
export async function removeDefinition(path: string): Promise<boolean> {
  if ((await readIfExists(path)) === null) return false;
  await rm(path, { force: true });
  return true;
}
