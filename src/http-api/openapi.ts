/**
 * Route definitions of the HTTP API and the OpenAPI 3.1 document built from them. Each
 * route is declared once ({@link ApiRoute}: method, path, parameters, body, responses);
 * {@link RouteRegistry.add} hands it to Fastify (which validates requests and serialises
 * responses with the same schemas) and keeps it for `/openapi.json`.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorSchema, NAMED_SCHEMAS, type JsonSchema } from "./schemas.js";

/** One response of a route. */
export interface ApiResponse {
  description: string;
  /** The JSON body (omit for none, e.g. 204). */
  schema?: JsonSchema;
  /** The body's media type (default `application/json`); a non-JSON body is not serialised by Fastify. */
  contentType?: string;
}

/** A route of the API. */
export interface ApiRoute {
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Fastify path syntax (`/sessions/:id`), relative to the API's prefix. */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** No API key needed. */
  public?: boolean;
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  /** A request without a body counts as `{}`. */
  bodyOptional?: boolean;
  /** Success and route-specific error responses; 401, 403, 422 and 500 are added to every authenticated route. */
  responses: Record<number, ApiResponse>;
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/** Per-route settings the API's hooks read (`request.routeOptions.config`). */
export interface ApiRouteConfig {
  threadlineApi: { public: boolean; bodyOptional: boolean; queryNames: string[] | null; bodyNames: string[] | null };
}

const errorResponse = (description: string): ApiResponse => ({ description, schema: errorSchema });

/** Responses every authenticated route may give. */
const COMMON_ERRORS: Record<number, ApiResponse> = {
  401: errorResponse("No API key was sent (TL_ERR_UNAUTHORIZED)."),
  403: errorResponse("The API key is not valid (TL_ERR_FORBIDDEN)."),
  422: errorResponse("A parameter or body field is invalid; details.field names it (TL_ERR_INVALID_INPUT)."),
  500: errorResponse("Internal error; details.requestId identifies the request in the server log (TL_ERR_INTERNAL)."),
  503: errorResponse("The database is busy or the server is shutting down (TL_ERR_STORE_BUSY, TL_ERR_UNAVAILABLE)."),
};

const names = (schema: JsonSchema | undefined): string[] | null =>
  schema === undefined ? null : Object.keys((schema["properties"] as Record<string, unknown> | undefined) ?? {});

const openApiPath = (url: string): string => url.replace(/:(\w+)/gu, "{$1}");

/** The routes of one API instance, for Fastify and for the OpenAPI document. */
export class RouteRegistry {
  readonly #routes: Array<{ route: ApiRoute; path: string }> = [];

  /** Registers `route` on `api` (under its prefix) and records it. */
  add(api: FastifyInstance, route: ApiRoute): void {
    const responses = { ...(route.public ? { 500: COMMON_ERRORS[500]! } : COMMON_ERRORS), ...route.responses };
    const response: Record<string, JsonSchema> = {};
    for (const [status, r] of Object.entries(responses)) {
      if (r.schema !== undefined && (r.contentType ?? "application/json") === "application/json") response[status] = structuredClone(r.schema);
    }
    const config: ApiRouteConfig = {
      threadlineApi: {
        public: route.public === true,
        bodyOptional: route.bodyOptional === true,
        queryNames: names(route.querystring),
        bodyNames: route.body !== undefined && route.body["additionalProperties"] === false ? names(route.body) : null,
      },
    };
    api.route({
      method: route.method,
      url: route.url,
      exposeHeadRoute: false, // only the documented methods
      config,
      schema: {
        ...(route.params ? { params: structuredClone(route.params) } : {}),
        ...(route.querystring ? { querystring: structuredClone(route.querystring) } : {}),
        ...(route.body ? { body: structuredClone(route.body) } : {}),
        response,
      },
      handler: route.handler,
    });
    this.#routes.push({ route: { ...route, responses }, path: `${api.prefix}${route.url}` || "/" });
  }

  /** Every recorded route: method and OpenAPI path (`GET /sessions/{id}`). */
  list(): Array<{ method: string; path: string }> {
    return this.#routes.map(({ route, path }) => ({ method: route.method, path: openApiPath(path) }));
  }

  /** The OpenAPI 3.1 document of the recorded routes. */
  document(info: { title: string; version: string; description?: string }): Record<string, unknown> {
    const components: Record<string, JsonSchema> = {};
    const ref = (schema: JsonSchema): JsonSchema => {
      const name = NAMED_SCHEMAS.get(schema);
      const walked = walk(schema);
      if (name === undefined) return walked;
      components[name] ??= walked;
      return { $ref: `#/components/schemas/${name}` };
    };
    // Replaces named sub-schemas by references, depth first.
    const walk = (schema: JsonSchema): JsonSchema => {
      const out: JsonSchema = {};
      for (const [key, value] of Object.entries(schema)) {
        if (key === "properties" && value !== null && typeof value === "object") {
          out[key] = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, ref(v)]));
        } else if ((key === "items" || key === "additionalProperties") && value !== null && typeof value === "object") {
          out[key] = ref(value as JsonSchema);
        } else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value)) {
          out[key] = (value as JsonSchema[]).map(ref);
        } else {
          out[key] = value;
        }
      }
      return out;
    };
    const paths: Record<string, Record<string, unknown>> = {};
    for (const { route, path } of this.#routes) {
      const parameters: JsonSchema[] = [];
      const addParameters = (schema: JsonSchema | undefined, where: "path" | "query"): void => {
        if (schema === undefined) return;
        const required = new Set((schema["required"] as string[] | undefined) ?? []);
        for (const [name, s] of Object.entries((schema["properties"] as Record<string, JsonSchema>) ?? {})) {
          const { description, ...rest } = s;
          parameters.push({
            name,
            in: where,
            required: where === "path" || required.has(name),
            ...(description === undefined ? {} : { description }),
            schema: ref(rest),
            ...(rest["type"] === "array" ? { style: "form", explode: true } : {}),
          });
        }
      };
      addParameters(route.params, "path");
      addParameters(route.querystring, "query");
      const responses: Record<string, unknown> = {};
      for (const [status, r] of Object.entries(route.responses)) {
        responses[status] = {
          description: r.description,
          ...(r.schema === undefined ? {} : { content: { [r.contentType ?? "application/json"]: { schema: ref(r.schema) } } }),
        };
      }
      const operation: Record<string, unknown> = {
        operationId: route.operationId,
        summary: route.summary,
        ...(route.description === undefined ? {} : { description: route.description }),
        tags: [route.tag],
        ...(parameters.length > 0 ? { parameters } : {}),
        ...(route.body === undefined
          ? {}
          : { requestBody: { required: route.bodyOptional !== true, content: { "application/json": { schema: ref(route.body) } } } }),
        responses,
        ...(route.public ? { security: [] } : {}),
      };
      (paths[openApiPath(path)] ??= {})[route.method.toLowerCase()] = operation;
    }
    return {
      openapi: "3.1.0",
      info,
      paths,
      components: {
        schemas: components,
        securitySchemes: {
          apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key from the config (api.keys)." },
          bearer: { type: "http", scheme: "bearer", description: "The same key as a bearer token." },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    };
  }
}
