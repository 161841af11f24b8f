/**
 * The adapter of the tiny test platform (tiny-chat-platform.ts): a webhook route that takes
 * `{ id, chatId, userId, text }` with the token in `x-tinychat-token`, and an outbox the test
 * reads over HTTP (`GET <path>/outbox`) instead of a platform's server.
 *
 * @module
 */
import type { ChatPlatformContext } from "../../../src/adapters/internal.js";
import type { Adapter, InboundHandler, OutboundMessage, SessionSource } from "../../../src/gateway/index.js";
import type { TinyChatConfig } from "./tiny-chat-platform.js";

/** A chat platform in fifty lines. */
export class TinyChatAdapter implements Adapter {
  readonly platform = "tinychat";
  readonly #sent: Array<{ chatId: string; text: string; kind: string }> = [];
  #handler: InboundHandler | null = null;

  constructor(config: TinyChatConfig, { http }: ChatPlatformContext) {
    http.post(config.path, async (request, reply) => {
      if (request.headers["x-tinychat-token"] !== config.token) return reply.code(401).send({ error: "bad token" });
      if (this.#handler === null) return reply.code(503).send({ error: "not connected" });
      const body = request.body as { id: string; chatId: string; userId: string; text: string };
      const ack = await this.#handler({
        source: { platform: "tinychat", chatType: "dm", chatId: body.chatId, userId: body.userId },
        text: body.text,
        messageId: body.id,
      });
      return { status: ack.status };
    });
    http.get(`${config.path}/outbox`, async () => this.#sent);
  }

  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
  }

  async disconnect(): Promise<void> {
    this.#handler = null;
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId: string }> {
    this.#sent.push({ chatId: source.chatId ?? "", text: message.text, kind: message.kind });
    return { messageId: String(this.#sent.length) };
  }
}
