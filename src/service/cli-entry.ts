/**
 * The CLI a service runs: the real path of this package's built `dist/cli/main.js`.
 *
 * @module
 */
import { existsSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { InvalidInputError } from "../store/index.js";

/**
 * The real path (symbolic links resolved, e.g. npm's global bin) of the built CLI beside this
 * module (`dist/service/` → `dist/cli/main.js`).
 *
 * @throws {InvalidInputError} when it is not there (Threadline running from its sources): build it, or install the package.
 */
export function builtCliEntry(): string {
  const path = fileURLToPath(new URL("../cli/main.js", import.meta.url));
  if (!existsSync(path)) {
    throw new InvalidInputError(
      `There is no built CLI at ${path}: a service runs the built threadline. Run "npm run build" (or install the package) and use its threadline.`,
    );
  }
  return realpathSync(path);
}
