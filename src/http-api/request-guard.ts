/**
 * The checks every request to a Threadline HTTP server passes before any work (an
 * `onRequest` hook, so before the body is even read):
 *
 * - `Host` must name this server: `localhost`, a literal loopback address (any port), a
 *   name listed in `gateway.publicHosts`, the host of a configured webhook URL, or the
 *   specific address the server listens on. Anything else is a DNS-rebinding page (or a
 *   misrouted request) and gets a 403 that names the config key to add.
 * - A state-changing request (POST, PUT, PATCH, DELETE) that carries browser headers must
 *   be same-origin: `Sec-Fetch-Site: cross-site` or an `Origin` other than the requested
 *   host (or a public host) gets a 403. Platform webhooks send no `Origin`, so they pass.
 *
 * The MCP endpoint's DNS-rebinding check (`src/mcp/dns-rebinding.ts`) uses the same host
 * matching ({@link hostnameAllowed}).
 *
 * @module
 */
import { networkInterfaces } from "node:os";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isLoopbackHost } from "./auth.js";

/** Which hosts a server answers to. */
export interface HostNames {
  /** Names (lower case, no port; IPv6 in brackets) besides the loopback names. */
  extra: readonly string[];
  /** The config key that lists more names, named in refusals (default `gateway.publicHosts`). */
  configKey?: string;
}

/** Methods that change state: checked for cross-site requests. */
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** A host name as `URL` gives it (lower case, IPv6 in brackets); `null` when it is not one. */
export function normaliseHostname(name: string): string | null {
  const trimmed = name.trim();
  if (trimmed === "") return null;
  const bracketed = trimmed.includes(":") && !trimmed.startsWith("[") ? `[${trimmed}]` : trimmed;
  try {
    return new URL(`http://${bracketed}`).hostname;
  } catch {
    return null;
  }
}

/** The hostname of a `Host` header value (port dropped), or `null` when it is not a valid host. */
export function hostnameOfHostHeader(host: string): string | null {
  try {
    const url = new URL(`http://${host.trim()}`);
    return url.username === "" && url.pathname === "/" && url.search === "" ? url.hostname : null;
  } catch {
    return null;
  }
}

/** Whether a hostname is `localhost`, a literal loopback address, or one of `extra`. */
export function hostnameAllowed(hostname: string, extra: readonly string[]): boolean {
  return isLoopbackHost(hostname) || extra.includes(hostname);
}

/**
 * The names a server listening on `listenHost` answers to besides the loopback names:
 * `publicHosts`, the hosts of `urls` (webhook URLs the platforms call), and `listenHost`
 * itself when it is a specific address — or, on `0.0.0.0`/`::`, this machine's interface
 * addresses.
 */
export function hostNamesFor(listenHost: string, publicHosts: readonly string[] = [], urls: ReadonlyArray<string | null | undefined> = []): string[] {
  const names = new Set<string>();
  for (const name of publicHosts) {
    const n = normaliseHostname(name);
    if (n !== null) names.add(n);
  }
  for (const url of urls) {
    if (typeof url !== "string") continue;
    try {
      names.add(new URL(url).hostname);
    } catch {
      // not a URL: the config check reports it
    }
  }
  const listen = normaliseHostname(listenHost);
  if (listen === "0.0.0.0" || listen === "[::]") {
    // Listening on every address: this machine's own addresses name it too (an IP literal cannot be rebound).
    for (const entry of Object.values(networkInterfaces()).flat()) {
      if (entry === undefined || entry.internal) continue;
      const n = normaliseHostname(entry.address.replace(/%.*$/u, ""));
      if (n !== null) names.add(n);
    }
  } else if (listen !== null && !isLoopbackHost(listen)) names.add(listen);
  return [...names];
}

/** Why a request naming this `Host` is refused, or `null` when it names this server. */
export function hostRefusal(names: HostNames, host: string | undefined): string | null {
  const key = names.configKey ?? "gateway.publicHosts";
  if (host === undefined || host.trim() === "") return "The request has no Host header; send the host name this server is reached under.";
  const hostname = hostnameOfHostHeader(host);
  if (hostname === null) return `The Host header ${JSON.stringify(host.slice(0, 100))} is not a host name.`;
  if (hostnameAllowed(hostname, names.extra)) return null;
  return (
    `This server does not answer to the host name ${hostname}: it answers to localhost and loopback addresses` +
    (names.extra.length > 0 ? `, ${names.extra.join(", ")}` : "") +
    `. If it is reached as ${hostname} (through a proxy or a DNS name you own), add "${hostname}" to ${key} in the config file.`
  );
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Why a state-changing request from a browser is refused as cross-site, or `null`. A
 * request is same-origin when its `Origin` names the host it was sent to (host and port),
 * or a name of `extra` (a public host a proxy serves); `Sec-Fetch-Site: cross-site` is
 * refused whatever `Origin` says. Requests without either header (curl, SDKs, platform
 * webhooks) are not browser requests and pass.
 */
export function crossSiteRefusal(names: HostNames, method: string, headers: FastifyRequest["headers"]): string | null {
  if (!STATE_CHANGING.has(method.toUpperCase())) return null;
  const fetchSite = first(headers["sec-fetch-site"])?.trim().toLowerCase();
  const origin = first(headers["origin"])?.trim();
  const refused = `A ${method.toUpperCase()} from another site is refused (cross-site request forgery): send it from this server's own page, or without browser Origin headers.`;
  if (fetchSite === "cross-site") return refused;
  if (origin === undefined || origin === "") return null;
  if (origin === "null") return refused;
  let originUrl: URL;
  try {
    originUrl = new URL(origin);
  } catch {
    return `The Origin header ${JSON.stringify(origin.slice(0, 100))} is not an origin.`;
  }
  const host = first(headers["host"]);
  let requested: string | null = null;
  try {
    requested = host === undefined ? null : new URL(`http://${host.trim()}`).host;
  } catch {
    requested = null;
  }
  if (requested !== null && originUrl.host === requested) return null;
  if (names.extra.includes(originUrl.hostname)) return null;
  return refused;
}

function refuse(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .code(403)
    .header("content-type", "application/json; charset=utf-8")
    .send({ error: { code: "TL_ERR_FORBIDDEN", type: "permission_error", message } });
}

/**
 * Adds the Host and cross-site checks to every route of `app` (an `onRequest` hook on the
 * root instance, so it runs before any route's own hooks, body parsing or handler).
 */
export function guardRequests(app: FastifyInstance, names: HostNames): void {
  app.addHook("onRequest", async (request, reply) => {
    const refusal = hostRefusal(names, first(request.headers.host)) ?? crossSiteRefusal(names, request.method, request.headers);
    if (refusal !== null) return refuse(reply, refusal);
    return undefined;
  });
}
