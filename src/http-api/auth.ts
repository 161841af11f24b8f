/**
 * API keys of the HTTP API: who is calling (`X-API-Key` or `Authorization: Bearer`), and
 * which sessions they may see. A key with a `userId` is scoped to that user (tenant); a key
 * without one is an admin key. Keys are compared in constant time (SHA-256 digests, every
 * configured key checked on every request).
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { isLoopbackAddress, isLoopbackClient, TrustedProxies } from "../net/index.js";
import { InternalError, InvalidInputError } from "../store/index.js";
import { HttpError } from "./error-handler.js";

/** An API key from the config. */
export interface ApiKey {
  /** The secret itself (at least 16 characters). */
  key: string;
  /** The user (tenant) this key is scoped to; absent or `null`: an admin key that sees everything. */
  userId?: string | null;
  /** A label for logs (never the key itself). */
  name?: string | null;
}

/** Who a request acts as. */
export interface ApiPrincipal {
  /** The key's label, or `null`. */
  name: string | null;
  /** The tenant whose sessions the request may see and change; `null`: all (admin). */
  userId: string | null;
  /** True when no key was required (`allowUnauthenticatedLoopback` with no keys configured). */
  unauthenticated: boolean;
}

/** Minimum length of an API key. */
export const MIN_API_KEY_LENGTH = 16;

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/**
 * Whether a host name is the local machine only: `localhost`, or a literal loopback address
 * (127.0.0.0/8, `::1`, `::ffff:127.x.y.z`, IPv6 in brackets or not). Parsed, never
 * prefix-matched: `127.evil.example` and `127.0.0.1.evil.example` are names, not loopback.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  return h === "localhost" || isLoopbackAddress(h);
}

/** Access settings of the API. */
export interface ApiAccess {
  keys: readonly ApiKey[];
  /** Without keys, serve unauthenticated (admin) requests, from loopback clients only, on a loopback host only. Default false. */
  allowUnauthenticatedLoopback?: boolean;
  /**
   * Reverse proxies (addresses or CIDR ranges) whose `Forwarded`/`X-Forwarded-For`/`X-Real-IP`
   * headers are believed: a keyless request through one counts as local only when the client
   * it names is a loopback address. Without it, any request with such a header is not local.
   */
  trustProxy?: readonly string[];
  /**
   * Set when keyless access must not be given at all (the gateway receives platform webhooks,
   * so it is reachable from outside): every keyless request answers 401 with this message.
   */
  keylessRefusal?: string | null;
}

/**
 * Checks access settings before the API starts: keys long enough and distinct; without
 * keys, `allowUnauthenticatedLoopback` must be set and `listenHost` (when known) must be a
 * loopback address. Throws {@link InvalidInputError} naming the config key.
 */
export function checkApiAccess(access: ApiAccess, listenHost?: string): void {
  const keys = access.keys;
  if (!Array.isArray(keys)) throw new InvalidInputError("api.keys must be a list of { key, userId?, name? }.", { field: "api.keys" });
  const seen = new Set<string>();
  keys.forEach((k, i) => {
    if (k === null || typeof k !== "object" || typeof k.key !== "string" || k.key.length < MIN_API_KEY_LENGTH) {
      throw new InvalidInputError(`api.keys.${i}.key: must be an API key of at least ${MIN_API_KEY_LENGTH} characters.`, { field: `api.keys.${i}.key` });
    }
    if (seen.has(k.key)) throw new InvalidInputError(`api.keys.${i}.key: the same key is listed twice.`, { field: `api.keys.${i}.key` });
    seen.add(k.key);
    if (k.userId !== undefined && k.userId !== null && (typeof k.userId !== "string" || k.userId === "")) {
      throw new InvalidInputError(`api.keys.${i}.userId: must be a non-empty user id.`, { field: `api.keys.${i}.userId` });
    }
  });
  if (keys.length > 0) return;
  if (access.allowUnauthenticatedLoopback !== true) {
    throw new InvalidInputError(
      "The HTTP API needs at least one key in api.keys (each { key: <16+ characters>, userId?: <tenant> }). " +
        "To run it without keys for clients on this machine only, set api.allowUnauthenticatedLoopback: true and listen on 127.0.0.1.",
      { field: "api.keys" },
    );
  }
  if (listenHost !== undefined && !isLoopbackHost(listenHost)) {
    throw new InvalidInputError(
      `api.allowUnauthenticatedLoopback: the API would listen on ${listenHost}, which is not a loopback address; ` +
        "configure api.keys, or listen on 127.0.0.1.",
      { field: "api.allowUnauthenticatedLoopback" },
    );
  }
}

/** Resolves the caller of a request from its headers. */
export class ApiKeyring {
  readonly #keys: Array<{ digest: Buffer; principal: ApiPrincipal }>;
  readonly #open: boolean;
  readonly #proxies: TrustedProxies;
  readonly #keylessRefusal: string | null;

  constructor(access: ApiAccess) {
    checkApiAccess(access);
    this.#proxies = new TrustedProxies(access.trustProxy ?? []);
    this.#keylessRefusal = access.keylessRefusal ?? null;
    this.#keys = access.keys.map((k) => ({ digest: digest(k.key), principal: { name: k.name ?? null, userId: k.userId ?? null, unauthenticated: false } }));
    this.#open = this.#keys.length === 0 && access.allowUnauthenticatedLoopback === true;
  }

  /** The caller, or an {@link HttpError}: 401 without credentials, 403 with a wrong key. */
  authenticate(request: FastifyRequest): ApiPrincipal {
    if (this.#open) {
      if (this.#keylessRefusal !== null) throw new HttpError("TL_ERR_UNAUTHORIZED", this.#keylessRefusal);
      if (!isLoopbackClient(request, this.#proxies)) {
        throw new HttpError(
          "TL_ERR_UNAUTHORIZED",
          "This API accepts requests without a key from this machine only, and this request came from another machine or through a proxy " +
            "(Forwarded/X-Forwarded-For/X-Real-IP). Configure api.keys and send one as X-API-Key, or list a proxy on this machine in gateway.trustProxy.",
        );
      }
      return { name: null, userId: null, unauthenticated: true };
    }
    const presented = presentedKey(request);
    if (presented === null) {
      throw new HttpError("TL_ERR_UNAUTHORIZED", "An API key is required: send it as X-API-Key: <key> or Authorization: Bearer <key>.", {
        headers: { "www-authenticate": 'Bearer realm="threadline"' },
      });
    }
    const given = digest(presented);
    let found: ApiPrincipal | null = null;
    for (const entry of this.#keys) {
      // Every key is compared (no early exit), each in constant time.
      if (timingSafeEqual(entry.digest, given) && found === null) found = entry.principal;
    }
    if (found === null) throw new HttpError("TL_ERR_FORBIDDEN", "The API key is not valid.");
    return found;
  }
}

/** The key a request presents (`X-API-Key`, else a bearer token), or `null` when it presents none. */
function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers["x-api-key"];
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (typeof apiKey === "string" && apiKey.trim() !== "") return apiKey.trim();
  const match = /^Bearer\s+(\S+)\s*$/iu.exec(request.headers.authorization ?? "");
  return match === null ? null : match[1]!;
}

const principals = new WeakMap<FastifyRequest, ApiPrincipal>();

/** Records the caller of a request (the auth hook does). */
export function setPrincipal(request: FastifyRequest, principal: ApiPrincipal): void {
  principals.set(request, principal);
}

/** The caller of an authenticated request. */
export function principalOf(request: FastifyRequest): ApiPrincipal {
  const principal = principals.get(request);
  if (principal === undefined) throw new InternalError("An API request reached a route without a principal: the auth hook did not run for it");
  return principal;
}

/** The `{ userId }` scope of a request: `{}` for admin keys. */
export function scopeOf(request: FastifyRequest): { userId?: string } {
  const { userId } = principalOf(request);
  return userId === null ? {} : { userId };
}

/** Refuses requests of scoped keys (routes about the whole database). */
export function requireAdmin(request: FastifyRequest): void {
  if (principalOf(request).userId !== null) {
    throw new HttpError("TL_ERR_FORBIDDEN", "This route needs an admin key (a key without userId).");
  }
}
