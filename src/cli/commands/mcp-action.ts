/**
 * `threadline mcp`: serves the database to MCP clients (Claude Desktop, IDEs, agents) —
 * over stdio by default (the client starts the process; the local user sees every session),
 * or over Streamable HTTP with `--http` (API keys of the config's `api.keys`, tenants
 * isolated; without keys, loopback only). `--allow-writes` adds `session_rename` and
 * `session_delete`. The MCP SDK is loaded with `import()` only when this command runs.
 *
 * In stdio mode stdout carries the protocol only: every message of ours goes to stderr.
 *
 * @module
 */
import type { Readable, Writable } from "node:stream";
import { OpenAiCompatibleAgent, resolveProviderConfig } from "../../agents/index.js";
import { agentSummariser, type SessionSummariser } from "../../tools/index.js";
import type { ServeConfig } from "../../serve/index.js";
import { CliError, openExistingDatabase } from "../cli-context.js";
import type { CliIo } from "../cli-output.js";
import { loadServeConfig } from "../serve-config-file.js";

interface McpOptions {
  db?: string;
  config?: string;
  http?: boolean;
  port?: number;
  host?: string;
  allowedHost?: string[];
  allowWrites?: boolean;
}

/** The summariser of `session_search`, as the gateway's built-in tool has it (config `tools.sessionSearch.summarise` and a provider). */
function summariserOf(config: ServeConfig, env: NodeJS.ProcessEnv): SessionSummariser | null {
  if (!config.tools.sessionSearch.summarise) return null;
  const provider = resolveProviderConfig(config.provider ?? undefined, env);
  if (provider === null) return null;
  const { tools: _tools, models: _models, ...connection } = provider;
  return agentSummariser(new OpenAiCompatibleAgent(connection));
}

/** Resolves when the client goes away (stdin ends) or on SIGTERM/SIGINT. */
function untilStopped(io: CliIo, extra: (stop: () => void) => void = () => {}): Promise<string> {
  return new Promise((resolve) => {
    const stop = (why: string) => () => resolve(why);
    io.signals.once("SIGTERM", stop("SIGTERM"));
    io.signals.once("SIGINT", stop("SIGINT"));
    extra(stop("closed"));
  });
}

/** Runs `mcp`: the action of makeMcpCommand (in mcp-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: McpOptions): Promise<void> {
  if (!options.http && (options.port !== undefined || options.host !== undefined || options.allowedHost !== undefined)) {
    throw new CliError("TL_ERR_USAGE", "--port, --host and --allowed-host apply to --http only: add --http, or leave them out for stdio.");
  }
  const config = await loadServeConfig(options.config, io.env);
  const summarise = summariserOf(config, io.env);
  const target = options.db?.trim() ? options.db : (config.database ?? undefined);
  const mcp = await import("../../mcp/index.js");
  const db = await openExistingDatabase(target, io.env);
  const onError = (error: unknown, where: string): void => {
    io.stderr.write(`threadline mcp: ${where} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  };
  const common = { db, allowWrites: options.allowWrites === true, searchCharBudget: config.tools.sessionSearch.charBudget, summarise, onError };
  const writes = options.allowWrites ? "writes allowed: session_rename, session_delete" : "read-only";
  try {
    if (options.http) {
      const server = await mcp.startMcpHttp({
        ...common,
        host: options.host ?? "127.0.0.1",
        port: options.port ?? mcp.DEFAULT_MCP_PORT,
        keys: config.api.keys,
        allowedHosts: options.allowedHost ?? [],
      });
      const auth = config.api.keys.length === 0 ? "no API keys: loopback clients only" : `${config.api.keys.length} API key(s)`;
      io.stderr.write(`threadline mcp: listening on ${server.url} (${auth}; ${writes}; database ${db.location})\n`);
      const why = await untilStopped(io);
      io.stderr.write(`threadline mcp: ${why}: stopping\n`);
      await server.close();
    } else {
      const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
      const server = mcp.buildMcpServer(common);
      const transport = new StdioServerTransport(io.stdin as unknown as Readable, io.stdout as unknown as Writable);
      const stopped = untilStopped(io, (stop) => {
        io.stdin.once("end", stop);
        io.stdin.once("close", stop);
        server.server.onclose = stop;
      });
      await server.connect(transport);
      io.stderr.write(`threadline mcp: serving ${db.location} over stdio (${writes})\n`);
      await stopped;
      await server.close();
    }
  } finally {
    await db.close();
  }
}
