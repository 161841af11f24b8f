/**
 * The Discord adapter: discord.js (loaded lazily) on the gateway WebSocket for inbound
 * messages and on its REST client for everything sent.
 *
 * - Inbound: `messageCreate` events are mapped ({@link mapDiscordMessage}) and run through the
 *   shared {@link InboundFlow} (de-duplicated by message id, then the answer rules: refused
 *   messages are dropped, not stored); while the turn runs the channel shows "typing…"
 *   (renewed every 8 s: Discord shows it for 10 s).
 * - Receiving: one gateway connection per token; with several replicas one connects at a time
 *   (the receiver lease, {@link DiscordAdapter.exclusiveReceiver}). Everything sent goes
 *   through a REST client of its own, so a replica that is not connected sends too.
 * - Outbound: replies are sent as Discord Markdown, split at 2,000 characters
 *   ({@link discordMessageBodies}), into the thread they came from, the first chunk a reply
 *   to the triggering message; mentions in replies never ping (`allowed_mentions`). Sends go
 *   by channel id through discord.js's REST client (so a reply after a restart needs no
 *   cache), which waits out 429s (`retry_after`) and retries.
 * - Heartbeats, reconnects and RESUME after a dropped connection are discord.js's; the
 *   adapter logs them. Intents: Guilds, GuildMessages, DirectMessages and MessageContent
 *   (left out, with a warning, when the application does not have the Message Content
 *   intent enabled, because Discord would refuse the connection).
 * - Attachments: {@link DiscordAdapter.fetchMedia} downloads from the attachment's CDN URL, only
 *   when it is on Discord's CDN (or the configured `cdnUrl`: {@link discordFileOrigins}).
 * - The bot token never appears in anything this adapter logs or throws.
 *
 * @module
 */
import type { Client, Message, REST } from "discord.js";
import {
  noopLogger,
  type Adapter,
  type AdapterEvents,
  type FetchedMedia,
  type GatewayLogger,
  type InboundHandler,
  type InboundMedia,
  type MediaFetchRequest,
  type OutboundMessage,
  type SessionSource,
} from "../../gateway/index.js";
import { InvalidInputError, PlatformError } from "../../store/index.js";
import {
  DEFAULT_ANSWER_RULES,
  InboundFlow,
  PlatformFailures,
  connectInBackground,
  downloadPlatformFile,
  httpOrigin,
  loadSdk,
  redactText,
  type AnswerRules,
  type MappedInbound,
} from "../chat/index.js";
import { DISCORD_SUPPRESS_EMBEDS, discordMessageBodies } from "./discord-format.js";
import { DISCORD_CHANNEL_TYPES, DISCORD_PLATFORM, mapDiscordMessage, type DiscordChannelFacts, type DiscordMessageFacts } from "./discord-source.js";

type DiscordJs = typeof import("discord.js");

/** Application flags that mean the Message Content intent is enabled (Discord's documented bits). */
const MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19);

/** Discord's CDN: attachment `url`s (`cdn.discordapp.com`) and their `proxy_url`s (`media.discordapp.net`). */
export const DISCORD_CDN_ORIGINS: readonly string[] = Object.freeze(["https://cdn.discordapp.com", "https://media.discordapp.net"]);

/**
 * The origins attachments are downloaded from: Discord's CDN; with `cdnUrl` (a proxy in front of
 * the CDN, a test fake) that origin only.
 */
export function discordFileOrigins(cdnUrl: string | null | undefined): ReadonlySet<string> {
  const origin = cdnUrl ? httpOrigin(cdnUrl) : null;
  return new Set(origin === null ? DISCORD_CDN_ORIGINS : [origin]);
}

/** Options of a {@link DiscordAdapter}. */
export interface DiscordAdapterOptions {
  /** The bot token from the Developer Portal (never logged). */
  token: string;
  /** The REST API base (default `https://discord.com/api`; a proxy, or a test fake). */
  apiUrl?: string | null;
  /** The gateway WebSocket URL (default: the one `GET /gateway/bot` answers). */
  gatewayUrl?: string | null;
  /** The CDN base (discord.js `rest.cdn`, default `https://cdn.discordapp.com`; a proxy, a test fake): when set, attachments are downloaded from this origin only. */
  cdnUrl?: string | null;
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
  /** One gateway connection per token: with several replicas, one receives at a time (the receiver lease). */
  readonly exclusiveReceiver = true;
  readonly #djs: DiscordJs;
  /** Everything sent (and the application's intents) goes through this REST client: no gateway login needed. */
  readonly #rest: REST;
  readonly #options: DiscordAdapterOptions;
  readonly #log: GatewayLogger;
  readonly #failures: PlatformFailures;
  readonly #flow: InboundFlow;
  /** Threads the bot opened or posted in during this run. */
  readonly #botThreads = new Set<string>();
  /** The gateway connection while receiving (a new client for each start). */
  #client: Client | null = null;
  #bot: { id: string; username: string } | null = null;
  #messageContent = true;
  /** Where attachments may be downloaded from (see {@link discordFileOrigins}). */
  readonly #fileOrigins: ReadonlySet<string>;

  private constructor(options: DiscordAdapterOptions, djs: DiscordJs) {
    this.#options = options;
    this.#djs = djs;
    this.#log = options.logger ?? noopLogger;
    this.#failures = new PlatformFailures(DISCORD_PLATFORM, [options.token]);
    this.#fileOrigins = discordFileOrigins(options.cdnUrl);
    // Sends work before (and without) the gateway: after a restart the resumed reply goes out at once.
    this.#rest = new djs.REST(this.#restOptions()).setToken(options.token);
    const rest = this.#rest;
    this.#flow = new InboundFlow({
      platform: DISCORD_PLATFORM,
      // Discord does not deliver a message twice: the chat is asked to send it again.
      redelivers: false,
      send: (source, message) => this.send(source, message),
      redact: (error) => this.#failures.safe(error),
      rules: options.rules ?? DEFAULT_ANSWER_RULES,
      logger: this.#log,
      typing: {
        send: (channel) => rest.post(djs.Routes.channelTyping(channel)),
        intervalMs: options.typingIntervalMs ?? 8_000,
        onError: (error) => this.#log.warn({ err: this.#failures.safe(error), platform: this.platform }, "discord: the typing indicator failed"),
      },
    });
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
    return this.#bot ? `@${this.#bot.username}` : null;
  }

  /** Whether the Message Content intent is requested (false when the application does not have it). */
  get messageContentIntent(): boolean {
    return this.#messageContent;
  }

  /**
   * Checks the application's Message Content intent, logs in and connects to the gateway — at
   * once, or, with a receiver lease in `events`, once this replica holds it. A refused token
   * fails at once; an unreachable Discord does not hold the gateway's start: after
   * `connectTimeoutMs` the adapter keeps connecting in the background.
   */
  async connect(handler: InboundHandler, events?: AdapterEvents): Promise<void> {
    this.#flow.connect(handler, events);
    await connectInBackground(this.#flow.receive({ start: () => this.#start(), stop: () => this.#stop() }), {
      timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
      onTimeout: () =>
        this.#log.warn(
          { platform: this.platform, apiUrl: this.#options.apiUrl ?? "https://discord.com/api" },
          "discord: Discord does not answer yet; still connecting in the background",
        ),
      onBackgroundFailure: (error) => this.#log.error({ err: this.#failures.safe(error), platform: this.platform }, "discord: connecting failed"),
    });
  }

  /** Connects to the gateway with a new client (so a start after a stop works). */
  async #start(): Promise<void> {
    const { Routes } = this.#djs;
    try {
      const application = (await this.#rest.get(Routes.currentApplication())) as { flags?: number };
      if (((application.flags ?? 0) & MESSAGE_CONTENT_FLAGS) === 0) {
        this.#messageContent = false;
        this.#log.warn(
          { platform: this.platform, messageContentIntent: false },
          "discord: the Message Content intent is not enabled for this bot, so messages in servers arrive empty unless they mention the bot. " +
            "Enable it in the Developer Portal: your application → Bot → Privileged Gateway Intents → Message Content Intent, then restart.",
        );
      }
    } catch (error) {
      if ((error as { status?: number }).status === 401) throw this.#connectError(error);
      this.#log.debug?.(
        { err: this.#failures.safe(error), platform: this.platform },
        "discord: could not read the application's intents; requesting Message Content",
      );
    }
    const client = this.#newClient();
    this.#client = client;
    try {
      await client.login(this.#options.token);
    } catch (error) {
      if (this.#client === client) this.#client = null;
      throw this.#connectError(error);
    }
    const user = client.user;
    if (user) this.#bot = { id: user.id, username: user.username };
    this.#log.info(
      { platform: this.platform, mode: this.mode, bot: this.username, botId: user?.id ?? null, messageContentIntent: this.#messageContent },
      `discord adapter connected as ${this.username} (gateway)`,
    );
  }

  /** Closes the gateway connection (sends keep working through REST). */
  async #stop(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    await client
      ?.destroy()
      .catch((error: unknown) =>
        this.#log.warn({ err: this.#failures.safe(error), platform: this.platform }, "discord: closing the gateway connection failed"),
      );
  }

  /** A gateway client with the intents the application has, and the adapter's event handlers. */
  #newClient(): Client {
    const djs = this.#djs;
    const { Client, GatewayIntentBits, Partials, Events } = djs;
    const intents = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages];
    if (this.#messageContent) intents.push(GatewayIntentBits.MessageContent);
    const client = new Client({
      intents,
      // DM channels are not cached before their first message: without this their messages are dropped.
      partials: [Partials.Channel],
      rest: this.#restOptions(),
    });
    const gatewayUrl = this.#options.gatewayUrl;
    if (gatewayUrl) {
      // discord.js takes the gateway URL from GET /gateway/bot; an explicit one replaces it there.
      const rest = client.rest;
      const get = rest.get.bind(rest);
      rest.get = async (route, request) => {
        const data = await get(route, request);
        return route === djs.Routes.gatewayBot() ? { ...(data as object), url: gatewayUrl } : data;
      };
    }
    const safe = (error: unknown): Error => this.#failures.safe(error);
    client.on(Events.MessageCreate, (message) => void this.#receive(client, message));
    client.on(Events.ThreadCreate, (thread) => {
      if (thread.ownerId === client.user?.id) this.#botThreads.add(thread.id);
    });
    client.on(Events.ShardReconnecting, (shard) => this.#log.warn({ platform: this.platform, shard }, "discord: gateway connection lost; reconnecting"));
    client.on(Events.ShardResume, (shard, replayed) =>
      this.#log.info({ platform: this.platform, shard, replayed }, `discord: gateway connection resumed (${replayed} missed events replayed)`),
    );
    client.on(Events.ShardDisconnect, (event, shard) =>
      this.#log.error({ platform: this.platform, shard, code: event.code }, `discord: the gateway closed the connection for good (code ${event.code})`),
    );
    client.on(Events.ShardError, (error, shard) => this.#log.warn({ err: safe(error), platform: this.platform, shard }, "discord: gateway connection error"));
    client.on(Events.Error, (error) => this.#log.error({ err: safe(error), platform: this.platform }, "discord: client error"));
    client.on(Events.Warn, (message) => this.#log.warn({ platform: this.platform }, `discord: ${safe(message).message}`));
    return client;
  }

  /** Stops handing messages to the gateway and closes the connection (Discord does not redeliver, so the gateway's refusal is answered instead). */
  async disconnect(): Promise<void> {
    await this.#flow.close();
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const channel = this.#channelOf(source);
    const replyTo = message.inReplyTo.find((id) => /^\d{1,20}$/u.test(id)) ?? null;
    try {
      if (message.text.trim() === "") return { messageId: null };
      let first: string | null = null;
      for (const body of discordMessageBodies(message.text, replyTo, { linkPreviews: this.#options.linkPreviews === true })) {
        const sent = (await this.#rest.post(this.#djs.Routes.channelMessages(channel), { body })) as { id: string };
        first ??= sent.id;
      }
      if (source.threadId) this.#botThreads.add(source.threadId);
      return { messageId: first };
    } catch (error) {
      throw this.#failures.failure(error);
    } finally {
      if (message.kind !== "notice") this.#flow.stopTyping(channel);
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
      const thread = (await this.#rest.post(this.#djs.Routes.threads(parent), {
        body: { name: title.slice(0, 100) || "Threadline", type: DISCORD_CHANNEL_TYPES.publicThread, auto_archive_duration: 1440 },
      })) as { id: string };
      this.#botThreads.add(thread.id);
      return { platform: this.platform, chatType: "thread", chatId: parent, chatName: source.chatName ?? null, threadId: thread.id, parentChatId: parent };
    } catch (error) {
      throw this.#failures.failure(error);
    }
  }

  async editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    try {
      await this.#rest.patch(this.#djs.Routes.channelMessage(this.#channelOf(source), messageId), {
        body: { content: text, allowed_mentions: { parse: [] }, ...(this.#options.linkPreviews === true ? {} : { flags: DISCORD_SUPPRESS_EMBEDS }) },
      });
    } catch (error) {
      throw this.#failures.failure(error);
    }
  }

  /**
   * Downloads an attachment from its CDN `url` (the one the gateway's MESSAGE_CREATE gave), only
   * when it is on Discord's CDN, or on the configured `cdnUrl`'s origin when there is one ({@link discordFileOrigins}):
   * a URL anywhere else is refused before any request. Discord's CDN needs no token, so none is sent.
   */
  async fetchMedia(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia> {
    const url = media.url ?? null;
    if (url === null || url === "") {
      throw new PlatformError(this.platform, "discord: the attachment has no CDN URL, so it cannot be downloaded");
    }
    return downloadPlatformFile(url, {
      platform: this.platform,
      origins: this.#fileOrigins,
      host: "Discord's CDN",
      signal: request.signal,
      redact: (text) => redactText(text, [this.#options.token]),
    });
  }

  // --- inbound -----------------------------------------------------------------------

  async #receive(client: Client, message: Message): Promise<void> {
    // A RESUME replays what the connection missed; the flow takes a message id once.
    await this.#flow.take(message.id, () => this.#map(client, message));
  }

  #map(client: Client, message: Message): MappedInbound | null {
    const me = client.user;
    if (me === null || this.#client !== client) return null;
    const mapped = mapDiscordMessage(this.#messageFacts(message), this.#channelFacts(message), me.id, { botThreads: this.#botThreads });
    if (mapped === null) return null;
    const threadId = mapped.inbound.source.threadId ?? null;
    return {
      ...mapped,
      // An allowlisted thread counts even when its parent channel is not listed.
      otherChatIds: threadId === null ? [] : [threadId],
      typingKey: this.#channelOf(mapped.inbound.source),
    };
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
        size: a.size,
        width: a.width,
        height: a.height,
        duration_secs: a.duration,
        waveform: a.waveform,
      })),
      flags: message.flags.bitfield,
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

  /** discord.js REST options: the configured API and CDN bases (trailing slashes dropped). */
  #restOptions(): { api?: string; cdn?: string } {
    const api = this.#options.apiUrl?.replace(/\/+$/u, "");
    const cdn = this.#options.cdnUrl?.replace(/\/+$/u, "");
    return { ...(api ? { api } : {}), ...(cdn ? { cdn } : {}) };
  }

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
    const safe = this.#failures.safe(error);
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
}
