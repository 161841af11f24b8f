/**
 * The WhatsApp webhook endpoint on the gateway's own Fastify server (one path, two methods):
 *
 * - `GET <path>?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…` — Meta's verification
 *   handshake when the callback URL is saved: the challenge is echoed (200, text/plain) when
 *   the verify token matches, else 403.
 * - `POST <path>` — a notification. The raw body is kept and checked against
 *   `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>` (constant-time
 *   compare); a missing or wrong signature gets 401 and nothing else happens. While the
 *   gateway is not receiving (a drain) the route answers 503, so Meta delivers again later;
 *   otherwise the payload is handed over and the route answers with the status `deliver`
 *   resolves to (200 once every message is stored; 500/503 makes Meta retry).
 *
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { GatewayLogger } from "../../gateway/index.js";

/** Options of {@link mountWhatsAppWebhook}. */
export interface WhatsAppWebhookRouteOptions {
  /** The route path, e.g. `/whatsapp/webhook`. */
  path: string;
  /** The app secret: the key of the `X-Hub-Signature-256` HMAC (never logged). */
  appSecret: string;
  /** The verify token of the GET handshake (never logged). */
  verifyToken: string;
  /** Whether notifications are taken now (false before connect and while draining: 503). */
  accepting: () => boolean;
  /** Handles a verified, parsed notification; resolves with the HTTP status to answer. */
  deliver: (payload: unknown) => Promise<number>;
  logger: GatewayLogger;
  /** The largest body accepted, in bytes (default 3 MB). */
  bodyLimit?: number;
}

/** Whether `header` is the `X-Hub-Signature-256` of `rawBody` under `appSecret` (constant-time). */
export function verifyWhatsAppSignature(appSecret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (typeof header !== "string") return false;
  const match = /^sha256=([0-9a-f]{64})$/iu.exec(header.trim());
  if (match === null) return false;
  const expected = createHmac("sha256", appSecret).update(rawBody).digest();
  const given = Buffer.from(match[1]!, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether two strings are equal, in time independent of where they differ. */
function sameSecret(a: string, b: string): boolean {
  const x = createHmac("sha256", "whatsapp-verify").update(a).digest();
  const y = createHmac("sha256", "whatsapp-verify").update(b).digest();
  return timingSafeEqual(x, y);
}

/** Mounts `GET` and `POST <path>` on `http` (call before it listens). */
export function mountWhatsAppWebhook(http: FastifyInstance, options: WhatsAppWebhookRouteOptions): void {
  const log = options.logger;
  void http.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: options.bodyLimit ?? 3 * 1024 * 1024 }, (_request, body, done) => done(null, body));

    scope.get(options.path, async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      const mode = query["hub.mode"];
      const token = query["hub.verify_token"];
      const challenge = query["hub.challenge"];
      if (mode === "subscribe" && typeof token === "string" && typeof challenge === "string" && sameSecret(token, options.verifyToken)) {
        log.info({ platform: "whatsapp" }, "whatsapp: webhook verified by Meta (the verify token matched)");
        return reply.code(200).header("content-type", "text/plain; charset=utf-8").send(challenge);
      }
      log.warn(
        { platform: "whatsapp", mode: mode ?? null },
        "whatsapp: webhook verification refused (wrong or missing hub.verify_token, or hub.mode is not subscribe)",
      );
      return reply.code(403).send({ error: "verification failed" });
    });

    scope.post(options.path, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers["x-hub-signature-256"];
      if (!verifyWhatsAppSignature(options.appSecret, raw, Array.isArray(header) ? header[0] : header)) {
        log.warn(
          { platform: "whatsapp", signature: header === undefined ? "missing" : "wrong" },
          "whatsapp: webhook refused: X-Hub-Signature-256 does not match the app secret",
        );
        return reply.code(401).send({ error: "invalid signature" });
      }
      if (!options.accepting()) return reply.code(503).send({ error: "not receiving" });
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString("utf8"));
      } catch (error) {
        log.warn({ platform: "whatsapp" }, `whatsapp: malformed webhook body (${(error as Error).message})`);
        return reply.code(400).send({ error: "malformed JSON" });
      }
      const status = await options.deliver(payload);
      return reply.code(status).send(status === 200 ? "EVENT_RECEIVED" : { error: status === 503 ? "not receiving" : "not stored; send it again" });
    });
  });
}
