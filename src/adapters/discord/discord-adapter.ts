/**
 * The Discord adapter: discord.js (loaded lazily) on the gateway WebSocket for inbound
 * messages and on its REST client for everything sent.
 *
 * - Inbound: `messageCreate` events are mapped ({@link mapDiscordMessage}), filtered by the
 *   answer rules ({@link decideAnswer}: refused messages are dropped, not stored),
 *   de-duplicated by message id, and handed to the gateway; while the turn runs the channel
 *   shows "typing…" (renewed every 8 s: Discord shows it for 10 s).
 * - Outbound: replies are sent as Discord Markdown, split at 2,000 characters
 *   ({@link discordMessageBodies}), into the thread they came from, the first chunk a reply
 *   to the triggering message; mentions in replies never ping (`allowed_mentions`). Sends go
 *   by channel id through discord.js's REST client (so a reply after a restart needs no
 *   cache), which waits out 429s (`retry_after`) and retries.
 * - Heartbeats, reconnects and RESUME after a dropped connection are discord.js's; the
 *   adapter logs them. Intents: Guilds, GuildMessages, DirectMessages and MessageContent
 *   (left out, with a warning, when the application does not have the Message Content
 *   intent enabled, because Discord would refuse the connection).
 * - The bot token never appears in anything this adapter logs or throws.
 *
 * @module
 */
import type { Client, Message } from "discord.js";
import { noopLogger, type Adapter, type GatewayLogger, type InboundHandler, type OutboundMessage, type SessionSource } from "../../gateway/index.js";
import { InvalidInputError, PlatformError } from "../../store/index.js";
import {
  DEFAULT_ANSWER_RULES,
  SeenMessageIds,
  TypingIndicator,
  connectInBackground,
  decideAnswer,
  loadSdk,
  redactError,
  type AnswerRules,
} from "../chat/index.js";
import { DISCORD_SUPPRESS_EMBEDS, discordMessageBodies } from "./discord-format.js";
import { DISCORD_CHANNEL_TYPES, DISCORD_PLATFORM, mapDiscordMessage, type DiscordChannelFacts, type DiscordMessageFacts } from "./discord-source.js";

type DiscordJs = typeof import("discord.js");

/** Application flags that mean the Message Content intent is enabled (Discord's documented bits). */
const MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19);

/** Options of a {@link DiscordAdapter}. */
export interface DiscordAdapterOptions {
  /** The bot token from the Developer Portal (never logged). */
  token: string;
  /** The REST API base (default `https://discord.com/api`; a proxy, or a test fake). */
  apiUrl?: string | null;
  /** The gateway WebSocket URL (default: the one `GET /gateway/bot` answers). */
  gatewayUrl?: string | null;
  /** Who is answered (default: DMs, and mentions/replies/the bot's threads in servers; no bots; no allowlists). */
  rules?: AnswerRules;
  logger?: GatewayLogger;
  /** How long `connect` waits for the gateway before going on in the background, in ms (default 20,000). */
  connectTimeoutMs?: number;
  /** How often "typing…" is renewed, in ms (default 8,000). */
  typingIntervalMs?: number;
  /** Let the platform show previews of links in sent messages (default false: previews off, so no URL in a reply is fetched without a click). */
  linkPreviews?: boolean;
}

/** The Discord platform adapter. Create it with {@link DiscordAdapter.create}. */
export class DiscordAdapter implements Adapter {
  readonly platform = DISCORD_PLATFORM;
  readonly #djs: DiscordJs;
  readonly #client: Client;
  readonly #options: DiscordAdapterOptions;
  readonly #rules: AnswerRules;
  readonly #log: GatewayLogger;
  readonly #seen = new SeenMessageIds(10_000);
  readonly #typing: TypingIndicator;
  /** Threads the bot opened or posted in during this run. */
  readonly #botThreads = new Set<string>();
  #handler: InboundHandler | null = null;
  #receiving = false;
  #messageContent = true;

  private constructor(options: DiscordAdapterOptions, djs: DiscordJs) {
    this.#options = options;
    this.#djs = djs;
    this.#rules = options.rules ?? DEFAULT_ANSWER_RULES;
    this.#log = options.logger ?? noopLogger;
    const { Client, GatewayIntentBits, Partials } = djs;
    const api = options.apiUrl?.replace(/\/+$/u, "");
    this.#client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages, GatewayIntentBits.MessageContent],
      // DM channels are not cached before their first message: without this their messages are dropped.
      partials: [Partials.Channel],
      rest: api ? { api } : {},
    });
    // Sends work before (and without) the gateway: after a restart the resumed reply goes out at once.
    this.#client.rest.setToken(options.token);
    const gatewayUrl = options.gatewayUrl;
    if (gatewayUrl) {
      // discord.js takes the gateway URL from GET /gateway/bot; an explicit one replaces it there.
      const rest = this.#client.rest;
      const get = rest.get.bind(rest);
      rest.get = async (route, request) => {
        const data = await get(route, request);
        return route === djs.Routes.gatewayBot() ? { ...(data as object), url: gatewayUrl } : data;
      };
    }
    this.#typing = new TypingIndicator({
      send: (channel) => this.#client.rest.post(djs.Routes.channelTyping(channel)),
      intervalMs: options.typingIntervalMs ?? 8_000,
      onError: (error) => this.#log.warn({ err: this.#safe(error), platform: this.platform }, "discord: the typing indicator failed"),
    });
    const { Events } = djs;
    this.#client.on(Events.MessageCreate, (message) => void this.#receive(message));
    this.#client.on(Events.ThreadCreate, (thread) => {
      if (thread.ownerId === this.#client.user?.id) this.#botThreads.add(thread.id);
    });
    this.#client.on(Events.ShardReconnecting, (shard) => this.#log.warn({ platform: this.platform, shard }, "discord: gateway connection lost; reconnecting"));
    this.#client.on(Events.ShardResume, (shard, replayed) =>
      this.#log.info({ platform: this.platform, shard, replayed }, `discord: gateway connection resumed (${replayed} missed events replayed)`),
    );
    this.#client.on(Events.ShardDisconnect, (event, shard) =>
      this.#log.error({ platform: this.platform, shard, code: event.code }, `discord: the gateway closed the connection for good (code ${event.code})`),
    );
    this.#client.on(Events.ShardError, (error, shard) =>
      this.#log.warn({ err: this.#safe(error), platform: this.platform, shard }, "discord: gateway connection error"),
    );
    this.#client.on(Events.Error, (error) => this.#log.error({ err: this.#safe(error), platform: this.platform }, "discord: client error"));
    this.#client.on(Events.Warn, (message) => this.#log.warn({ platform: this.platform }, `discord: ${this.#safe(message).message}`));
  }

  /** Loads discord.js and makes the adapter (nothing is sent yet). */
  static async create(options: DiscordAdapterOptions): Promise<DiscordAdapter> {
    const djs = await loadSdk<DiscordJs>("discord.js", DISCORD_PLATFORM, () => import("discord.js"));
    return new DiscordAdapter(options, djs);
  }

  /** `gateway` (Discord has no other way to receive messages for a bot). */
  get mode(): "gateway" {
    return "gateway";
  }

  /** The bot's `@username` once connected (`null` before). */
  get username(): string | null {
    const user = this.#client.user;
    return user ? `@${user.username}` : null;
  }

  /** Whether the Message Content intent is requested (false when the application does not have it). */
  get messageContentIntent(): boolean {
    return this.#messageContent;
  }

  /**
   * Checks the application's Message Content intent, logs in and connects to the gateway.
   * A refused token fails at once; an unreachable Discord does not hold the gateway's start:
   * after `connectTimeoutMs` the adapter keeps connecting in the background.
   */
  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
    this.#receiving = true;
    await connectInBackground(this.#bringUp(), {
      timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
      onTimeout: () =>
        this.#log.warn(
          { platform: this.platform, apiUrl: this.#options.apiUrl ?? "https://discord.com/api" },
          "discord: Discord does not answer yet; still connecting in the background",
        ),
      onBackgroundFailure: (error) => this.#log.error({ err: this.#safe(error), platform: this.platform }, "discord: connecting failed"),
    });
  }

  async #bringUp(): Promise<void> {
    const { Routes, GatewayIntentBits, IntentsBitField } = this.#djs;
    try {
      const application = (await this.#client.rest.get(Routes.currentApplication())) as { flags?: number };
      if (((application.flags ?? 0) & MESSAGE_CONTENT_FLAGS) === 0) {
        this.#messageContent = false;
        this.#client.options.intents = new IntentsBitField([GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages]);
        this.#log.warn(
          { platform: this.platform, messageContentIntent: false },
          "discord: the Message Content intent is not enabled for this bot, so messages in servers arrive empty unless they mention the bot. " +
            "Enable it in the Developer Portal: your application → Bot → Privileged Gateway Intents → Message Content Intent, then restart.",
        );
      }
    } catch (error) {
      if ((error as { status?: number }).status === 401) throw this.#connectError(error);
      this.#log.debug?.({ err: this.#safe(error), platform: this.platform }, "discord: could not read the application's intents; requesting Message Content");
    }
    try {
      await this.#client.login(this.#options.token);
    } catch (error) {
      throw this.#connectError(error);
    }
    const user = this.#client.user;
    this.#log.info(
      { platform: this.platform, mode: this.mode, bot: this.username, botId: user?.id ?? null, messageContentIntent: this.#messageContent },
      `discord adapter connected as ${this.username} (gateway)`,
    );
  }

  /** Stops handing messages to the gateway (Discord does not redeliver, so the gateway's refusal is answered instead). */
  async disconnect(): Promise<void> {
    this.#receiving = false;
    this.#typing.stopAll();
    await this.#client
      .destroy()
      .catch((error: unknown) => this.#log.warn({ err: this.#safe(error), platform: this.platform }, "discord: closing the gateway connection failed"));
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const channel = this.#channelOf(source);
    const replyTo = message.inReplyTo.find((id) => /^\d{1,20}$/u.test(id)) ?? null;
    try {
      if (message.text.trim() === "") return { messageId: null };
      let first: string | null = null;
      for (const body of discordMessageBodies(message.text, replyTo, { linkPreviews: this.#options.linkPreviews === true })) {
        const sent = (await this.#client.rest.post(this.#djs.Routes.channelMessages(channel), { body })) as { id: string };
        first ??= sent.id;
      }
      if (source.threadId) this.#botThreads.add(source.threadId);
      return { messageId: first };
    } catch (error) {
      throw this.#failure(error);
    } finally {
      if (message.kind !== "notice") this.#typing.stop(channel);
    }
  }

  /** Starts a public thread in the channel of `source` and returns its source (so a handoff lands there). */
  async createThread(source: SessionSource, title: string): Promise<SessionSource> {
    const parent = source.chatId;
    if (!parent) {
      throw new InvalidInputError(
        "discord: the home channel has no chatId; set homeChannels.discord.chatId to a channel id, or send /sethome in that channel.",
        { field: "source.chatId" },
      );
    }
    try {
      const thread = (await this.#client.rest.post(this.#djs.Routes.threads(parent), {
        body: { name: title.slice(0, 100) || "Threadline", type: DISCORD_CHANNEL_TYPES.publicThread, auto_archive_duration: 1440 },
      })) as { id: string };
      this.#botThreads.add(thread.id);
      return { platform: this.platform, chatType: "thread", chatId: parent, chatName: source.chatName ?? null, threadId: thread.id, parentChatId: parent };
    } catch (error) {
      throw this.#failure(error);
    }
  }

  async editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    try {
      await this.#client.rest.patch(this.#djs.Routes.channelMessage(this.#channelOf(source), messageId), {
        body: { content: text, allowed_mentions: { parse: [] }, ...(this.#options.linkPreviews === true ? {} : { flags: DISCORD_SUPPRESS_EMBEDS }) },
      });
    } catch (error) {
      throw this.#failure(error);
    }
  }

  // --- inbound -----------------------------------------------------------------------

  async #receive(message: Message): Promise<void> {
    const handler = this.#handler;
    const me = this.#client.user;
    if (handler === null || !this.#receiving || me === null) return;
    // A RESUME replays what the connection missed; a message seen before is no second turn.
    if (!this.#seen.add(message.id)) return;
    const mapped = mapDiscordMessage(this.#messageFacts(message), this.#channelFacts(message), me.id, { botThreads: this.#botThreads });
    if (mapped === null) return;
    const { inbound, candidate } = mapped;
    const threadId = inbound.source.threadId ?? null;
    let decision = decideAnswer(candidate, this.#rules);
    // An allowlisted thread counts even when its parent channel is not listed.
    if (!decision.answer && decision.reason === "chat-not-allowed" && threadId !== null && this.#rules.allowedChats.includes(threadId)) {
      decision = decideAnswer({ ...candidate, chatId: threadId }, this.#rules);
    }
    if (!decision.answer) {
      this.#log.debug?.({ platform: this.platform, reason: decision.reason }, "discord: message not answered");
      return;
    }
    const channel = this.#channelOf(inbound.source);
    this.#typing.start(channel);
    try {
      const ack = await handler(inbound);
      if (ack.status !== "accepted" && ack.status !== "queued") this.#typing.stop(channel);
      if (ack.status === "rejected") {
        this.#log.warn({ platform: this.platform, key: ack.sessionKey, reason: ack.reason }, "discord: message refused by the gateway");
        // Discord does not deliver a message twice: say why it was not taken.
        await this.send(inbound.source, { text: ack.reason, kind: "notice", inReplyTo: [message.id] }).catch(() => {});
      }
    } catch (error) {
      this.#typing.stop(channel);
      this.#seen.delete(message.id);
      this.#log.error({ err: this.#safe(error), platform: this.platform }, "discord: the gateway could not take a message");
      await this.send(inbound.source, { text: "Sorry, your message could not be stored. Please send it again.", kind: "error", inReplyTo: [message.id] }).catch(
        () => {},
      );
    }
  }

  #messageFacts(message: Message): DiscordMessageFacts {
    return {
      id: message.id,
      channel_id: message.channelId,
      guild_id: message.guildId,
      content: message.content,
      author: { id: message.author.id, username: message.author.username, global_name: message.author.globalName, bot: message.author.bot },
      mentions: [...message.mentions.users.values()].map((u) => ({ id: u.id })),
      attachments: [...message.attachments.values()].map((a) => ({
        id: a.id,
        filename: a.name,
        url: a.url,
        content_type: a.contentType,
        description: a.description,
      })),
      referencedAuthorId: message.mentions.repliedUser?.id ?? null,
    };
  }

  #channelFacts(message: Message): DiscordChannelFacts {
    const channel = message.channel;
    const facts: DiscordChannelFacts = { id: channel.id, type: channel.type, guildId: message.guildId };
    if ("name" in channel) facts.name = channel.name;
    if ("topic" in channel) facts.topic = channel.topic;
    if (channel.isThread()) {
      const parent = channel.parent;
      facts.parentId = channel.parentId;
      facts.parentName = parent?.name ?? null;
      facts.parentTopic = parent !== null && "topic" in parent ? parent.topic : null;
      facts.ownerId = channel.ownerId;
      facts.botIsMember = channel.joined;
    }
    return facts;
  }

  // --- helpers -----------------------------------------------------------------------

  /** The channel id messages of `source` go to: its thread, else its chat. */
  #channelOf(source: SessionSource): string {
    const channel = source.threadId || source.chatId;
    if (!channel)
      throw new InvalidInputError("discord: the session source has no chatId to send to; pass the source of a Discord channel or DM.", {
        field: "source.chatId",
      });
    return channel;
  }

  #connectError(error: unknown): PlatformError {
    const safe = this.#safe(error);
    const status = (error as { status?: number }).status;
    const code = (error as { code?: string }).code;
    const why =
      status === 401 || code === "TokenInvalid" || /authentication failed/iu.test(safe.message)
        ? "Discord refused the bot token (check adapters.discord.token or DISCORD_BOT_TOKEN; the Developer Portal's Bot → Reset Token gives a new one)"
        : /disallowed intents/iu.test(safe.message)
          ? "Discord refused the Message Content intent: enable it in the Developer Portal (your application → Bot → Privileged Gateway Intents → Message Content Intent)"
          : `could not connect to Discord${this.#options.apiUrl ? ` at ${this.#options.apiUrl}` : ""}: ${safe.message}`;
    return new PlatformError(this.platform, `discord: ${why}`, { cause: safe });
  }

  #safe(error: unknown): Error {
    return redactError(error, [this.#options.token]);
  }

  /** A failed platform call as the adapter throws it: a {@link PlatformError} with the redacted error's message, that error as `cause`. */
  #failure(error: unknown): PlatformError {
    const safe = this.#safe(error);
    return new PlatformError(this.platform, safe.message, { cause: safe });
  }
}
