/**
 * Network helpers shared by the HTTP surfaces (the REST API, the MCP server, the HTTP
 * adapters): loopback and proxy detection, constant-time secret and signature checks, and
 * closing a server without waiting for unused connections. Not a package entry point.
 *
 * @module
 */
export {
  isLoopbackAddress,
  isLoopbackClient,
  TrustedProxies,
  trustProxyEntryProblem,
  secretsEqual,
  PROXY_HEADERS,
  bearerIndex,
  signBody,
  signatureMatches,
} from "./http-auth.js";
export { trackUnusedConnections } from "./close-unused-connections.js";
