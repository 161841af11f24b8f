/**
 * Lazy loading of a platform SDK: an adapter module imports its SDK only when the serve
 * config enables that platform, so the CLI and an HTTP-only gateway never load grammY,
 * Bolt or discord.js. (`src/serve/chat-adapters.ts` imports each adapter folder with
 * `import()` only when its config section is present.)
 *
 * @module
 */
import { InvalidInputError } from "../../store/index.js";

/**
 * `import(specifier)` with an error that says what to install when the package is missing.
 *
 * @example
 * ```ts
 * const { Bot } = await loadSdk<typeof import("grammy")>("grammy", "telegram", () => import("grammy"));
 * ```
 */
export async function loadSdk<T>(specifier: string, platform: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new InvalidInputError(
        `adapters.${platform}: the ${platform} adapter needs the npm package "${specifier}", which is not installed. Run \`npm install ${specifier}\` (or remove adapters.${platform} from the config).`,
        { field: `adapters.${platform}` },
      );
    }
    throw error;
  }
}
