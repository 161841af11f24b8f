/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of the API, built from the route
 * definitions (the same schemas Fastify validates and serialises with). Needs no key.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import type { FastifyPluginAsync } from "fastify";
import type { ApiContext } from "../api-context.js";

const VERSION = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** The OpenAPI document route. */
export const openApiRoutes: FastifyPluginAsync<ApiContext> = async (api, { registry }) => {
  let cached: Record<string, unknown> | null = null;
  registry.add(api, {
    method: "GET",
    url: "/openapi.json",
    operationId: "getOpenApi",
    tag: "meta",
    summary: "This API's OpenAPI 3.1 document",
    public: true,
    responses: { 200: { description: "The OpenAPI document.", schema: { type: "object", additionalProperties: true } } },
    handler: async () => {
      cached ??= registry.document({
        title: "Threadline HTTP API",
        version: VERSION,
        description: "Sessions, search, export, execution history, pairing and memory of a Threadline database. See docs/http.md.",
      });
      return cached;
    },
  });
};
