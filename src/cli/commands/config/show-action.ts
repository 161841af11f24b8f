/**
 * The action of `threadline config show` (defined in config-command.ts), loaded when it runs.
 *
 * @module
 */
import { stringify as stringifyYaml } from "yaml";
import { defaultConfigPath } from "../../../gateway/index.js";
import { configFileDocument, parseServeConfig, secretConfigKeys, type ServeConfig } from "../../../serve/internal.js";
import { writeJson } from "../../cli-output.js";
import type { CliIo } from "../../cli-io.js";
import { loadConfig } from "./config-read.js";

/**
 * A secret as `config show` prints it: its first 3 characters, then a placeholder that is
 * still a valid value (long enough, and distinct per API key), so the printed file passes
 * `config check`.
 */
function mask(value: string, label = ""): string {
  return `${value.slice(0, 3)}…(masked${label === "" ? "" : ` ${label}`}, ${[...value].length} chars)`;
}

/** The effective config with secrets masked. */
function masked(config: ServeConfig): ServeConfig {
  const copy = structuredClone(config);
  if (copy.provider?.apiKey) copy.provider.apiKey = mask(copy.provider.apiKey);
  copy.adapters.apiServer.tokens = copy.adapters.apiServer.tokens.map((t) => (typeof t === "string" ? mask(t) : { ...t, token: mask(t.token) }));
  if (copy.adapters.webhook.secret) copy.adapters.webhook.secret = mask(copy.adapters.webhook.secret);
  copy.api.keys = copy.api.keys.map((k, i) => ({ ...k, key: mask(k.key, `key ${i + 1}`) }));
  // Chat platform secrets are never shown, not even a prefix: each secret key of a platform's
  // descriptor is a dotted path (adapters.<platform>.<key>) that holds the value in the resolved config.
  for (const key of secretConfigKeys()) {
    const path = key.split(".");
    const parent = valueAt(copy, path.slice(0, -1));
    const name = path[path.length - 1]!;
    if (parent === null || typeof parent !== "object") continue;
    const value = (parent as Record<string, unknown>)[name];
    if (typeof value === "string") (parent as Record<string, unknown>)[name] = `(set, ${value.length} chars)`;
  }
  return copy;
}

/** The value at a dotted path's segments (`undefined` when a segment is missing). */
function valueAt(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Runs `config show`. */
export async function run(io: CliIo, options: { config?: string; json?: boolean }): Promise<void> {
  const path = options.config || defaultConfigPath(io.env);
  const { doc, exists } = await loadConfig(path, Boolean(options.config), io.env);
  const file = configFileDocument(masked(parseServeConfig(doc, { env: io.env })));
  if (options.json) {
    writeJson(io, { path, exists, config: file });
    return;
  }
  io.stdout.write(
    `# ${path}${exists ? "" : " (not found: defaults)"}\n# Every setting with its effective value; secrets are masked (put the real ones back before using this as a config file).\n`,
  );
  io.stdout.write(stringifyYaml(file));
}
