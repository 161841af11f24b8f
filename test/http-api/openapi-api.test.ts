/**
 * `GET /openapi.json` over real loopback HTTP: an OpenAPI 3.1 document that lists every
 * route the server answers (and nothing it does not), with parameters, bodies, responses
 * and references that resolve.
 */
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { call, closeServers, seed, startApi } from "./api-harness.js";
import { attach, PNG_BYTES } from "./attachment-fixtures.js";

afterEach(closeServers);

/** Every route of the API. */
const ROUTES = [
  "GET /sessions",
  "GET /sessions/{id}",
  "PATCH /sessions/{id}",
  "DELETE /sessions/{id}",
  "GET /sessions/{id}/messages",
  "PUT /sessions/{id}/title",
  "GET /sessions/{id}/export",
  "GET /sessions/{id}/lineage",
  "GET /sessions/{id}/delete-preview",
  "GET /sessions/{id}/attachments",
  "GET /sessions/{id}/attachments/{sha256}",
  "HEAD /sessions/{id}/attachments/{sha256}",
  "GET /search",
  "GET /export",
  "GET /stats",
  "GET /stats/usage",
  "GET /gateway/status",
  "GET /gateway/live",
  "GET /execution/history",
  "GET /execution/history/{id}",
  "DELETE /execution/history/{id}",
  "POST /execution/history/{id}/messages",
  "POST /execution/history/cleanup",
  "GET /pairing",
  "POST /pairing/approve",
  "DELETE /pairing/{platform}/{userId}",
  "GET /memory",
  "GET /memory/{platform}/{userId}",
  "PUT /memory/{platform}/{userId}/{kind}",
  "DELETE /memory/{platform}/{userId}/{kind}",
  "DELETE /memory/{platform}/{userId}",
  "GET /openapi.json",
];

type Doc = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  security: unknown[];
};
type Operation = {
  operationId: string;
  summary: string;
  tags: string[];
  parameters?: Array<{ name: string; in: string; required: boolean; schema: unknown }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
};

function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, out);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

forEachBackend((backend) => {
  it("lists every route with its parameters, body and responses; every $ref resolves; no key needed", async () => {
    const { db } = await backend.fresh();
    const api = await startApi(db);
    const reply = await call<Doc>(api, "GET", "/openapi.json", { key: null });
    expect(reply.status).toBe(200);
    const doc = reply.body;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "Threadline HTTP API", version: expect.any(String) });
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(listed.sort()).toEqual([...ROUTES].sort());
    expect(doc.components.securitySchemes).toMatchObject({
      apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
      bearer: { type: "http", scheme: "bearer" },
    });
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method} ${path}`;
        expect(op.operationId, where).toMatch(/^\w+$/);
        expect(ids.has(op.operationId), where).toBe(false);
        ids.add(op.operationId);
        expect(op.summary, where).not.toBe("");
        for (const name of path.match(/\{(\w+)\}/gu) ?? []) {
          expect(
            op.parameters?.find((p) => p.in === "path" && `{${p.name}}` === name),
            where,
          ).toMatchObject({ required: true });
        }
        for (const [status, response] of Object.entries(op.responses)) {
          expect(Number(status), where).toBeGreaterThanOrEqual(200);
          expect(response.description, `${where} ${status}`).not.toBe("");
        }
        const success = Object.keys(op.responses).filter((s) => s.startsWith("2"));
        expect(success, where).toHaveLength(1);
        if (path === "/openapi.json") {
          expect(op.security).toEqual([]);
        } else {
          expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(["401", "403", "422", "500"]));
          expect(op.responses["401"]!.content!["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/Error" });
        }
        if (method === "post" || method === "put" || method === "patch") expect(op.requestBody, where).toBeDefined();
      }
    }
    for (const ref of refs(doc)) {
      const name = ref.replace("#/components/schemas/", "");
      expect(doc.components.schemas, ref).toHaveProperty([name]);
    }
    expect(doc.paths["/execution/history"]!["get"]!.parameters!.map((p) => p.name)).toEqual([
      "agent_name",
      "workflow_name",
      "include_steps",
      "limit",
      "offset",
    ]);
    expect(doc.paths["/execution/history"]!["get"]!.parameters!.find((p) => p.name === "limit")!.schema).toMatchObject({ minimum: 1, maximum: 100 });
    expect(doc.paths["/execution/history/{id}"]!["get"]!.responses).toHaveProperty(["400"]);
    expect(doc.paths["/export"]!["get"]!.responses["200"]!.content).toHaveProperty(["application/x-ndjson"]);
    expect(doc.paths["/execution/history/{id}/messages"]!["post"]!.responses).toHaveProperty(["201"]);
    expect(doc.paths["/sessions/{id}"]!["delete"]!.responses["204"]).toEqual({ description: "Deleted." });
  });

  it("every route it lists is served (none answers 'no route')", async () => {
    const { db } = await backend.fresh();
    await seed(db);
    // A pending code to approve (POST /pairing/approve), whose person DELETE /pairing/… then revokes.
    const asked = await db.requestPairingCode("telegram", "4242");
    const pairingCode = asked.kind === "code" ? asked.code : "";
    // Both memories of that person (PUT writes version 2 of one; the DELETEs clear one kind, then both).
    for (const kind of ["memory", "user"] as const) {
      await db.writeMemory({ owner: { platform: "telegram", userId: "4242" }, kind, entries: ["x"], expectedVersion: null });
    }
    const [photo] = await attach(db, "sess-alice-1", [{ bytes: PNG_BYTES, kind: "image", mimeType: "image/png" }]);
    const api = await startApi(db);
    // Deletes last, so that the other routes still find the session.
    for (const route of [...ROUTES.filter((r) => !r.startsWith("DELETE")), ...ROUTES.filter((r) => r.startsWith("DELETE"))]) {
      const [method, path] = route.split(" ") as [string, string];
      const concrete = path
        .replace("{id}", path.startsWith("/execution") ? "agent-calc-alice" : "sess-alice-1")
        .replace("{platform}", "telegram")
        .replace("{userId}", "4242")
        .replace("{kind}", "memory")
        .replace("{sha256}", photo!.sha256);
      const postBody =
        concrete === "/pairing/approve" ? { platform: "telegram", code: pairingCode } : concrete.endsWith("/cleanup") ? {} : { role: "user", content: "x" };
      const putBody = concrete.startsWith("/memory/") ? { entries: ["y"], expectedVersion: 1 } : { title: "t" };
      const body = method === "POST" || method === "PUT" || method === "PATCH" ? { body: method === "POST" ? postBody : putBody } : {};
      const reply = await call(api, method, `${concrete}${path === "/search" ? "?query=x" : ""}`, body);
      if (path.startsWith("/gateway/")) {
        // Served, but without a gateway in this server they answer so (gateway-live-api.test.ts covers them with one).
        expect(reply.body.error.message, route).toContain("served by `threadline serve` only");
        continue;
      }
      expect(reply.status, route).toBeLessThan(300);
    }
  });
});
