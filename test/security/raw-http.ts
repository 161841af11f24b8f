/**
 * A raw HTTP client for the security tests: node's `http.request`, so a test can send any
 * header a browser, a proxy or an attacker would (`Host`, `Origin`, `X-Forwarded-For`…,
 * which `fetch` does not let a caller set), and a body that is sent only in part.
 *
 * @module
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { withDeadline } from "../support/wait-for.js";

/** A response: status, headers, the body as text and, when it is JSON, parsed. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: unknown;
}

/** Options of {@link rawRequest}. */
export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** The body, sent whole. */
  body?: string;
  /** The socket's local address (e.g. a non-loopback address of this machine). */
  localAddress?: string;
  timeoutMs?: number;
}

/** Sends one request to `url` (`http://host:port/path`) and reads the whole response. */
export async function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  const target = new URL(url);
  const response = new Promise<RawResponse>((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? "GET",
        headers: { connection: "close", ...options.headers },
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
  return withDeadline(response, { timeoutMs: options.timeoutMs ?? 20_000, what: `${options.method ?? "GET"} ${url}` });
}

/**
 * Sends the headers of a request announcing a `declaredLength`-byte body and only `prefix`
 * of it, then waits for the response (the rest of the body is never sent). A server that
 * reads the body before it decides cannot answer: the deadline fails the test.
 */
export async function requestWithPartialBody(
  url: string,
  options: { method?: string; headers?: Record<string, string>; prefix: string; declaredLength: number; timeoutMs?: number },
): Promise<RawResponse> {
  const target = new URL(url);
  let destroy: () => void = () => {};
  const response = new Promise<RawResponse>((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: options.method ?? "POST",
        headers: { ...options.headers, "content-length": String(options.declaredLength), connection: "close" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          req.destroy();
        });
      },
    );
    destroy = () => req.destroy();
    req.on("error", (error) => reject(error));
    req.write(options.prefix);
  });
  try {
    return await withDeadline(response, { timeoutMs: options.timeoutMs ?? 10_000, what: `an answer to ${url} before the rest of the body is sent` });
  } finally {
    destroy();
  }
}
