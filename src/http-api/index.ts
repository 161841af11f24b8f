/**
 * `threadline/server`: the HTTP API — sessions, search, export, stats and execution history
 * of a Threadline database over REST, with API keys scoped to tenants, one JSON error shape
 * and an OpenAPI 3.1 document (routes in docs/http.md) — and the web page (docs/web.md).
 *
 * The list is explicit: what other folders of this package share beyond it is in
 * `./internal.ts`, which is not an entry point. docs/api.md lists every export.
 *
 * @module
 */

// Serving the API and the page.
export { buildServer, apiRoutes, type BuildServerOptions, type ApiOptions } from "./app.js";
export { uiRoutes, type UiOptions } from "./ui/ui-routes.js";
export type { GatewayLiveSource, GatewayLiveSnapshot, LiveRunningSession } from "./gateway-live.js";

// API keys and access.
export { ApiKeyring, checkApiAccess, type ApiAccess, type ApiKey, type ApiPrincipal } from "./auth.js";

// Errors as HTTP replies.
export {
  HttpError,
  toErrorReply,
  ERROR_STATUS,
  type ApiErrorCode,
  type HttpOnlyErrorCode,
  type ErrorBody,
  type ErrorLogger,
} from "./error-handler.js";
