/**
 * The `webhook` adapter: a platform-agnostic inbound JSON POST (chat id, user id, text,
 * thread id, message id) checked with an HMAC-SHA256 signature over a timestamp and the raw
 * body, and replies POSTed to a callback URL (signed the same way), retried with
 * exponential backoff.
 *
 * Signing (the scheme of Stripe and Slack): `X-Threadline-Timestamp: <unix seconds>` and
 * `X-Threadline-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`.
 * A request whose timestamp is more than 5 minutes away from the gateway's clock (in
 * either direction) is refused, so a captured request cannot be replayed later.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Adapter, ChatType, InboundHandler, OutboundMessage, SessionSource } from "../gateway/index.js";
import { InvalidInputError, PlatformError } from "../store/index.js";
import { signatureMatches, signBody } from "../net/index.js";

/** The header carrying `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. */
export const SIGNATURE_HEADER = "x-threadline-signature";
/** The header carrying the signing time, in whole seconds since 1970 (Unix time). */
export const TIMESTAMP_HEADER = "x-threadline-timestamp";
/** How far a request's timestamp may be from the receiver's clock, in seconds (5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * The headers that sign a webhook body: `X-Threadline-Timestamp` and
 * `X-Threadline-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.
 *
 * @example
 * const body = JSON.stringify({ chatId: "c1", userId: "u1", text: "hello" });
 * await fetch("http://127.0.0.1:8787/webhook", { method: "POST", headers: { "content-type": "application/json", ...signWebhook(secret, body) }, body });
 */
export function signWebhook(secret: string, body: string, timestampSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const timestamp = String(Math.floor(timestampSeconds));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signBody(secret, `${timestamp}.${body}`) };
}

/**
 * Why a signed webhook request is refused (`null`: it is valid): a missing or malformed
 * timestamp, one more than {@link WEBHOOK_TOLERANCE_SECONDS} from `nowSeconds`, or a
 * signature that does not match (compared in constant time).
 */
export function webhookSignatureProblem(
  secret: string,
  body: string | null,
  headers: { timestamp: string | undefined; signature: string | undefined },
  nowSeconds = Date.now() / 1000,
): string | null {
  const { timestamp, signature } = headers;
  if (signature === undefined) {
    return `Missing ${SIGNATURE_HEADER}: send ${TIMESTAMP_HEADER}: <Unix seconds> and ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256(shared secret, "<timestamp>.<raw body>")>.`;
  }
  if (timestamp === undefined || !/^\d{1,12}$/u.test(timestamp.trim())) {
    return `Missing or malformed ${TIMESTAMP_HEADER}: send the signing time in Unix seconds, and sign "<timestamp>.<raw body>".`;
  }
  const age = nowSeconds - Number(timestamp.trim());
  if (Math.abs(age) > WEBHOOK_TOLERANCE_SECONDS) {
    return `${TIMESTAMP_HEADER} is ${Math.round(Math.abs(age))} s ${age > 0 ? "old" : "in the future"}; requests are accepted within ${WEBHOOK_TOLERANCE_SECONDS} s of the gateway's clock (sign each request when it is sent, and keep clocks in sync).`;
  }
  if (body !== null && !signatureMatches(secret, `${timestamp.trim()}.${body}`, signature)) {
    return `Wrong ${SIGNATURE_HEADER}: sign "<timestamp>.<raw body>" with HMAC-SHA256 and the shared secret (sha256=<hex>).`;
  }
  return null;
}

/** Options of the webhook adapter. */
export interface WebhookAdapterOptions {
  /** The shared HMAC secret (required). */
  secret: string;
  /** Where replies are POSTed (none: replies are dropped, with a warning). */
  callbackUrl?: string | null;
  /** The inbound route (default `/webhook`). */
  path?: string;
  /** Delivery attempts per reply (default 5). */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt up to 30 s (default 500 ms). */
  retryBaseMs?: number;
  /** Told about a reply that could not be delivered after every attempt. */
  onDeliveryFailure?: (error: unknown, payload: unknown) => void;
  fetch?: typeof fetch;
  /** The clock, in ms since 1970 (default `Date.now`): checks request timestamps and signs replies. */
  now?: () => number;
}

const inboundSchema = z.object({
  chatId: z.string().min(1),
  userId: z.string().min(1),
  text: z.string(),
  threadId: z.string().min(1).nullish(),
  messageId: z.string().min(1).nullish(),
  userName: z.string().nullish(),
  chatName: z.string().nullish(),
  chatType: z.enum(["dm", "group", "channel", "thread"]).optional(),
});

/**
 * The webhook adapter.
 *
 * @example
 * body='{"chatId":"c1","userId":"u1","text":"hello","messageId":"m1"}'
 * ts=$(date +%s)
 * sig="sha256=$(printf %s "$ts.$body" | openssl dgst -sha256 -hmac "$SECRET" -hex | cut -d' ' -f2)"
 * curl -s localhost:8787/webhook -H "X-Threadline-Timestamp: $ts" -H "X-Threadline-Signature: $sig" \
 *   -H 'Content-Type: application/json' -d "$body"
 */
export class WebhookAdapter implements Adapter {
  readonly platform = "webhook";
  readonly #secret: string;
  readonly #callback: string | null;
  readonly #path: string;
  readonly #attempts: number;
  readonly #baseMs: number;
  readonly #onFailure: (error: unknown, payload: unknown) => void;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #chains = new Map<string, Promise<void>>();
  #handler: InboundHandler | null = null;
  #closing = false;

  constructor(options: WebhookAdapterOptions) {
    if (typeof options.secret !== "string" || options.secret.length < 16) {
      throw new InvalidInputError("adapters.webhook.secret must be a string of at least 16 characters (it signs every request).", {
        field: "adapters.webhook.secret",
      });
    }
    this.#secret = options.secret;
    this.#callback = options.callbackUrl ?? null;
    this.#path = options.path ?? "/webhook";
    this.#attempts = options.maxAttempts ?? 5;
    this.#baseMs = options.retryBaseMs ?? 500;
    this.#onFailure = options.onDeliveryFailure ?? (() => {});
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
  }

  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
    this.#closing = false;
  }

  /** Stops receiving and waits for replies still being delivered. */
  async disconnect(): Promise<void> {
    this.#handler = null;
    this.#closing = true;
    await Promise.allSettled([...this.#chains.values()]);
  }

  /** Queues a reply for delivery (in order per chat) and returns at once. */
  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId: null }> {
    const payload = {
      chatId: source.chatId ?? null,
      userId: source.userId ?? null,
      threadId: source.threadId ?? null,
      text: message.text,
      kind: message.kind,
      inReplyTo: message.inReplyTo,
      sessionId: message.sessionId ?? null,
    };
    if (this.#callback === null) {
      this.#onFailure(
        new InvalidInputError("No adapters.webhook.callbackUrl is configured, so the reply was not delivered; set it to the URL that takes replies.", {
          field: "adapters.webhook.callbackUrl",
        }),
        payload,
      );
      return { messageId: null };
    }
    const chat = `${source.chatId ?? ""}`;
    const previous = this.#chains.get(chat) ?? Promise.resolve();
    const next = previous.then(() => this.#deliver(payload));
    this.#chains.set(chat, next);
    void next.finally(() => {
      if (this.#chains.get(chat) === next) this.#chains.delete(chat);
    });
    return { messageId: null };
  }

  async #deliver(payload: unknown): Promise<void> {
    const body = JSON.stringify(payload);
    let lastError: unknown = null;
    for (let attempt = 1; attempt <= this.#attempts; attempt++) {
      try {
        const response = await this.#fetch(this.#callback!, {
          method: "POST",
          // Signed per attempt, so a retry carries a fresh timestamp.
          headers: { "content-type": "application/json", ...signWebhook(this.#secret, body, this.#now() / 1000) },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        if (response.ok) return;
        lastError = new PlatformError("webhook", `The webhook callback answered HTTP ${response.status}; check the service at adapters.webhook.callbackUrl.`);
        if (response.status < 500 && response.status !== 429) break;
      } catch (error) {
        lastError = error;
      }
      if (attempt < this.#attempts) {
        const delay = Math.min(30_000, this.#baseMs * 2 ** (attempt - 1));
        await new Promise((resolve) => setTimeout(resolve, this.#closing ? Math.min(delay, 50) : delay));
      }
    }
    this.#onFailure(lastError, payload);
  }

  /** Registers the inbound route (with its own raw-body JSON parser for the signature check). */
  routes(app: FastifyInstance): void {
    void app.register(async (scope) => {
      scope.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => done(null, body));
      const one = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
      const headersOf = (request: FastifyRequest): { timestamp: string | undefined; signature: string | undefined } => ({
        timestamp: one(request.headers[TIMESTAMP_HEADER]),
        signature: one(request.headers[SIGNATURE_HEADER]),
      });
      const refuse = (reply: FastifyReply, message: string): FastifyReply => reply.code(401).send({ error: { code: "bad_signature", message } });
      // Before the body is read: a request without a fresh timestamp and a signature is refused at once.
      const early = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
        const problem = webhookSignatureProblem(this.#secret, null, headersOf(request), this.#now() / 1000);
        if (problem !== null) await refuse(reply, problem);
      };
      scope.post(this.#path, { onRequest: early }, async (request, reply) => {
        const raw = typeof request.body === "string" ? request.body : "";
        const problem = webhookSignatureProblem(this.#secret, raw, headersOf(request), this.#now() / 1000);
        if (problem !== null) return refuse(reply, problem);
        let json: unknown;
        try {
          json = JSON.parse(raw);
        } catch {
          return reply.code(400).send({ error: { code: "bad_json", message: "The body is not valid JSON." } });
        }
        const parsed = inboundSchema.safeParse(json);
        if (!parsed.success) {
          const issue = parsed.error.issues[0]!;
          return reply.code(400).send({
            error: {
              code: "bad_request",
              message: `${issue.path.join(".") || "body"}: ${issue.message}. Expected { chatId, userId, text, threadId?, messageId?, userName?, chatName?, chatType? }.`,
            },
          });
        }
        if (this.#handler === null)
          return reply.code(503).send({ error: { code: "unavailable", message: "The gateway is not accepting messages right now; retry shortly." } });
        const data = parsed.data;
        const chatType: ChatType = data.chatType ?? (data.threadId ? "thread" : "dm");
        const ack = await this.#handler({
          source: {
            platform: "webhook",
            chatType,
            chatId: data.chatId,
            userId: data.userId,
            userName: data.userName ?? null,
            chatName: data.chatName ?? null,
            threadId: data.threadId ?? null,
            messageId: data.messageId ?? null,
          },
          text: data.text,
          messageId: data.messageId ?? null,
        });
        if (ack.status === "rejected") return reply.code(429).send({ status: ack.status, sessionKey: ack.sessionKey, reason: ack.reason });
        return reply.code(202).send(ack);
      });
    });
  }
}
