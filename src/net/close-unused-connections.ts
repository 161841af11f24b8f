/**
 * Closing a server without waiting for connections that never sent a request.
 *
 * `server.close()` waits for every open connection, and `closeIdleConnections()` (what
 * Fastify's `forceCloseConnections: "idle"` calls) ends only those that finished a request.
 * A browser opens spare connections ahead of need (Chromium's preconnect) and may never use
 * them: each held `close()` until Node's `headersTimeout` (60 s) ended it. This tracks the
 * connections that have not sent a request yet and ends them when the server closes, so a
 * shutdown waits only for requests actually running; and the connection of a request that was
 * running when closing started ends once its answer is sent, instead of being kept alive.
 *
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Tracks `server`'s connections that have not sent a request, and returns a function that ends
 * them and every connection opened after: call it when the server starts closing.
 */
export function trackUnusedConnections(server: Server): () => void {
  const unused = new Set<Socket>();
  let closing = false;
  server.on("connection", (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    unused.add(socket);
    socket.once("close", () => unused.delete(socket));
  });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    unused.delete(request.socket);
    // A request running when closing starts gets its answer, then its connection ends: kept
    // alive, it would hold close() for Fastify's keep-alive timeout (72 s).
    response.once("finish", () => {
      if (closing) request.socket.end();
    });
  });
  return () => {
    closing = true;
    for (const socket of unused) socket.destroy();
    unused.clear();
  };
}
