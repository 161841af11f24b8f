/**
 * A stand-in for the gateway behind a proxy example: a plain HTTP server on a free loopback
 * port that records every request that reaches it (method, path as sent, headers) and answers
 * 200. The security tests use it to see exactly what a shipped proxy lets through and what it
 * tells the upstream about the client.
 *
 * @module
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the upstream received it. */
export interface RecordedRequest {
  method: string;
  /** The request target as sent by the proxy (not normalised). */
  url: string;
  headers: IncomingHttpHeaders;
}

/** The running upstream. */
export interface RecordingUpstream {
  port: number;
  /** Every request so far, in arrival order (a live array). */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts a {@link RecordingUpstream} on 127.0.0.1. */
export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("upstream"));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
