/**
 * Errors of the HTTP API: one table from error codes to HTTP statuses, and the one reply
 * shape `{ error: { code, message, details? } }`. Store errors know nothing of HTTP; this
 * file is where their codes become statuses. Fastify's own errors (validation, bad JSON,
 * too large) are mapped here too. A response never carries a stack trace: anything
 * unexpected is a 500 "internal error" with a request id, and the full error goes to the log.
 *
 * @module
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { AmbiguousIdError, ConflictError, InvalidInputError, ThreadlineError, type ThreadlineErrorCode } from "../store/index.js";

/** The codes only the HTTP layer raises (a subset of {@link ThreadlineErrorCode}). */
export type HttpOnlyErrorCode = Extract<
  ThreadlineErrorCode,
  | "TL_ERR_UNAUTHORIZED"
  | "TL_ERR_FORBIDDEN"
  | "TL_ERR_BAD_REQUEST"
  | "TL_ERR_PAYLOAD_TOO_LARGE"
  | "TL_ERR_UNSUPPORTED_MEDIA_TYPE"
  | "TL_ERR_UNAVAILABLE"
  | "TL_ERR_INTERNAL"
>;

/** Every code an HTTP error reply may carry: the one list of codes, {@link ThreadlineErrorCode}. */
export type ApiErrorCode = ThreadlineErrorCode;

/**
 * Code → HTTP status: the one table (a `Record` over every code, so a new code does not
 * compile until it has a status). A reply's status is always `ERROR_STATUS[code]`; a code
 * whose status is 500 never shows its message (see {@link toErrorReply}).
 */
export const ERROR_STATUS: Readonly<Record<ThreadlineErrorCode, number>> = {
  TL_ERR_INVALID_INPUT: 422,
  TL_ERR_AMBIGUOUS_ID: 400,
  TL_ERR_BAD_REQUEST: 400,
  TL_ERR_USAGE: 400,
  TL_ERR_UNAUTHORIZED: 401,
  TL_ERR_FORBIDDEN: 403,
  TL_ERR_NOT_FOUND: 404,
  TL_ERR_CONFLICT: 409,
  TL_ERR_LEASE_LOST: 409,
  TL_ERR_INTERRUPTED: 409,
  TL_ERR_HANDOFF: 409,
  TL_ERR_PAYLOAD_TOO_LARGE: 413,
  TL_ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  TL_ERR_INCOMPLETE: 422,
  TL_ERR_CONFIRMATION_REQUIRED: 428,
  TL_ERR_SCHEMA_VERSION: 500,
  TL_ERR_STORE: 500,
  TL_ERR_CORRUPT: 500,
  TL_ERR_DRIVER_MISSING: 500,
  TL_ERR_IO: 500,
  TL_ERR_INTERNAL: 500,
  TL_ERR_AGENT: 502,
  TL_ERR_PLATFORM: 502,
  TL_ERR_STORE_BUSY: 503,
  TL_ERR_STORE_CLOSED: 503,
  TL_ERR_UNAVAILABLE: 503,
  TL_ERR_TIMEOUT: 504,
};

/** The body of every error reply. */
export interface ErrorBody {
  error: { code: ThreadlineErrorCode; message: string; details?: Record<string, unknown> };
}

/**
 * An error the HTTP layer raises itself (authentication, a refused request). Its status
 * comes from {@link ERROR_STATUS}; its message and `details` are sent as they are.
 */
export class HttpError extends ThreadlineError {
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers (e.g. `WWW-Authenticate`). */
  readonly headers: Record<string, string>;

  constructor(
    code: ThreadlineErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

/** Where in the request a Fastify validation error was found, as the reply names it. */
const PART: Record<string, string> = { querystring: "query", params: "path", body: "body", headers: "header" };

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** The field a validation issue is about: `limit`, `title`, `steps.0.name`. */
function fieldOf(issue: AjvIssue): string {
  const path = (issue.instancePath ?? "").split("/").filter(Boolean).join(".");
  const extra = (issue.params?.["missingProperty"] ?? issue.params?.["additionalProperty"]) as string | undefined;
  return [path, extra].filter((p) => p !== undefined && p !== "").join(".");
}

/** Minimal logger the handler writes unexpected errors to (pino-compatible). */
export interface ErrorLogger {
  error(object: Record<string, unknown>, message: string): void;
}

/**
 * Turns any error into a status and an {@link ErrorBody} (no stack, no driver detail). The
 * status of a {@link ThreadlineError} is `ERROR_STATUS[error.code]`; a 500 never shows the
 * error's message (it is `internal: true`, for the log), and two codes are renamed for
 * clients: a store's closing (`TL_ERR_STORE_CLOSED`) is `TL_ERR_UNAVAILABLE`, and a
 * storage failure (`TL_ERR_STORE`, `TL_ERR_SCHEMA_VERSION`…) is `TL_ERR_INTERNAL`.
 */
export function toErrorReply(error: unknown, requestId: string): { status: number; body: ErrorBody; headers: Record<string, string>; internal: boolean } {
  const reply = (code: ThreadlineErrorCode, message: string, details?: Record<string, unknown>, headers: Record<string, string> = {}) => ({
    status: ERROR_STATUS[code],
    body: { error: details === undefined ? { code, message } : { code, message, details } },
    headers,
    internal: false,
  });
  const internal = () => ({ ...reply("TL_ERR_INTERNAL", "internal error", { requestId }), internal: true });
  if (error instanceof HttpError) return reply(error.code, error.message, error.details, error.headers);
  if (error instanceof ThreadlineError) {
    if (error instanceof InvalidInputError) return reply(error.code, error.message, error.field === undefined ? undefined : { field: error.field });
    if (error instanceof AmbiguousIdError) {
      return reply(error.code, error.message, { candidates: error.candidates.map((c) => ({ ...c })), more: error.more });
    }
    if (error instanceof ConflictError) return reply(error.code, error.message, error.sessionId === undefined ? undefined : { sessionId: error.sessionId });
    switch (error.code) {
      case "TL_ERR_STORE_BUSY":
        return reply("TL_ERR_STORE_BUSY", "The database is busy; retry shortly.", undefined, { "retry-after": "1" });
      case "TL_ERR_CORRUPT":
        // The file's path stays in the log: an API client learns only that an operator must act.
        return {
          ...reply(
            "TL_ERR_CORRUPT",
            'The server\'s database file is damaged. An operator must run "threadline doctor --repair" on it (the server log names the file).',
            { requestId },
          ),
          internal: true,
        };
      case "TL_ERR_STORE_CLOSED":
        return reply("TL_ERR_UNAVAILABLE", "The server is shutting down; retry on another instance or later.", undefined, { "retry-after": "5" });
      default:
        // TL_ERR_STORE, TL_ERR_SCHEMA_VERSION, TL_ERR_INTERNAL… (500): internal, message in the log only.
        return ERROR_STATUS[error.code] === 500 ? internal() : reply(error.code, error.message);
    }
  }
  const fastify = error as Partial<FastifyError> & { validation?: AjvIssue[]; validationContext?: string };
  if (fastify !== null && typeof fastify === "object" && Array.isArray(fastify.validation)) {
    const issue: AjvIssue = fastify.validation[0] ?? {};
    const field = fieldOf(issue);
    const where = PART[fastify.validationContext ?? ""] ?? fastify.validationContext ?? "request";
    const what = where === "body" ? (field === "" ? "the request body" : `body field '${field}'`) : `${where} parameter '${field}'`;
    const extra = issue.keyword === "additionalProperties" ? "is not allowed" : (issue.message ?? "is invalid");
    return reply("TL_ERR_INVALID_INPUT", `Invalid ${what}: ${extra}.`, { field: field === "" ? where : field, in: where });
  }
  const status = typeof fastify?.statusCode === "number" ? fastify.statusCode : 500;
  if (typeof fastify?.code === "string" && fastify.code.startsWith("FST_") && status >= 400 && status < 500) {
    if (status === 413) return reply("TL_ERR_PAYLOAD_TOO_LARGE", "The request body is too large.");
    if (status === 415) return reply("TL_ERR_UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json.");
    return reply("TL_ERR_BAD_REQUEST", fastify.message ?? "Bad request.");
  }
  return internal();
}

/**
 * The Fastify error handler of the API: replies with {@link toErrorReply} and logs
 * unexpected errors (with the request id the reply names).
 */
export function makeErrorHandler(logger: ErrorLogger | null) {
  return function apiErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const out = toErrorReply(error, request.id);
    if (out.internal) {
      (logger ?? request.log).error({ err: error, requestId: request.id, method: request.method, url: request.url }, "internal error in an API request");
    }
    return reply.code(out.status).headers(out.headers).send(out.body);
  };
}

/** Replies 404 in the API's error shape for a route that does not exist. */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(ERROR_STATUS.TL_ERR_NOT_FOUND).send({
    error: { code: "TL_ERR_NOT_FOUND", message: `No route ${request.method} ${request.url.split("?")[0]}; GET /openapi.json lists the routes.` },
  } satisfies ErrorBody);
}
