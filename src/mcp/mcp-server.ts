/**
 * {@link buildMcpServer}: the MCP server of one caller over a Threadline database — its tools
 * (mcp-tools.ts) and session resources (mcp-resources.ts). It does not pick a transport: the
 * stdio command connects one server for the process, the HTTP transport builds one per
 * request for the caller that request authenticated as.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { SessionDB } from "../store/index.js";
import type { SessionSummariser } from "../tools/index.js";
import { registerResources } from "./mcp-resources.js";
import { registerTools } from "./mcp-tools.js";
import { LOCAL_CALLER, type McpCaller } from "./tenant-scope.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

/** Options of {@link buildMcpServer}. */
export interface McpServerOptions {
  db: SessionDB;
  /** Whose sessions the server shows (default: every session, as for the local user over stdio). */
  caller?: McpCaller;
  /** Offer `session_rename` and `session_delete` (default false: they are not listed at all). */
  allowWrites?: boolean;
  /** Character budget of a `session_search` result (default the built-in tool's, 100,000). */
  searchCharBudget?: number;
  /** Condenses each `session_search` session, as the built-in tool's summariser (default none). */
  summarise?: SessionSummariser | null;
  /** Where unexpected tool errors are reported (default: stderr). */
  onError?: (error: unknown, tool: string) => void;
}

/**
 * An MCP server (the official SDK's `McpServer`) with the Threadline tools and resources for
 * one caller. Connect it to a transport (`server.connect(transport)`).
 *
 * @example
 * const server = buildMcpServer({ db: await openSessionDB(), allowWrites: false });
 * await server.connect(new StdioServerTransport());
 */
export function buildMcpServer(options: McpServerOptions): McpServer {
  const caller = options.caller ?? LOCAL_CALLER;
  const server = new McpServer({ name: "threadline", title: "Threadline sessions", version: pkg.version });
  const onError =
    options.onError ??
    ((error: unknown, tool: string) => {
      process.stderr.write(`threadline mcp: ${tool} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    });
  registerTools(server, {
    db: options.db,
    caller,
    allowWrites: options.allowWrites ?? false,
    ...(options.searchCharBudget === undefined ? {} : { searchCharBudget: options.searchCharBudget }),
    summarise: options.summarise ?? null,
    onError,
  });
  registerResources(server, options.db, caller);
  return server;
}
