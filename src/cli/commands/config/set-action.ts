/**
 * The action of `threadline config set` (defined in config-command.ts), loaded when it runs.
 *
 * @module
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { parseDocument, parse as parseYamlValue } from "yaml";
import { defaultConfigPath } from "../../../gateway/index.js";
import { parseServeConfig } from "../../../serve/internal.js";
import { CliError } from "../../cli-errors.js";
import type { CliIo } from "../../cli-io.js";

const FORBIDDEN_SEGMENTS = new Set(["__proto__", "prototype", "constructor"]);

/** Runs `config set`. */
export async function run(io: CliIo, key: string, value: string, options: { config?: string }): Promise<void> {
  const path = options.config || defaultConfigPath(io.env);
  const segments = key.split(".");
  if (segments.some((s) => s === "" || FORBIDDEN_SEGMENTS.has(s))) {
    throw new CliError("TL_ERR_USAGE", `"${key}" is not a key path; use dotted names such as gateway.port.`);
  }
  let text = "";
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new CliError("TL_ERR_INVALID_INPUT", `${path} is not valid YAML; fix it first (threadline config check).`);
  let parsed: unknown;
  try {
    parsed = parseYamlValue(value);
  } catch {
    parsed = value;
  }
  // Ids look like numbers but are names: keep chatId/… values as given.
  if (/(Id|Url|token|secret|apiKey)$/iu.test(segments[segments.length - 1]!) && typeof parsed !== "string") parsed = value;
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  doc.setIn(segments, parsed);
  const next = (doc.toJS() ?? {}) as Record<string, unknown>;
  parseServeConfig(next, { env: io.env }); // refuse (nothing written) when the result would be invalid
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, doc.toString(), "utf8");
  io.stdout.write(`Set ${key} = ${JSON.stringify(parsed)} in ${path}\n`);
}
