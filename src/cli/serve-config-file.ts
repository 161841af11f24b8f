/**
 * The config file of the long-running commands (serve, api, mcp, chat's setup, pairing and
 * memory's database), read and validated for a command's action.
 *
 * @module
 */
import { defaultConfigPath, readConfigFile } from "../gateway/index.js";
import { parseServeConfig, type ServeConfig } from "../serve/index.js";
import { NotFoundError } from "../store/index.js";

/**
 * The config file of a long-running command (`--config`, THREADLINE_CONFIG, else the default
 * path in `env`'s data home), validated; platform tokens missing from the file come from `env`.
 * A missing default file means the defaults; a missing file that was named explicitly is an
 * error.
 */
export async function loadServeConfig(explicitPath: string | undefined, env: NodeJS.ProcessEnv): Promise<ServeConfig> {
  const path = explicitPath || defaultConfigPath(env);
  let doc: Record<string, unknown> = {};
  try {
    doc = await readConfigFile(path);
  } catch (error) {
    if (!(error instanceof NotFoundError) || explicitPath) throw error;
  }
  return parseServeConfig(doc, { env });
}
