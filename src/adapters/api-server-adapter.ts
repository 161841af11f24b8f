/**
 * The `api-server` adapter: an OpenAI-compatible `POST /v1/chat/completions` whose
 * session comes from the `X-Threadline-Session-Key` header (or the `user` field), so
 * any OpenAI client library can talk to a persistent session. The server keeps the
 * history: only the last user message of each request is new input.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Adapter, InboundHandler, InboundMessage, OutboundMessage, SessionSource } from "../gateway/index.js";
import { bearerMatches, isLoopbackAddress } from "./http-auth.js";

/** Options of the api-server adapter. */
export interface ApiServerAdapterOptions {
  /** Accepted bearer tokens; none → only loopback clients may call. */
  tokens?: string[];
  /** How long a request waits for its reply (default 600,000 ms). */
  replyTimeoutMs?: number;
  /** The model name reported in responses (default `threadline`). */
  modelName?: string;
}

interface Pending {
  resolve: (message: OutboundMessage) => void;
  notices: string[];
  /** Set when the gateway stopped before the reply came. */
  closed: boolean;
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
  readonly #pending = new Map<string, Pending>();
  #handler: InboundHandler | null = null;

  constructor(options: ApiServerAdapterOptions = {}) {
    this.#tokens = [...(options.tokens ?? [])];
    this.#timeoutMs = options.replyTimeoutMs ?? 600_000;
    this.#model = options.modelName ?? "threadline";
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
      data: [{ id: this.#model, object: "model", created: 0, owned_by: "threadline" }],
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
    let resolve!: (m: OutboundMessage) => void;
    const answered = new Promise<OutboundMessage>((r) => (resolve = r));
    const pending: Pending = { resolve, notices: [], closed: false };
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
      const id = `chatcmpl-${messageId.slice(4)}`;
      const created = Math.floor(Date.now() / 1000);
      const model = typeof body.model === "string" ? body.model : this.#model;
      if (body.stream === true) {
        const chunk = { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] };
        const end = { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage };
        return reply
          .header("content-type", "text/event-stream")
          .header("cache-control", "no-cache")
          .send(`data: ${JSON.stringify(chunk)}\n\ndata: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`);
      }
      return reply.send({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage,
      });
    } finally {
      clearTimeout(timer);
      this.#pending.delete(messageId);
    }
  }
}
