/**
 * The `api-server` adapter: an OpenAI-compatible `POST /v1/chat/completions` whose
 * session comes from the `X-Threadline-Session-Key` header (or the `user` field), so
 * any OpenAI client library can talk to a persistent session. The server keeps the
 * history: only the last user message of each request is new input. `stream: true`
 * passes the model's tokens through as server-sent events as they arrive; `model` picks
 * among the configured models (others get a 400), and responses name the model that answered.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Adapter, InboundHandler, InboundMessage, OutboundDelta, OutboundMessage, SessionSource } from "../gateway/index.js";
import { bearerMatches, isLoopbackAddress } from "./http-auth.js";

/** Options of the api-server adapter. */
export interface ApiServerAdapterOptions {
  /** Accepted bearer tokens; none → only loopback clients may call. */
  tokens?: string[];
  /** How long a request waits for its reply (default 600,000 ms). */
  replyTimeoutMs?: number;
  /** The gateway's own model name: listed by `/v1/models`, accepted as "the default model", reported when the agent names none (default `threadline`). */
  modelName?: string;
  /**
   * The models clients may ask for (`null`/absent: any `model` is accepted and ignored, as
   * by the echo agent). A request naming another model gets a 400 that lists these.
   */
  models?: ApiServerModels | null;
}

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
  notices: string[];
  /** Set when the gateway stopped before the reply came. */
  closed: boolean;
  /** Set for `stream: true`: pieces of the reply are written as they come. */
  onDelta: ((delta: OutboundDelta) => void) | null;
}

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  user?: unknown;
  stream?: unknown;
}

function openAiError(reply: FastifyReply, status: number, message: string, type = "invalid_request_error"): FastifyReply {
  return reply.code(status).send({ error: { message, type, code: status } });
}

function lastUserText(messages: unknown): string | null {
  if (!Array.isArray(messages)) return null;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null;
    if (m === null || typeof m !== "object" || m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      return m.content
        .filter((p: unknown): p is { type: string; text: string } => typeof p === "object" && p !== null && (p as { type?: unknown }).type === "text")
        .map((p) => p.text)
        .join("\n");
    }
    return null;
  }
  return null;
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
  readonly #tokens: string[];
  readonly #timeoutMs: number;
  readonly #model: string;
  readonly #models: ApiServerModels | null;
  readonly #pending = new Map<string, Pending>();
  #handler: InboundHandler | null = null;

  constructor(options: ApiServerAdapterOptions = {}) {
    this.#tokens = [...(options.tokens ?? [])];
    this.#timeoutMs = options.replyTimeoutMs ?? 600_000;
    this.#model = options.modelName ?? "threadline";
    this.#models = options.models ?? null;
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
      else pending.resolve(message);
    }
    return { messageId: null };
  }

  /** Registers `POST /v1/chat/completions` and `GET /v1/models`. */
  routes(app: FastifyInstance): void {
    const authorize = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      if (this.#tokens.length > 0) {
        if (!bearerMatches(request.headers.authorization, this.#tokens)) {
          await openAiError(reply, 401, "Missing or wrong API key: send Authorization: Bearer <one of the configured tokens>.", "authentication_error");
        }
      } else if (!isLoopbackAddress(request.socket.remoteAddress)) {
        await openAiError(reply, 403, "This gateway has no API tokens configured, so it only accepts clients on this machine.", "permission_error");
      }
    };
    app.get("/v1/models", { preHandler: authorize }, async () => ({
      object: "list",
      data: this.#modelNames().map((id) => ({ id, object: "model", created: 0, owned_by: "threadline" })),
    }));
    app.post("/v1/chat/completions", { preHandler: authorize }, async (request, reply) => this.#complete(request, reply));
  }

  async #complete(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const body = (request.body ?? {}) as ChatBody;
    if (body === null || typeof body !== "object") return openAiError(reply, 400, "The body must be a JSON object.");
    const text = lastUserText(body.messages);
    if (text === null) return openAiError(reply, 400, 'messages must be a list with at least one {"role":"user","content":…} message.');
    const header = request.headers["x-threadline-session-key"];
    const sessionKey = (Array.isArray(header) ? header[0] : header) ?? (typeof body.user === "string" ? body.user : undefined);
    if (sessionKey === undefined || sessionKey.trim() === "") {
      return openAiError(reply, 400, "Name the conversation: send an X-Threadline-Session-Key header or a \"user\" field.");
    }
    const model = this.#providerModel(body.model);
    if (model === false) {
      return openAiError(
        reply,
        400,
        `Unknown model ${JSON.stringify(body.model)}: this gateway answers with ${this.#modelNames().map((name) => JSON.stringify(name)).join(", ")}. ` +
          `Ask for one of them, or leave "model" out for the configured one (provider.models maps other names).`,
        "invalid_request_error",
      );
    }
    if (this.#handler === null) return openAiError(reply, 503, "The gateway is not accepting messages right now; retry shortly.", "server_error");
    const messageId = `api-${randomUUID()}`;
    const message: InboundMessage = {
      source: {
        platform: "api-server",
        chatType: "dm",
        chatId: sessionKey,
        userId: typeof body.user === "string" ? body.user : sessionKey,
        userName: typeof body.user === "string" ? body.user : null,
      },
      text,
      messageId,
    };
    if (model !== null) message.model = model;
    let resolve!: (m: OutboundMessage) => void;
    const answered = new Promise<OutboundMessage>((r) => (resolve = r));
    const pending: Pending = { resolve, notices: [], closed: false, onDelta: null };
    const id = `chatcmpl-${messageId.slice(4)}`;
    const created = Math.floor(Date.now() / 1000);
    let live: LiveStream | null = null;
    if (body.stream === true) {
      pending.onDelta = (delta) => {
        if (live === null) {
          // The first piece: the response becomes an event stream (errors before it keep their status codes).
          live = this.#openStream(reply, id, created, model ?? this.#models?.default ?? this.#model, delta.sessionId);
          const lead = pending.notices.join("\n\n");
          this.#writeChunk(live, { role: "assistant", content: lead === "" ? delta.text : `${lead}\n\n${delta.text}` }, null);
        } else {
          this.#writeChunk(live, { content: delta.text }, null);
        }
      };
    }
    this.#pending.set(messageId, pending);
    let timer: NodeJS.Timeout | undefined;
    try {
      const ack = await this.#handler(message);
      if (ack.status === "rejected") return openAiError(reply, 429, ack.reason, "rate_limit_error");
      if (ack.status === "duplicate") return openAiError(reply, 409, "This message was already received.");
      let out: OutboundMessage | null;
      if (ack.status === "command") {
        out = { text: pending.notices.join("\n\n"), kind: "notice", inReplyTo: [messageId] };
        // A command such as /retry may start a turn whose reply answers this request.
        if (pending.notices.length === 0) out = null;
      } else {
        out = null;
      }
      if (out === null) {
        const timeout = new Promise<null>((r) => {
          timer = setTimeout(() => r(null), this.#timeoutMs);
        });
        out = await Promise.race([answered, timeout]);
      }
      const streaming: LiveStream | null = live;
      if (streaming !== null) return this.#endStream(reply, streaming, out, pending.closed);
      if (out === null) return openAiError(reply, 504, `No reply within ${this.#timeoutMs} ms; the message is stored and the reply will be in the session.`, "server_error");
      if (pending.closed) return openAiError(reply.header("retry-after", "5"), 503, out.text, "server_error");
      if (out.kind === "error") return openAiError(reply, 502, out.text, "server_error");
      const text = [...(ack.status === "command" ? [] : pending.notices), out.text].filter((t) => t !== "").join("\n\n");
      if (out.sessionId) void reply.header("x-threadline-session-id", out.sessionId);
      const usage = {
        prompt_tokens: out.usage?.promptTokens ?? 0,
        completion_tokens: out.usage?.completionTokens ?? 0,
        total_tokens: (out.usage?.promptTokens ?? 0) + (out.usage?.completionTokens ?? 0),
      };
      // The model that answered (as the provider named it), not the name the client asked for.
      const answeredBy = out.model ?? this.#model;
      if (body.stream === true) {
        const chunk = { id, object: "chat.completion.chunk", created, model: answeredBy, choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] };
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
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage,
      });
    } finally {
      clearTimeout(timer);
      this.#pending.delete(messageId);
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
    const chunk = { id: live.id, object: "chat.completion.chunk", created: live.created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra };
    this.#writeEvent(live, JSON.stringify(chunk));
  }

  /** Ends a stream: the finishing chunk with usage, or an error event when the turn failed, was cut off or timed out. */
  #endStream(reply: FastifyReply, live: LiveStream, out: OutboundMessage | null, closed: boolean): FastifyReply {
    if (out === null || closed || out.kind === "error") {
      const message =
        out === null ? `No reply within ${this.#timeoutMs} ms; the message is stored and the reply will be in the session.` : out.text;
      const status = out === null ? 504 : closed ? 503 : 502;
      this.#writeEvent(live, JSON.stringify({ error: { message, type: "server_error", code: status } }));
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
