/**
 * DNS-rebinding protection of the MCP HTTP endpoint, as the MCP SDK recommends for local
 * servers (its `hostHeaderValidation` middleware, port-agnostic): a web page whose domain was
 * re-pointed at 127.0.0.1 reaches a local server with its own name in `Host` (and its own
 * origin in `Origin`), so a request is refused unless `Host` names an allowed host and any
 * `Origin` it carries is one too.
 *
 * @module
 */
import { hostnameAllowed, isLoopbackHost, normaliseHostname as normalise } from "../http-api/internal.js";

/** The names a loopback server answers to. */
export const LOOPBACK_HOSTNAMES: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/** Which hosts a request may name. */
export interface HostPolicy {
  /** Allowed hostnames (no port; IPv6 in brackets); `null`: any Host (then Origin must match Host). */
  hostnames: readonly string[] | null;
}

/**
 * The policy for a server listening on `listenHost`: a loopback server accepts only loopback
 * names (plus `extra`); a server on another address accepts its own address and `extra`, or
 * any name when it listens on every address (`0.0.0.0`, `::`) and no `extra` is given — it
 * requires API keys then, which a rebinding page cannot send.
 */
export function hostPolicyFor(listenHost: string, extra: readonly string[] = []): HostPolicy {
  const named = extra.map(normaliseHostname);
  if (isLoopbackHost(listenHost)) return { hostnames: [...LOOPBACK_HOSTNAMES, ...named] };
  const wildcard = listenHost === "0.0.0.0" || listenHost === "::" || listenHost === "[::]";
  if (wildcard && named.length === 0) return { hostnames: null };
  return { hostnames: [...(wildcard ? [] : [normaliseHostname(listenHost)]), ...named] };
}

/** A hostname as `URL` gives it (lower case, IPv6 in brackets). */
function normaliseHostname(name: string): string {
  return normalise(name) ?? name.trim().toLowerCase();
}

function hostnameOf(value: string, withScheme: boolean): string | null {
  try {
    return new URL(withScheme ? value : `http://${value}`).hostname;
  } catch {
    return null;
  }
}

/**
 * Why a request with these `Host` and `Origin` headers is refused, or `null` when it is
 * allowed. A request without `Origin` (any non-browser client) is judged by `Host` alone.
 */
export function rebindingRefusal(policy: HostPolicy, host: string | undefined, origin: string | undefined): string | null {
  if (host === undefined || host === "") return "Missing Host header.";
  const hostname = hostnameOf(host, false);
  if (hostname === null) return `Invalid Host header: ${host}.`;
  // A loopback policy takes every literal loopback address (127.0.0.2, [::ffff:127.0.0.1]) too,
  // the way the gateway's own Host check does (server/request-guard.ts); never a name like 127.evil.example.
  const loopbackPolicy = policy.hostnames?.includes("localhost") === true;
  const hostAllowed = policy.hostnames === null || policy.hostnames.includes(hostname) || (loopbackPolicy && hostnameAllowed(hostname, []));
  if (!hostAllowed) {
    return `Invalid Host: ${hostname} is not a name of this server (allowed: ${policy.hostnames!.join(", ")}; add one with --allowed-host).`;
  }
  if (origin === undefined || origin === "") return null;
  const originHost = origin === "null" ? null : hostnameOf(origin, true);
  const allowed = policy.hostnames ?? [hostname];
  if (originHost === null || !allowed.includes(originHost)) return `Invalid Origin: ${origin} may not call this server.`;
  return null;
}
