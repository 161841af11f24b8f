/**
 * The Slack Events API endpoint on the gateway's own Fastify server: a Bolt `Receiver`
 * fed from a Fastify route. Everything Slack-specific is Bolt's own code
 * (`HTTPModuleFunctions.parseAndVerifyHTTPRequest`: the `v0` signature over the raw body
 * and the 5-minute replay window; `HTTPResponseAck`; `App.processEvent`), exactly as
 * Bolt's `HTTPReceiver` uses it — only the HTTP server is the gateway's.
 *
 * - an unsigned, mis-signed or stale request gets 401 (and is logged without its body);
 * - `url_verification` is answered with its challenge, `ssl_check` with 200;
 * - events are acknowledged after the listener has handed the message to the gateway
 *   (`processBeforeResponse`): that is once it is stored, not after the turn, so the 200
 *   comes fast and a crash before it makes Slack retry instead of losing the message.
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import type { App, Receiver, ReceiverEvent, Logger as BoltLogger } from "@slack/bolt";
import type { FastifyInstance } from "fastify";

type Bolt = typeof import("@slack/bolt");

/** Options of a {@link SlackEventsRoute}. */
export interface SlackEventsRouteOptions {
  /** The app's signing secret (never logged). */
  signingSecret: string;
  /** The route path, e.g. `/slack/events`. */
  path: string;
  logger: BoltLogger;
  /** Whether events are taken now (false while the gateway drains: the route answers 503 and Slack retries later). */
  accepting: () => boolean;
  /** The largest body accepted, in bytes (default Bolt's 4 MB). */
  bodyLimit?: number;
}

/** A Bolt receiver whose HTTP side is a route on the gateway's Fastify server. */
export class SlackEventsRoute implements Receiver {
  readonly #bolt: Bolt;
  readonly #options: SlackEventsRouteOptions;
  #app: App | null = null;

  constructor(bolt: Bolt, options: SlackEventsRouteOptions) {
    this.#bolt = bolt;
    this.#options = options;
  }

  /** Called by Bolt's `App` constructor. */
  init(app: App): void {
    this.#app = app;
  }

  /** Nothing to start: the gateway's server listens. */
  async start(): Promise<void> {}

  /** Nothing to stop: the gateway's server closes. */
  async stop(): Promise<void> {}

  /** Mounts `POST <path>` on `http` (call before it listens). The body is kept raw for the signature check. */
  routes(http: FastifyInstance): void {
    const bodyLimit = this.#options.bodyLimit ?? this.#bolt.defaultBodyLimit;
    void http.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit }, (_request, body, done) => done(null, body));
      scope.post(this.#options.path, async (request, reply) => {
        if (!this.#options.accepting() || this.#app === null) return reply.code(503).send({ error: "not receiving" });
        const { HTTPModuleFunctions: http, HTTPResponseAck } = this.#bolt;
        const log = this.#options.logger;
        const raw = request.raw as IncomingMessage & { rawBody?: Buffer };
        raw.rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        let buffered: Awaited<ReturnType<typeof http.parseAndVerifyHTTPRequest>>;
        try {
          buffered = await http.parseAndVerifyHTTPRequest({ signingSecret: this.#options.signingSecret }, raw);
        } catch (error) {
          log.warn(`slack: request refused (${(error as Error).message})`);
          return reply.code(401).send();
        }
        let body: Record<string, unknown>;
        try {
          body = http.parseHTTPRequestBody(buffered) as Record<string, unknown>;
        } catch (error) {
          log.warn(`slack: malformed request body (${(error as Error).message})`);
          return reply.code(400).send();
        }
        if (body["ssl_check"] === "1") return reply.code(200).send();
        if (body["type"] === "url_verification") return reply.code(200).send({ challenge: body["challenge"] });
        reply.hijack();
        const ack = new HTTPResponseAck({ logger: log, processBeforeResponse: true, httpRequest: buffered, httpRequestBody: body, httpResponse: reply.raw });
        const event: ReceiverEvent = {
          body,
          ack: ack.bind(),
          retryNum: http.extractRetryNumFromHTTPRequest(raw),
          retryReason: http.extractRetryReasonFromHTTPRequest(raw),
          customProperties: {},
        };
        try {
          await this.#app.processEvent(event);
          if (ack.storedResponse !== undefined) http.buildContentResponse(reply.raw, ack.storedResponse);
          else if (!reply.raw.headersSent) http.buildNoBodyResponse(reply.raw, 200);
        } catch (error) {
          const handled = await http.defaultProcessEventErrorHandler({
            error: error as Error,
            logger: log,
            request: raw,
            response: reply.raw,
            storedResponse: ack.storedResponse,
          } as Parameters<typeof http.defaultProcessEventErrorHandler>[0]);
          if (handled) ack.ack();
        }
      });
    });
  }
}
