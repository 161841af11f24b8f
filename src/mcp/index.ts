/**
 * `threadline mcp`: a Model Context Protocol server over a Threadline database, with the
 * official TypeScript SDK — over stdio ({@link buildMcpServer} on a `StdioServerTransport`)
 * or Streamable HTTP ({@link startMcpHttp}). The CLI loads this folder with `import()` only
 * when the `mcp` command runs, so no other command loads the SDK.
 *
 * Not a package entry point.
 *
 * @module
 */
export { buildMcpServer, type McpServerOptions } from "./mcp-server.js";
export { startMcpHttp, DEFAULT_MCP_PORT, type McpHttpOptions, type RunningMcpHttp } from "./mcp-http.js";
export { LOCAL_CALLER, type McpCaller } from "./tenant-scope.js";
export { MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, MAX_MESSAGE_CHARS } from "./mcp-tools.js";
export { SESSION_URI_TEMPLATE, sessionUri } from "./mcp-resources.js";
export { delimitData } from "./untrusted-data.js";
