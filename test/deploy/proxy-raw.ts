/**
 * Raw requests, for what `fetch` and `node:https` will not send or cannot report: over TLS,
 * a `Content-Length` without its body (the body-size limit is checked on the headers), a Host
 * that differs from the TLS server name, no server name at all, and a handshake the proxy
 * refuses; over plain HTTP, a Host other than the URL's.
 *
 * @module
 */
import { request as httpRequest } from "node:http";
import { connect } from "node:tls";
import { PUBLIC_NAME } from "./proxy-process.js";

/** How a raw exchange ended: the response head nginx sent, or how the connection failed. */
export interface RawOutcome {
  /** The status line and headers (up to the blank line), or `""` when nothing came. */
  head: string;
  /** The HTTP status, or `null` when no response came. */
  status: number | null;
  /** The connection or handshake error, if any (e.g. a TLS alert). */
  error: string | null;
}

/**
 * Connects to 127.0.0.1:`port` with `servername` as SNI (`null`: none, as a client that
 * connects by IP address; trusting `ca`), writes `head`
 * (request line and headers, CRLF-separated, without the blank line), and reads until the
 * response head is complete or the connection ends (at most 10 s).
 */
export function rawTlsExchange(port: number, ca: string, head: string, servername: string | null = PUBLIC_NAME): Promise<RawOutcome> {
  return new Promise((resolve) => {
    let received = "";
    let settled = false;
    const finish = (error: string | null): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const end = received.indexOf("\r\n\r\n");
      const responseHead = end === -1 ? received : received.slice(0, end);
      const match = /^HTTP\/1\.[01] (\d{3})/u.exec(responseHead);
      resolve({ head: responseHead, status: match === null ? null : Number(match[1]), error });
    };
    const socket = connect({ host: "127.0.0.1", port, ...(servername === null ? {} : { servername }), ca, timeout: 10_000 }, () => {
      socket.write(`${head}\r\n\r\n`);
    });
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (received.includes("\r\n\r\n")) finish(null);
    });
    socket.on("end", () => finish(null));
    socket.on("close", () => finish(null));
    socket.on("timeout", () => finish("no answer within 10 s"));
    socket.on("error", (error) => finish(error.message));
  });
}

/** A plain HTTP response read whole. */
export interface PlainResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A plain HTTP GET to 127.0.0.1:`port` with this exact `Host` (`fetch` will not send a Host
 * other than the URL's), at most 10 s.
 */
export function plainGet(port: number, path: string, host: string): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, headers: { host }, agent: false, timeout: 10_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer to GET ${path} on port ${port} within 10 s`)));
    req.on("error", reject);
    req.end();
  });
}
