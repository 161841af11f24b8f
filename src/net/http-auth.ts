/**
 * Request checks shared by the HTTP adapters: loopback detection (of an address, and of a
 * request's client, proxy headers included), bearer tokens and HMAC signatures, all
 * compared in constant time.
 *
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { BlockList, isIP } from "node:net";
import { InvalidInputError } from "../store/index.js";

/**
 * Whether an address is the local machine: an IPv4 literal in 127.0.0.0/8, `::1`, or an
 * IPv4-mapped `::ffff:127.x.y.z`. Parsed, never prefix-matched: `127.evil.example` is not
 * an address, so it is not loopback.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/gu, "");
  const family = isIP(a);
  if (family === 4) return a.startsWith("127.");
  if (family !== 6) return false;
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/u.exec(a);
  if (mapped !== null) return isIP(mapped[1]!) === 4 && mapped[1]!.startsWith("127.");
  // The same address as `URL` writes it: ::ffff:7f00:1.
  return /^(?:0{0,4}:){0,5}:?ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/u.test(a);
}

/** The headers a reverse proxy adds to name the client it forwards for. */
export const PROXY_HEADERS: readonly string[] = ["forwarded", "x-forwarded-for", "x-real-ip"];

/** The client addresses the proxy headers of a request name (`null`: it carries none); an unparseable entry is kept as written. */
export function forwardedClients(headers: IncomingHttpHeaders): string[] | null {
  const values = (name: string): string[] => {
    const value = headers[name];
    if (value === undefined) return [];
    return (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(","));
  };
  if (!PROXY_HEADERS.some((name) => headers[name] !== undefined)) return null;
  const clients: string[] = [];
  for (const element of values("forwarded")) {
    for (const pair of element.split(";")) {
      const match = /^\s*for\s*=\s*"?([^";]*)"?\s*$/iu.exec(pair);
      if (match === null) continue;
      // for="[::1]:1234", for=127.0.0.1:80, for=unknown, for=_hidden
      let node = match[1]!.trim();
      const bracketed = /^\[([^\]]+)\](?::\d+)?$/u.exec(node);
      if (bracketed !== null) node = bracketed[1]!;
      else if (/^[\d.]+:\d+$/u.test(node)) node = node.slice(0, node.lastIndexOf(":"));
      clients.push(node);
    }
  }
  for (const entry of [...values("x-forwarded-for"), ...values("x-real-ip")]) clients.push(entry.trim());
  // A header without any usable client (`Forwarded: proto=https`) still says "forwarded".
  return clients.length === 0 ? ["unknown"] : clients;
}

/** Addresses and CIDR ranges of trusted reverse proxies (`gateway.trustProxy`). */
export class TrustedProxies {
  readonly #list = new BlockList();
  readonly size: number;

  /** @throws {InvalidInputError} naming the entry when it is neither an IP address nor a CIDR range. */
  constructor(entries: readonly string[] = []) {
    for (const entry of entries) {
      const problem = trustProxyEntryProblem(entry);
      if (problem !== null) throw new InvalidInputError(`gateway.trustProxy: ${problem}`, { field: "gateway.trustProxy" });
      const [address, bits] = entry.trim().split("/") as [string, string | undefined];
      const type = isIP(address) === 6 ? "ipv6" : "ipv4";
      if (bits === undefined) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, Number(bits), type);
    }
    this.size = entries.length;
  }

  /** Whether a socket address belongs to a trusted proxy. */
  has(address: string | undefined): boolean {
    if (address === undefined || this.size === 0) return false;
    const plain = address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/iu, "$1");
    const family = isIP(plain);
    if (family === 0) return false;
    return this.#list.check(plain, family === 6 ? "ipv6" : "ipv4");
  }
}

/** Why a `gateway.trustProxy` entry is not an IP address or CIDR range (`null`: it is one). */
export function trustProxyEntryProblem(entry: string): string | null {
  const [address, bits, extra] = entry.trim().split("/");
  const family = isIP(address ?? "");
  const max = family === 6 ? 128 : 32;
  if (family === 0 || extra !== undefined || (bits !== undefined && (!/^\d{1,3}$/u.test(bits) || Number(bits) > max))) {
    return `${JSON.stringify(entry)} is not an IP address or a CIDR range such as 127.0.0.1 or 10.0.0.0/8`;
  }
  return null;
}

/** The parts of a request {@link isLoopbackClient} reads. */
export interface ClientRequestLike {
  socket: { remoteAddress?: string | undefined };
  headers: IncomingHttpHeaders;
}

/**
 * Whether the client of a request is on this machine. The socket must come from a loopback
 * address; a request that carries `Forwarded`, `X-Forwarded-For` or `X-Real-IP` came through
 * a proxy and is not local, unless its socket address is a trusted proxy (`trustProxy`) and
 * every client those headers name is a loopback address.
 */
export function isLoopbackClient(request: ClientRequestLike, trustProxy?: TrustedProxies | null): boolean {
  const socketAddress = request.socket.remoteAddress;
  if (!isLoopbackAddress(socketAddress)) return false;
  const clients = forwardedClients(request.headers);
  if (clients === null) return true;
  if (trustProxy == null || !trustProxy.has(socketAddress)) return false;
  return clients.every((client) => isLoopbackAddress(client));
}

/** Whether two secrets are equal, compared in constant time (over SHA-256 digests, so lengths do not leak either). */
export function secretsEqual(a: string, b: string): boolean {
  const left = createHmac("sha256", "threadline-compare").update(a, "utf8").digest();
  const right = createHmac("sha256", "threadline-compare").update(b, "utf8").digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

const equalSecret = secretsEqual;

/**
 * The index of the token an `Authorization: Bearer <token>` header carries, or -1. Every
 * token is compared (no early exit), each in constant time.
 */
export function bearerIndex(header: string | undefined, tokens: readonly string[]): number {
  const match = /^Bearer\s+(\S+)\s*$/iu.exec(header ?? "");
  if (match === null) return -1;
  let found = -1;
  tokens.forEach((token, i) => {
    if (equalSecret(match[1]!, token) && found === -1) found = i;
  });
  return found;
}

/** Whether an `Authorization` header carries one of the tokens (`Bearer <token>`). */
export function bearerMatches(header: string | undefined, tokens: readonly string[]): boolean {
  return bearerIndex(header, tokens) !== -1;
}

/** The signature header value for a body: `sha256=<hex HMAC-SHA256(secret, body)>`. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** Whether a signature header matches the body. */
export function signatureMatches(secret: string, body: string, header: string | undefined): boolean {
  if (typeof header !== "string") return false;
  return equalSecret(signBody(secret, body), header.trim());
}
