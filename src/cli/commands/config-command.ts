/**
 * `threadline config show | check | set`: the config file (`$THREADLINE_HOME/config.yaml`)
 * as the gateway and the CLI read it, validated with the same rules.
 *
 * @module
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { Command, Option } from "commander";
import { parseDocument, parse as parseYamlValue, stringify as stringifyYaml } from "yaml";
import { defaultConfigPath, readConfigFile } from "../../gateway/index.js";
import { configFileDocument, configFileProblems, parseServeConfig, secretConfigKeys, type ServeConfig } from "../../serve/internal.js";
import { NotFoundError } from "../../store/index.js";
import { CliError } from "../cli-context.js";
import { writeJson, type CliIo } from "../cli-output.js";
import { bindEnv } from "../option-env.js";

function configOption(): Option {
  return bindEnv(new Option("--config <file>", "config file (default $THREADLINE_HOME/config.yaml)"), "THREADLINE_CONFIG");
}

/**
 * Reads the config file. A missing file means the defaults when it is the default path, and
 * is a usage error (exit 2) naming the path when it was named (`--config`, THREADLINE_CONFIG).
 */
async function loadConfig(path: string, named: boolean, env: NodeJS.ProcessEnv): Promise<{ doc: Record<string, unknown>; exists: boolean }> {
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

const FORBIDDEN_SEGMENTS = new Set(["__proto__", "prototype", "constructor"]);

/** Builds the `config` command. */
export function makeConfigCommand(io: CliIo): Command {
  const config = new Command("config").description("show, check or change the config file");

  config
    .command("show")
    .description("print the effective configuration as a config file (defaults filled in, secrets masked)")
    .addOption(configOption())
    .option("--json", "print JSON")
    .action(async (options: { config?: string; json?: boolean }) => {
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
    });

  config
    .command("check")
    .description("validate the config file; exit 0 when it is valid")
    .addOption(configOption())
    .option("--json", "print JSON")
    .action(async (options: { config?: string; json?: boolean }) => {
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
    });

  config
    .command("set")
    .description("set one key (dotted path, e.g. homeChannels.telegram.chatId) in the config file, keeping its comments")
    .argument("<key>", "dotted key path")
    .argument("<value>", "the value (YAML: 42, true, a string, [a, b]; negative numbers such as -100123 work as they are)")
    .addOption(configOption())
    .allowUnknownOption(true)
    .action(async (key: string, value: string, options: { config?: string }) => {
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
    });

  return config;
}
