/**
 * The config file as `threadline config` reads it: a missing default file means the defaults,
 * a missing named one is a usage error.
 *
 * @module
 */
import { defaultConfigPath, readConfigFile } from "../../../gateway/index.js";
import { NotFoundError } from "../../../store/index.js";
import { CliError } from "../../cli-errors.js";

/**
 * Reads the config file. A missing file means the defaults when it is the default path, and
 * is a usage error (exit 2) naming the path when it was named (`--config`, THREADLINE_CONFIG).
 */
export async function loadConfig(path: string, named: boolean, env: NodeJS.ProcessEnv): Promise<{ doc: Record<string, unknown>; exists: boolean }> {
  try {
    return { doc: await readConfigFile(path), exists: true };
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    if (named) {
      throw new CliError(
        "TL_ERR_USAGE",
        `No config file at ${path}. Check the path given with --config (or THREADLINE_CONFIG), or leave it out to read ${defaultConfigPath(env)}.`,
      );
    }
    return { doc: {}, exists: false };
  }
}
