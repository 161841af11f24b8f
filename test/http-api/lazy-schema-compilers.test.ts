/**
 * Route schemas built on first use (`lazySchemaCompilers`, what `threadline serve` and
 * `buildServer` give Fastify) validate, coerce, fill defaults and serialise exactly like
 * Fastify's own compilers; nothing is built before a request needs it; `warm` builds the rest
 * and reports a schema that cannot be built. Real Fastify, requests through `inject`.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { lazySchemaCompilers } from "../../src/http-api/internal.js";

const schema = {
  params: { type: "object", required: ["id"], properties: { id: { type: "integer", minimum: 1 } } },
  querystring: { type: "object", additionalProperties: false, properties: { limit: { type: "integer", default: 10 }, tag: { type: "string" } } },
  body: { type: "object", required: ["name"], properties: { name: { type: "string", minLength: 2 }, extra: { type: "boolean", default: false } } },
  response: {
    200: { type: "object", properties: { id: { type: "integer" }, limit: { type: "integer" }, name: { type: "string" }, extra: { type: "boolean" } } },
  },
};

function server(instance: FastifyInstance): FastifyInstance {
  instance.post("/things/:id", { schema }, async (request) => ({
    ...(request.params as object),
    ...(request.query as object),
    ...(request.body as object),
    secret: "never serialised",
  }));
  instance.get("/other", { schema: { querystring: { type: "object", properties: { n: { type: "integer" } } } } }, async (request) => request.query);
  return instance;
}

const requests = [
  { method: "POST" as const, url: "/things/7?limit=3", payload: { name: "Ada" } },
  { method: "POST" as const, url: "/things/7", payload: { name: "Ada", extra: true } },
  { method: "POST" as const, url: "/things/0", payload: { name: "Ada" } },
  { method: "POST" as const, url: "/things/abc", payload: { name: "Ada" } },
  { method: "POST" as const, url: "/things/7?limit=x", payload: { name: "Ada" } },
  { method: "POST" as const, url: "/things/7?unknown=1", payload: { name: "Ada" } },
  { method: "POST" as const, url: "/things/7", payload: { name: "A" } },
  { method: "POST" as const, url: "/things/7", payload: {} },
  { method: "GET" as const, url: "/other?n=5" },
  { method: "GET" as const, url: "/other?n=five" },
];

describe("lazySchemaCompilers", () => {
  it("answers every request exactly as Fastify's default compilers do", async () => {
    const eager = server(Fastify());
    const schemas = lazySchemaCompilers();
    const lazy = server(Fastify({ schemaController: schemas.schemaController }));
    await Promise.all([eager.ready(), lazy.ready()]);
    // Ready, and nothing built yet: params, querystring, body and a response of one route, the querystring of the other (GET and HEAD).
    expect(schemas.pending).toBe(6);
    for (const request of requests) {
      const [a, b] = [await eager.inject(request), await lazy.inject(request)];
      expect({ url: request.url, status: b.statusCode, body: b.json() as unknown }).toEqual({
        url: request.url,
        status: a.statusCode,
        body: a.json() as unknown,
      });
    }
    expect((await lazy.inject(requests[0]!)).json()).toEqual({ id: 7, limit: 3, name: "Ada", extra: false });
    // Built as requests needed them: all but HEAD /other's querystring.
    expect(schemas.pending).toBe(1);
    await Promise.all([eager.close(), lazy.close()]);
  });

  it("warm builds what no request needed yet, and reports a schema that cannot be built", async () => {
    const schemas = lazySchemaCompilers();
    const app = server(Fastify({ schemaController: schemas.schemaController }));
    app.get("/broken", { schema: { querystring: { type: "object", properties: { n: { type: "no-such-type" } } } } }, async () => ({}));
    await app.ready();
    expect(schemas.pending).toBe(8);
    const failures: Array<{ method: string; url: string }> = [];
    await schemas.warm((_error, route) => failures.push(route));
    expect(schemas.pending).toBe(0);
    expect(failures).toEqual([
      { method: "GET", url: "/broken" },
      { method: "HEAD", url: "/broken" },
    ]);
    expect((await app.inject({ method: "GET", url: "/other?n=5" })).json()).toEqual({ n: 5 });
    await app.close();
  });

  it("warm stops building once its signal aborts", async () => {
    const schemas = lazySchemaCompilers();
    const app = server(Fastify({ schemaController: schemas.schemaController }));
    await app.ready();
    const stop = new AbortController();
    const warming = schemas.warm(undefined, stop.signal);
    stop.abort();
    await warming;
    expect(schemas.pending).toBe(6);
    await app.close();
  });
});
