/**
 * The action of `threadline config check` (defined in config-command.ts), loaded when it runs.
 *
 * @module
 */
import { defaultConfigPath } from "../../../gateway/index.js";
import { configFileProblems } from "../../../serve/internal.js";
import { CliError } from "../../cli-errors.js";
import { writeJson } from "../../cli-output.js";
import type { CliIo } from "../../cli-io.js";
import { loadConfig } from "./config-read.js";

/** Runs `config check`. */
export async function run(io: CliIo, options: { config?: string; json?: boolean }): Promise<void> {
  const path = options.config || defaultConfigPath(io.env);
  let problems: string[] = [];
  let exists = false;
  try {
    const loaded = await loadConfig(path, Boolean(options.config), io.env);
    exists = loaded.exists;
    // Every problem of the file at once: keys, values, keys that contradict each other,
    // what a chat platform is missing.
    problems = configFileProblems(loaded.doc, { env: io.env });
  } catch (error) {
    // A named file that is missing is not "invalid": say so plainly (exit 2).
    if (error instanceof CliError && !options.json) throw error;
    problems = [(error as Error).message];
  }
  if (options.json) writeJson(io, { path, exists, valid: problems.length === 0, problems });
  if (problems.length > 0) {
    if (!options.json) io.stderr.write(`threadline: ${path} is not valid:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
    throw new CliError("TL_ERR_INVALID_INPUT", "");
  }
  if (!options.json) io.stdout.write(exists ? `Config OK: ${path}\n` : `No config file at ${path}; the defaults apply (valid).\n`);
}
