/**
 * The HTTP API (`threadline/server`): sessions, search, export, stats and execution
 * history of a Threadline database over REST, with API keys scoped to tenants, one JSON
 * error shape and an OpenAPI 3.1 document. See docs/http.md.
 *
 * @module
 */
export { apiRoutes, buildServer, type ApiOptions, type BuildServerOptions } from "./app.js";
export {
  ApiKeyring,
  checkApiAccess,
  isLoopbackHost,
  MIN_API_KEY_LENGTH,
  type ApiAccess,
  type ApiKey,
  type ApiPrincipal,
} from "./auth.js";
export {
  ERROR_STATUS,
  HttpError,
  toErrorReply,
  type ApiErrorCode,
  type ErrorBody,
  type ErrorLogger,
  type HttpOnlyErrorCode,
} from "./error-handler.js";
export type { ApiResponse, ApiRoute } from "./openapi.js";
export { baseHref, relativeFolder, UI_CONTENT_SECURITY_POLICY, uiRoutes, type UiOptions } from "./ui/ui-routes.js";
export { MAX_LIVE_ROWS, type GatewayLiveSnapshot, type GatewayLiveSource, type LiveRunningSession } from "./gateway-live.js";
