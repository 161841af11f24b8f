/**
 * The `api-server` adapter: an OpenAI-compatible `POST /v1/chat/completions` whose
 * session comes from the `X-Threadline-Session-Key` header (or the `user` field), so
 * any OpenAI client library can talk to a persistent session. The server keeps the
 * history: only the last user message of each request is new input: its text, and its images
 * (`image_url` parts with `data:` URLs only; see `./api-server-input.ts`). `stream: true`
 * passes the model's tokens through as server-sent events as they arrive; `model` picks
 * among the configured models (others get a 400), and responses name the model that answered.
 *
 * Who may call: with tokens, a bearer token is required (checked before the body is read).
 * A plain-string token is an operator token and may name any person (`user`) and any
 * session key. A token bound to a person (`{ token, userId }`) acts as that person only: the
 * message is theirs, its session key is kept inside their own key space
 * (`<userId>:<X-Threadline-Session-Key>`, or `<userId>` without the header), and a `user`
 * field naming anyone else is refused with 403. Without tokens, only clients on this
 * machine may call (a request with proxy headers is not one, unless it comes from a trusted
 * proxy for a loopback client), and none at all when `keylessRefusal` is set.
 *
 * @module
 */
import { hash, randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Adapter, GatewayLogger, InboundHandler, InboundMessage, OutboundDelta, OutboundMessage, SessionSource } from "../gateway/index.js";
import { bearerIndex, isLoopbackClient, TrustedProxies } from "../net/index.js";
import { ChatInputError, lastUserInput, type ChatInput } from "./api-server-input.js";

/** A bearer token: a string is an operator token (may act as anyone); `{ token, userId }` acts as that person only. */
export type ApiServerTokenEntry = string | { token: string; userId: string; name?: string | null };

/** Who an authenticated request acts as: `userId` `null` for an operator token or a keyless local client. */
interface Caller {
  userId: string | null;
  name: string | null;
}

/** Options of the api-server adapter. */
export interface ApiServerAdapterOptions {
  /** Accepted bearer tokens; none → only loopback clients may call. */
  tokens?: ApiServerTokenEntry[];
  /** Reverse proxies whose `Forwarded`/`X-Forwarded-For`/`X-Real-IP` are believed for the keyless loopback check (addresses or CIDR ranges). */
  trustProxy?: readonly string[];
  /** Set when keyless access must not be given (the gateway takes platform webhooks): without tokens every request gets 401 with this message. */
  keylessRefusal?: string | null;
  /** How long a request waits for its reply (default 600,000 ms). */
  replyTimeoutMs?: number;
  /** The gateway's own model name: listed by `/v1/models`, accepted as "the default model", reported when the agent names none (default `threadline`). */
  modelName?: string;
  /**
   * The models clients may ask for (`null`/absent: any `model` is accepted and ignored, as
   * by the echo agent). A request naming another model gets a 400 that lists these.
   */
  models?: ApiServerModels | null;
  /** Where unexpected errors and joined retries are logged. */
  logger?: GatewayLogger;
  /**
   * Largest `POST /v1/chat/completions` body in bytes (default {@link DEFAULT_CHAT_BODY_LIMIT}, 32 MiB:
   * a 20 MiB image as a base64 data URL is about 27 MiB). A larger body gets a 413.
   */
  maxBodyBytes?: number;
}

/**
 * Default largest chat request body: 32 MiB, room for one image at the default `media.maxBytes`
 * (20 MiB, about 27 MiB as base64) with its conversation. Images over `media.maxBytes` that fit are
 * refused by the gateway's media ingest with a notice; the text still goes through.
 */
export const DEFAULT_CHAT_BODY_LIMIT = 32 * 1024 * 1024;

/** The models an api-server answers with (from `provider.model` and `provider.models`). */
export interface ApiServerModels {
  /** The configured provider model: answers requests without `model`, naming it, or naming `modelName`. */
  default: string;
  /** Other names clients may ask for → the provider model that answers them. */
  aliases: Record<string, string>;
}

/** A reply being streamed to a request (`stream: true`) as server-sent events. */
interface LiveStream {
  raw: ServerResponse;
  id: string;
  created: number;
  model: string;
}

interface Pending {
  resolve: (message: OutboundMessage) => void;
  /** The reply (or error) once it came. */
  answered: Promise<OutboundMessage>;
  settled: OutboundMessage | null;
  notices: string[];
  /** Set when the gateway stopped before the reply came. */
  closed: boolean;
  /** What every request for this message gets (a retry with the same `Idempotency-Key` joins it). */
  outcome: Promise<Outcome> | null;
  /** Set for `stream: true` on the request that sent the message: pieces of the reply are written as they come. */
  onDelta: ((delta: OutboundDelta) => void) | null;
}

/** How a request ends: an answer, or an OpenAI-style error. */
type Outcome =
  | { ok: true; text: string; sessionId: string | null; usage: OutboundMessage["usage"] | null; model: string | null }
  | { ok: false; status: number; message: string; type: string; headers?: Record<string, string> };

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  user?: unknown;
  stream?: unknown;
}

/** Longest accepted `Idempotency-Key` header. */
const MAX_IDEMPOTENCY_KEY = 255;
/** How many recent requests are remembered to recognise the official clients' automatic retries. */
const RECENT_ATTEMPTS = 1000;

/** The OpenAI error `type` of an HTTP status. */
function errorTypeOf(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

function openAiError(reply: FastifyReply, status: number, message: string, type = errorTypeOf(status)): FastifyReply {
  return reply.code(status).send({ error: { message, type, code: status } });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The OpenAI-compatible HTTP adapter. Register its routes on the gateway's HTTP server
 * with {@link ApiServerAdapter.routes}.
 *
 * @example
 * curl -s http://127.0.0.1:8787/v1/chat/completions -H 'X-Threadline-Session-Key: demo' \
 *   -H 'Content-Type: application/json' -d '{"messages":[{"role":"user","content":"hello"}]}'
 */
export class ApiServerAdapter implements Adapter {
  readonly platform = "api-server";
  readonly #tokens: Array<{ token: string; caller: Caller }>;
  readonly #proxies: TrustedProxies;
  readonly #keylessRefusal: string | null;
  readonly #timeoutMs: number;
  readonly #model: string;
  readonly #models: ApiServerModels | null;
  readonly #pending = new Map<string, Pending>();
  /** (session key, body hash) → message id of the latest request, for retries without an Idempotency-Key. */
  readonly #attempts = new Map<string, string>();
  readonly #log: GatewayLogger | null;
  readonly #bodyLimit: number;
  #handler: InboundHandler | null = null;

  constructor(options: ApiServerAdapterOptions = {}) {
    this.#tokens = (options.tokens ?? []).map((t) =>
      typeof t === "string" ? { token: t, caller: { userId: null, name: null } } : { token: t.token, caller: { userId: t.userId, name: t.name ?? null } },
    );
    this.#proxies = new TrustedProxies(options.trustProxy ?? []);
    this.#keylessRefusal = options.keylessRefusal ?? null;
    this.#log = options.logger ?? null;
    this.#timeoutMs = options.replyTimeoutMs ?? 600_000;
    this.#model = options.modelName ?? "threadline";
    this.#models = options.models ?? null;
    this.#bodyLimit = options.maxBodyBytes ?? DEFAULT_CHAT_BODY_LIMIT;
  }

  /** Whether bearer tokens are required (otherwise only loopback clients are allowed). */
  get requiresToken(): boolean {
    return this.#tokens.length > 0;
  }

  /** Whether a request is still waiting for the reply to this message. */
  awaitsReply(messageId: string): boolean {
    return this.#pending.has(messageId);
  }

  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
  }

  /** Stops accepting; requests still waiting for a reply get a 503 (their message is stored and will be answered). */
  async disconnect(): Promise<void> {
    this.#handler = null;
    for (const [id, pending] of this.#pending) {
      pending.closed = true;
      pending.resolve({
        text: "The gateway is restarting. Your message is stored and will be answered in this session; ask again (or /status) in a moment.",
        kind: "error",
        inReplyTo: [id],
      });
    }
  }

  /** Whether a request waiting for one of these messages asked for `stream: true`. */
  wantsStream(inReplyTo: string[]): boolean {
    return inReplyTo.some((id) => this.#pending.get(id)?.onDelta != null);
  }

  /** Writes a piece of the reply to the requests that stream it. */
  sendDelta(_source: SessionSource, delta: OutboundDelta): void {
    for (const id of delta.inReplyTo) this.#pending.get(id)?.onDelta?.(delta);
  }

  async send(_source: SessionSource, message: OutboundMessage): Promise<{ messageId: string | null }> {
    for (const id of message.inReplyTo) {
      const pending = this.#pending.get(id);
      if (pending === undefined) continue;
      if (message.kind === "notice") pending.notices.push(message.text);
      else {
        pending.settled ??= message;
        pending.resolve(message);
      }
    }
    return { messageId: null };
  }

  /**
   * Registers `POST /v1/chat/completions` and `GET /v1/models`. Every error under `/v1`
   * (invalid JSON, an unknown route, a failure) answers in the OpenAI error shape
   * `{"error":{"message","type","code"}}`.
   */
  routes(app: FastifyInstance): void {
    const callers = new WeakMap<FastifyRequest, Caller>();
    // An onRequest hook: the caller is known (or refused) before the body is read or parsed.
    const authorize = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      if (this.#tokens.length > 0) {
        const index = bearerIndex(
          request.headers.authorization,
          this.#tokens.map((t) => t.token),
        );
        if (index === -1) {
          await openAiError(reply, 401, "Missing or wrong API key: send Authorization: Bearer <one of the configured tokens>.");
          return;
        }
        callers.set(request, this.#tokens[index]!.caller);
      } else if (this.#keylessRefusal !== null) {
        await openAiError(reply, 401, this.#keylessRefusal);
      } else if (!isLoopbackClient(request, this.#proxies)) {
        await openAiError(
          reply,
          401,
          "This gateway has no API tokens configured (adapters.apiServer.tokens), so it only accepts clients on this machine; " +
            "this request came from another machine or through a proxy (Forwarded/X-Forwarded-For/X-Real-IP). Configure adapters.apiServer.tokens, or list a proxy on this machine in gateway.trustProxy.",
        );
      } else {
        callers.set(request, { userId: null, name: null });
      }
    };
    void app.register(
      async (v1) => {
        v1.setErrorHandler(async (error: FastifyError, request, reply) => {
          const status = typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
          if (status >= 500) {
            this.#log?.error({ err: error, method: request.method, route: request.routeOptions.url }, "api-server request failed");
            return openAiError(reply, status, "The gateway failed to handle the request (see its log); retry, and report it if it keeps happening.");
          }
          if (status === 413) {
            return openAiError(
              reply,
              413,
              `The request body is over this gateway's limit of ${this.#bodyLimit} bytes. Send smaller images (each at most media.maxBytes once decoded), or fewer of them per request.`,
            );
          }
          return openAiError(reply, status, `${error.message.replace(/\.?$/u, ".")} Send a JSON body: {"messages":[{"role":"user","content":"…"}]}.`);
        });
        v1.setNotFoundHandler(async (request, reply) =>
          openAiError(
            reply,
            404,
            `There is no route ${request.method} ${request.url.split("?")[0]}. This gateway serves POST /v1/chat/completions and GET /v1/models.`,
          ),
        );
        v1.get("/models", { onRequest: authorize }, async () => ({
          object: "list",
          data: this.#modelNames().map((id) => ({ id, object: "model", created: 0, owned_by: "threadline" })),
        }));
        v1.post("/chat/completions", { onRequest: authorize, bodyLimit: this.#bodyLimit }, async (request, reply) =>
          this.#complete(request, reply, callers.get(request) ?? null),
        );
      },
      { prefix: "/v1" },
    );
  }

  async #complete(request: FastifyRequest, reply: FastifyReply, caller: Caller | null): Promise<FastifyReply> {
    if (caller === null) return openAiError(reply, 401, "The request was not authenticated.");
    const body = (request.body ?? {}) as ChatBody;
    if (body === null || typeof body !== "object" || Array.isArray(body)) return openAiError(reply, 400, "The body must be a JSON object.");
    let input: ChatInput | null;
    try {
      input = lastUserInput(body.messages);
    } catch (error) {
      if (error instanceof ChatInputError) return openAiError(reply, 400, error.message);
      throw error;
    }
    if (input === null) return openAiError(reply, 400, 'messages must be a list with at least one {"role":"user","content":…} message.');
    const named = header(request, "x-threadline-session-key");
    let sessionKey: string | undefined;
    let userId: string;
    let userName: string | null;
    if (caller.userId !== null) {
      // A token bound to a person: the message is that person's, in their own key space.
      if (body.user !== undefined && body.user !== null && body.user !== caller.userId) {
        return openAiError(
          reply,
          403,
          `This token acts as ${JSON.stringify(caller.userId)} only, and the "user" field names someone else. Leave "user" out (or set it to ${JSON.stringify(caller.userId)}); ` +
            "name conversations with the X-Threadline-Session-Key header.",
        );
      }
      if (named !== undefined && named.trim() === "")
        return openAiError(reply, 400, "The X-Threadline-Session-Key header is empty: name the conversation, or leave the header out.");
      const prefix = `${caller.userId}:`;
      sessionKey = named === undefined ? caller.userId : named.startsWith(prefix) ? named : `${prefix}${named}`;
      userId = caller.userId;
      userName = caller.name ?? caller.userId;
    } else {
      sessionKey = named ?? (typeof body.user === "string" ? body.user : undefined);
      userId = typeof body.user === "string" ? body.user : (sessionKey ?? "");
      userName = typeof body.user === "string" ? body.user : null;
    }
    if (sessionKey === undefined || sessionKey.trim() === "") {
      return openAiError(reply, 400, 'Name the conversation: send an X-Threadline-Session-Key header or a "user" field.');
    }
    const model = this.#providerModel(body.model);
    if (model === false) {
      return openAiError(
        reply,
        400,
        `Unknown model ${JSON.stringify(body.model)}: this gateway answers with ${this.#modelNames()
          .map((name) => JSON.stringify(name))
          .join(", ")}. Ask for one of them, or leave "model" out for the configured one (provider.models maps other names).`,
      );
    }
    const idempotencyKey = header(request, "idempotency-key");
    if (idempotencyKey !== undefined && (idempotencyKey.trim() === "" || idempotencyKey.length > MAX_IDEMPOTENCY_KEY)) {
      return openAiError(
        reply,
        400,
        `The Idempotency-Key header must be 1–${MAX_IDEMPOTENCY_KEY} characters; send a unique value per message (the same value on a retry).`,
      );
    }
    if (this.#handler === null) return openAiError(reply, 503, "The gateway is not accepting messages right now; retry shortly.");
    // One message per (session key, idempotency key): a retry reuses the id, so it is never stored twice.
    // The official OpenAI clients send no Idempotency-Key but number their automatic retries
    // (X-Stainless-Retry-Count ≥ 1, same body): such a retry is the latest request with that body.
    const attempt = `${sessionKey}\u0000${hash("sha256", JSON.stringify(body), "hex")}`;
    const retryCount = Number(header(request, "x-stainless-retry-count") ?? "0");
    const retryOf = idempotencyKey === undefined && retryCount >= 1 ? this.#attempts.get(attempt) : undefined;
    const messageId =
      idempotencyKey !== undefined
        ? `api-idem-${hash("sha256", `${sessionKey}\u0000${idempotencyKey}`, "hex").slice(0, 32)}`
        : (retryOf ?? `api-${randomUUID()}`);
    if (idempotencyKey === undefined) this.#rememberAttempt(attempt, messageId);
    const id = `chatcmpl-${messageId.slice(4)}`;
    const created = Math.floor(Date.now() / 1000);
    let live: LiveStream | null = null;
    let pending = this.#pending.get(messageId);
    if (pending?.outcome != null) {
      this.#log?.info({ messageId }, "joined a request already running");
    } else {
      const message: InboundMessage = {
        source: {
          platform: "api-server",
          chatType: "dm",
          chatId: sessionKey,
          userId,
          userName,
        },
        text: input.text,
        ...(input.media.length === 0 ? {} : { media: input.media }),
        messageId,
        ...(idempotencyKey === undefined && retryOf === undefined ? {} : { idempotent: true }),
        ...(model === null ? {} : { model }),
      };
      let resolve!: (m: OutboundMessage) => void;
      const answered = new Promise<OutboundMessage>((r) => (resolve = r));
      const fresh: Pending = { resolve, answered, settled: null, notices: [], closed: false, outcome: null, onDelta: null };
      if (body.stream === true) {
        // Only the request that sent the message streams; a retry joining it gets the whole reply at the end.
        fresh.onDelta = (delta) => {
          if (live === null) {
            // The first piece: the response becomes an event stream (errors before it keep their status codes).
            live = this.#openStream(reply, id, created, model ?? this.#models?.default ?? this.#model, delta.sessionId);
            const lead = fresh.notices.join("\n\n");
            this.#writeChunk(live, { role: "assistant", content: lead === "" ? delta.text : `${lead}\n\n${delta.text}` }, null);
          } else {
            this.#writeChunk(live, { content: delta.text }, null);
          }
        };
      }
      this.#pending.set(messageId, fresh);
      fresh.outcome = this.#run(message, fresh).finally(() => this.#pending.delete(messageId));
      pending = fresh;
    }
    const outcome = await pending.outcome!;
    const streaming: LiveStream | null = live;
    if (streaming !== null) return this.#endStream(reply, streaming, outcome);
    if (!outcome.ok) {
      for (const [name, value] of Object.entries(outcome.headers ?? {})) void reply.header(name, value);
      return openAiError(reply, outcome.status, outcome.message, outcome.type);
    }
    if (outcome.sessionId) void reply.header("x-threadline-session-id", outcome.sessionId);
    const usage = {
      prompt_tokens: outcome.usage?.promptTokens ?? 0,
      completion_tokens: outcome.usage?.completionTokens ?? 0,
      total_tokens: (outcome.usage?.promptTokens ?? 0) + (outcome.usage?.completionTokens ?? 0),
    };
    // The model that answered (as the provider named it), not the name the client asked for.
    const answeredBy = outcome.model ?? this.#model;
    const content = outcome.text;
    if (body.stream === true) {
      const chunk = {
        id,
        object: "chat.completion.chunk",
        created,
        model: answeredBy,
        choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }],
      };
      const end = { id, object: "chat.completion.chunk", created, model: answeredBy, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage };
      return reply
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .send(`data: ${JSON.stringify(chunk)}\n\ndata: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`);
    }
    return reply.send({
      id,
      object: "chat.completion",
      created,
      model: answeredBy,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage,
    });
  }

  #rememberAttempt(attempt: string, messageId: string): void {
    this.#attempts.delete(attempt);
    this.#attempts.set(attempt, messageId);
    if (this.#attempts.size > RECENT_ATTEMPTS) {
      const oldest = this.#attempts.keys().next().value;
      if (oldest !== undefined) this.#attempts.delete(oldest);
    }
  }

  /** Hands a message to the gateway and waits for what answers it. */
  async #run(message: InboundMessage, pending: Pending): Promise<Outcome> {
    const fail = (status: number, text: string, headers?: Record<string, string>): Outcome => ({
      ok: false,
      status,
      message: text,
      type: errorTypeOf(status),
      ...(headers === undefined ? {} : { headers }),
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const ack = await this.#handler!(message);
      if (ack.status === "rejected") return fail(429, ack.reason);
      if (ack.status === "duplicate" && message.idempotent !== true) return fail(409, "This message was already received.", { "x-should-retry": "false" });
      let out: OutboundMessage | null = null;
      if (ack.status === "command" && (pending.notices.length > 0 || pending.settled !== null)) {
        // What the command said is the answer; a command the user got wrong is a normal reply.
        const settled = pending.settled;
        if (settled !== null && settled.kind === "error" && settled.refused !== true) return fail(500, settled.text);
        return {
          ok: true,
          text: [...pending.notices, settled?.text ?? ""].filter((t) => t !== "").join("\n\n"),
          sessionId: settled?.sessionId ?? null,
          usage: null,
          model: null,
        };
      }
      // A turn (or a command such as /retry that starts one) answers this request.
      const timeout = new Promise<null>((r) => {
        timer = setTimeout(() => r(null), this.#timeoutMs);
      });
      out = await Promise.race([pending.answered, timeout]);
      if (out === null) return fail(504, `No reply within ${this.#timeoutMs} ms; the message is stored and the reply will be in the session.`);
      if (pending.closed) return fail(503, out.text, { "retry-after": "5" });
      if (out.kind === "error" && out.refused !== true) return fail(502, out.text);
      const text = [...(ack.status === "command" ? [] : pending.notices), out.text].filter((t) => t !== "").join("\n\n");
      return { ok: true, text, sessionId: out.sessionId ?? null, usage: out.usage ?? null, model: out.model ?? null };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The names `/v1/models` lists and a 400 for an unknown model names. */
  #modelNames(): string[] {
    if (this.#models === null) return [this.#model];
    return [...new Set([this.#models.default, ...Object.keys(this.#models.aliases), this.#model])];
  }

  /**
   * The provider model a request's `model` asks for: `null` for the default (no model,
   * the configured one, the gateway's own name, or no model list at all), the mapped model
   * for an alias, `false` for a name this gateway does not serve.
   */
  #providerModel(requested: unknown): string | null | false {
    if (this.#models === null || requested === undefined || requested === null) return null;
    if (typeof requested !== "string") return false;
    const name = requested.trim();
    if (name === "" || name === this.#models.default || name === this.#model) return null;
    return Object.hasOwn(this.#models.aliases, name) ? this.#models.aliases[name]! : false;
  }

  /** Takes the response over from Fastify and starts an event stream. */
  #openStream(reply: FastifyReply, id: string, created: number, model: string, sessionId: string | undefined): LiveStream {
    reply.hijack();
    const headers: Record<string, string> = { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" };
    if (sessionId !== undefined) headers["x-threadline-session-id"] = sessionId;
    reply.raw.writeHead(200, headers);
    return { raw: reply.raw, id, created, model };
  }

  #writeEvent(live: LiveStream, data: string): void {
    if (live.raw.destroyed || live.raw.writableEnded) return; // the client went away: the turn is stored all the same
    live.raw.write(`data: ${data}\n\n`);
  }

  #writeChunk(live: LiveStream, delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}, model = live.model): void {
    const chunk = {
      id: live.id,
      object: "chat.completion.chunk",
      created: live.created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
      ...extra,
    };
    this.#writeEvent(live, JSON.stringify(chunk));
  }

  /** Ends a stream: the finishing chunk with usage, or an error event when the turn failed, was cut off or timed out. */
  #endStream(reply: FastifyReply, live: LiveStream, out: Outcome): FastifyReply {
    if (!out.ok) {
      this.#writeEvent(live, JSON.stringify({ error: { message: out.message, type: out.type, code: out.status } }));
    } else {
      const usage = {
        prompt_tokens: out.usage?.promptTokens ?? 0,
        completion_tokens: out.usage?.completionTokens ?? 0,
        total_tokens: (out.usage?.promptTokens ?? 0) + (out.usage?.completionTokens ?? 0),
      };
      this.#writeChunk(live, {}, "stop", { usage }, out.model ?? live.model);
    }
    this.#writeEvent(live, "[DONE]");
    if (!live.raw.writableEnded) live.raw.end();
    return reply;
  }
}
