/**
 * `threadline mcp --http`: the MCP server over Streamable HTTP at one path (default `/mcp`),
 * **stateless**: every POST is authenticated on its own, gets a fresh server scoped to the
 * caller it authenticated as and a fresh transport, and answers with JSON. Nothing is kept
 * between requests, so a key's scope can never leak into another request, a restart loses
 * nothing, and there are no sessions to expire; what stateless gives up (server-to-client
 * notifications and streams on GET) no Threadline tool needs. GET and DELETE answer 405.
 *
 * Every request passes two checks before it reaches MCP:
 * - DNS rebinding ({@link rebindingRefusal}): `Host` (and `Origin`, when sent) must name
 *   this server; 403 otherwise.
 * - API keys, exactly as the HTTP API (`threadline api`) checks them — the same
 *   {@link ApiKeyring} and the same `api.keys` of the config file: `X-API-Key` or
 *   `Authorization: Bearer`; no key → 401, a wrong key → 403; a key with `userId` sees only
 *   that tenant's sessions. Without any key configured the server listens on a loopback
 *   address only and serves loopback clients only, without a key.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { ApiKeyring, checkApiAccess, ERROR_STATUS, HttpError, isLoopbackHost, type ApiKey } from "../http-api/internal.js";
import { InvalidInputError, type SessionDB } from "../store/index.js";
import type { SessionSummariser } from "../tools/index.js";
import { trackUnusedConnections } from "../net/index.js";
import { hostPolicyFor, rebindingRefusal } from "./dns-rebinding.js";
import { buildMcpServer } from "./mcp-server.js";
import type { McpCaller } from "./tenant-scope.js";

/** Options of {@link startMcpHttp}. */
export interface McpHttpOptions {
  db: SessionDB;
  /** Address to listen on (default 127.0.0.1). Without keys it must be a loopback address. */
  host?: string;
  /** Port (default 8789; 0 picks a free one). */
  port?: number;
  /** Path of the endpoint (default `/mcp`). */
  path?: string;
  /** Accepted API keys (the config's `api.keys`); none: loopback clients only, without a key. */
  keys?: readonly ApiKey[];
  /** More names the server may be reached by (checked against `Host`/`Origin`), e.g. a reverse proxy's. */
  allowedHosts?: readonly string[];
  allowWrites?: boolean;
  searchCharBudget?: number;
  summarise?: SessionSummariser | null;
  /** Where unexpected errors go (default: stderr). */
  onError?: (error: unknown, where: string) => void;
  /** Largest request body in bytes (default 1 MiB). */
  bodyLimit?: number;
}

/** A listening MCP HTTP server. */
export interface RunningMcpHttp {
  /** The endpoint, e.g. `http://127.0.0.1:8789/mcp`. */
  url: string;
  /** Stops accepting requests and waits for running ones. */
  close(): Promise<void>;
}

/** Default port of `threadline mcp --http` (next to the API's 8788). */
export const DEFAULT_MCP_PORT = 8789;

/** A JSON-RPC error reply (no request id: the request was never read as JSON-RPC). */
function rpcError(reply: FastifyReply, status: number, message: string, headers: Record<string, string> = {}): FastifyReply {
  return reply
    .code(status)
    .headers(headers)
    .header("content-type", "application/json")
    .send({ jsonrpc: "2.0", error: { code: status === 401 || status === 403 ? -32001 : -32000, message }, id: null });
}

/**
 * Starts the MCP server over Streamable HTTP (stateless) and resolves once it listens.
 * Throws {@link InvalidInputError} before listening when the access settings are unsafe:
 * no keys on a non-loopback address, or a short or repeated key.
 *
 * @example
 * const mcp = await startMcpHttp({ db, keys: [{ key: process.env.MCP_KEY!, userId: "alice" }] });
 * console.log(mcp.url); // http://127.0.0.1:8789/mcp
 */
export async function startMcpHttp(options: McpHttpOptions): Promise<RunningMcpHttp> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const keys = options.keys ?? [];
  if (keys.length === 0 && !isLoopbackHost(host)) {
    throw new InvalidInputError(
      `threadline mcp --http without API keys serves this machine only, but --host ${host} is not a loopback address. ` +
        "Configure api.keys in the config file (each { key: <16+ characters>, userId?: <tenant> }), or listen on 127.0.0.1.",
      { field: "--host" },
    );
  }
  const access = { keys, allowUnauthenticatedLoopback: keys.length === 0 };
  checkApiAccess(access, host);
  const keyring = new ApiKeyring(access);
  const policy = hostPolicyFor(host, options.allowedHosts ?? []);
  const onError =
    options.onError ??
    ((error: unknown, where: string) =>
      process.stderr.write(`threadline mcp: ${where}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`));
  const callers = new WeakMap<FastifyRequest, McpCaller>();

  const app = Fastify({
    logger: false,
    genReqId: () => randomUUID(),
    forceCloseConnections: "idle",
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
  }) as unknown as FastifyInstance;
  const endUnusedConnections = trackUnusedConnections(app.server);
  app.addHook("preClose", async () => endUnusedConnections());
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    const status = typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) onError(error, "request");
    return rpcError(reply, status, status === 500 ? "internal error" : error.message);
  });
  app.setNotFoundHandler((request, reply) => rpcError(reply, 404, `Not found: the MCP endpoint is ${path} (got ${request.url}).`));

  app.addHook("onRequest", async (request, reply) => {
    const refusal = rebindingRefusal(policy, request.headers.host, request.headers.origin);
    if (refusal !== null) return rpcError(reply, 403, refusal);
    try {
      callers.set(request, { userId: keyring.authenticate(request).userId });
    } catch (error) {
      if (error instanceof HttpError) return rpcError(reply, ERROR_STATUS[error.code] ?? 401, error.message, error.headers);
      throw error;
    }
    return undefined;
  });

  app.post(path, async (request, reply) => {
    const caller = callers.get(request);
    if (caller === undefined) return rpcError(reply, 401, "An API key is required.");
    const server = buildMcpServer({
      db: options.db,
      caller,
      allowWrites: options.allowWrites ?? false,
      ...(options.searchCharBudget === undefined ? {} : { searchCharBudget: options.searchCharBudget }),
      summarise: options.summarise ?? null,
      onError,
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on("close", () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      onError(error, "request");
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { "content-type": "application/json" });
        reply.raw.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: "internal error" }, id: null }));
      }
    }
    return reply;
  });
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
    rpcError(reply, 405, "Method not allowed: this MCP server is stateless; send JSON-RPC requests with POST.", { allow: "POST" });
  app.get(path, notAllowed);
  app.delete(path, notAllowed);

  const address = await app.listen({ host, port: options.port ?? DEFAULT_MCP_PORT });
  const url = `${address.replace("[::1]", "127.0.0.1")}${path}`;
  return { url, close: () => app.close() };
}
