/**
 * The web page (issue 14) as a Fastify plugin: `index.html` for the mount path and every
 * path under it (so deep links such as `/ui/sessions/<id>` load the page), and the bundled
 * assets (`dist/web/`, built by `scripts/build-web.mjs`) under `assets/` with hashed names.
 *
 * Headers: a strict Content-Security-Policy (only this origin's scripts and styles, no
 * inline script, no eval, no framing; images from this origin and `blob:` URLs, audio and
 * video from `blob:` URLs only), `X-Content-Type-Options: nosniff`, no referrer;
 * `Cache-Control: no-cache` for the page and `immutable` for the hashed assets.
 *
 * The page finds its API and its own root through relative URLs only (a per-request
 * `<base href>` and a `<meta name="threadline-api">` relative to the mount), so it works
 * behind a reverse proxy that adds a path prefix.
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { notFoundHandler } from "../error-handler.js";

/** Options of {@link uiRoutes}. */
export interface UiOptions {
  /**
   * Server path of the HTTP API the page calls (the `prefix` it is registered with):
   * `""` for `/sessions`, `/api` for `/api/sessions`. Must be on the same server.
   */
  apiPrefix: string;
  /** Folder with the built page (default: `dist/web` of this package). */
  assetsDir?: string;
}

/** The Content-Security-Policy of the page and its assets. */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Attachments are fetched with the API key and shown from blob: URLs; nothing remote, no data: URLs.
  "img-src 'self' blob:",
  "media-src blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const IMMUTABLE = "public, max-age=31536000, immutable";
const TYPES: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

interface BuiltPage {
  /** index.html with `__BASE__` and `__API__` still to fill in. */
  template: string;
  assets: Map<string, { body: Buffer; type: string }>;
}

function defaultAssetsDir(): string | null {
  // dist/http-api/ui/ui-routes.js → dist/web; src/http-api/ui/ui-routes.ts (tests on the source) → dist/web.
  for (const candidate of ["../../web/", "../../../dist/web/"]) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(`${dir}manifest.json`)) return dir;
  }
  return null;
}

function loadPage(dir: string | null): BuiltPage | null {
  if (dir === null) return null;
  const folder = dir.endsWith("/") ? dir : `${dir}/`;
  if (!existsSync(`${folder}manifest.json`)) return null;
  const manifest = JSON.parse(readFileSync(`${folder}manifest.json`, "utf8")) as Record<string, string>;
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const [ext, name] of Object.entries(manifest)) {
    if (!/^[\w.-]+$/u.test(name) || TYPES[ext] === undefined) continue;
    assets.set(name, { body: readFileSync(`${folder}${name}`), type: TYPES[ext]! });
  }
  return { template: readFileSync(`${folder}index.html`, "utf8"), assets };
}

const segments = (path: string): string[] => path.split("/").filter((s) => s !== "");

/** The relative URL from the folder `from/` to the folder `to/` (both server paths). */
export function relativeFolder(from: string, to: string): string {
  const a = segments(from);
  const b = segments(to);
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  const rel =
    "../".repeat(a.length - common) +
    b
      .slice(common)
      .map((s) => `${s}/`)
      .join("");
  return rel === "" ? "./" : rel;
}

/**
 * The `<base href>` of a page request: the mount folder relative to the requested path
 * (`/ui` → `ui/`, `/ui/` → `./`, `/ui/sessions/x` → `../`).
 */
export function baseHref(mount: string, requestPath: string): string {
  const rest = requestPath.slice(mount.length);
  if (rest === "") return `${segments(mount).at(-1) ?? "."}/`;
  const depth = (rest.match(/\//gu)?.length ?? 1) - 1;
  return depth === 0 ? "./" : "../".repeat(depth);
}

const escapeAttr = (value: string): string => value.replace(/[&"<>]/gu, (c) => ({ "&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;" })[c]!);

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header("content-security-policy", UI_CONTENT_SECURITY_POLICY)
    .header("x-content-type-options", "nosniff")
    .header("x-frame-options", "DENY")
    .header("referrer-policy", "no-referrer")
    .header("cross-origin-opener-policy", "same-origin");
}

/**
 * The web page as a Fastify plugin: register it with the mount `prefix` (`/ui`) on the
 * server that also serves the API (at `apiPrefix`).
 *
 * @example
 * await app.register(uiRoutes, { prefix: "/ui", apiPrefix: "" });
 */
export const uiRoutes: FastifyPluginAsync<UiOptions> = async (ui, options) => {
  // The bundle is read when the page is first asked for, not while the server starts.
  const dir = options.assetsDir ?? defaultAssetsDir();
  let loaded: BuiltPage | null | undefined;
  const built = (): BuiltPage | null => (loaded === undefined ? (loaded = loadPage(dir)) : loaded);
  const mount = ui.prefix;
  const apiHref = relativeFolder(mount, options.apiPrefix);

  ui.get("/assets/:name", async (request, reply) => {
    const asset = built()?.assets.get((request.params as { name: string }).name);
    securityHeaders(reply);
    if (asset === undefined) return reply.code(404).header("cache-control", "no-cache").type("text/plain; charset=utf-8").send("Not found\n");
    return reply.header("cache-control", IMMUTABLE).type(asset.type).send(asset.body);
  });

  const servePage = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    securityHeaders(reply).header("cache-control", "no-cache");
    const page = built();
    if (page === null) {
      return reply
        .code(503)
        .type("text/plain; charset=utf-8")
        .send("The Threadline web page is not built: run `npm run build` (it bundles src/web into dist/web).\n");
    }
    const path = request.url.split("?")[0]!;
    // An unknown API route under the mount (the page's own API at /ui/api) is a 404, not the page.
    if (options.apiPrefix.startsWith(`${mount}/`) && path.startsWith(`${options.apiPrefix}/`)) {
      return notFoundHandler(request, reply);
    }
    const html = page.template.replace("__BASE__", escapeAttr(baseHref(mount, path))).replace("__API__", escapeAttr(apiHref));
    return reply.type("text/html; charset=utf-8").send(html);
  };
  ui.get("/", servePage);
  ui.get("/*", servePage);
};
