/**
 * What the server's API supports, read from its public `GET /openapi.json`: the query
 * parameters each route accepts. Views show a filter only when the server takes its
 * parameter (the API rejects unknown parameters with a 422), so the page works against an
 * older server and lights up new filters as soon as the server has them.
 *
 * @module
 */
import { apiUrl } from "./api-client.js";

interface OpenApiDoc {
  paths?: Record<string, Record<string, { parameters?: Array<{ name?: string; in?: string }> }>>;
}

let loaded: Promise<OpenApiDoc> | null = null;

function document_(): Promise<OpenApiDoc> {
  loaded ??= fetch(apiUrl("openapi.json"), { credentials: "omit" })
    .then((r) => (r.ok ? (r.json() as Promise<OpenApiDoc>) : {}))
    .catch(() => ({}));
  return loaded;
}

/**
 * The query parameters of `method path` (path as in the API docs, without prefix:
 * `/sessions`), or an empty set when the route or the document is missing.
 */
export async function queryParams(method: string, path: string): Promise<Set<string>> {
  const doc = await document_();
  const names = new Set<string>();
  for (const [key, ops] of Object.entries(doc.paths ?? {})) {
    // Paths in the document carry the server's api.prefix (`/api/sessions`).
    if (key !== path && !key.endsWith(path)) continue;
    for (const p of ops[method.toLowerCase()]?.parameters ?? []) if (p.in === "query" && typeof p.name === "string") names.add(p.name);
  }
  return names;
}

/** Whether the server has a route (`GET /stats`, …). */
export async function hasRoute(method: string, path: string): Promise<boolean> {
  const doc = await document_();
  return Object.entries(doc.paths ?? {}).some(([key, ops]) => (key === path || key.endsWith(path)) && ops[method.toLowerCase()] !== undefined);
}
