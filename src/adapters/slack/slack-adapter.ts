/**
 * The Slack adapter: Bolt (`@slack/bolt`, loaded lazily) with its `WebClient`
 * (`@slack/web-api`), receiving the Events API over HTTP on a route of the gateway's own
 * server ({@link SlackEventsRoute}: Bolt verifies the signature and the 5-minute window;
 * anything else gets 401), or over Socket Mode with an app-level token.
 *
 * - Inbound: `message` events (DMs, channels, private channels, group DMs, threads) and
 *   `app_mention` are mapped ({@link mapSlackEvent}) with the sender's name (`users.info`)
 *   and the channel's name and purpose (`conversations.info`), both cached, and go through the
 *   chat adapters' one {@link InboundFlow}: de-duplicated on `<channel>:<ts>` (a mention
 *   arrives as both `message` and `app_mention`, and Slack resends an event it saw no 200 for,
 *   with `X-Slack-Retry-Num`), the answer rules (before any look-up), the hand-off to the
 *   gateway before the 200 goes out. The Events API `redelivers`: a message the gateway cannot
 *   store is answered 500 and Slack sends it again; in Socket Mode the chat is asked to send it
 *   again. Socket Mode runs under the receiver lease when there are several replicas.
 * - Outbound: replies are split at {@link SLACK_MESSAGE_LIMIT} characters of mrkdwn
 *   ({@link splitMessage}), converted ({@link markdownToSlackMrkdwn}) and sent as a section
 *   block with the same text as `text`; when Slack rejects the blocks or the formatting,
 *   the chunk is sent again as plain text. Everything goes to the thread it came from
 *   (`thread_ts`); notices are plain text.
 * - 429s are waited out (`Retry-After`) and retried by the WebClient; other failures are
 *   thrown to the gateway, which logs them with the session key and counts them.
 * - No typing indicator by default (Slack has none for bots on the Web API); with
 *   `assistantStatus`, `assistant.threads.setStatus` shows "is thinking…" in the thread
 *   while the turn runs (apps with the Agents & AI Apps feature).
 * - Files: {@link SlackAdapter.fetchMedia} downloads a shared file from its private URL with the
 *   bot token, only from Slack's file host ({@link slackFileOrigins}).
 * - The tokens and the signing secret never appear in anything this adapter logs or throws.
 *
 * @module
 */
import type { App, Logger as BoltLogger } from "@slack/bolt";
import type { WebClient, WebClientOptions } from "@slack/web-api";
import type { FastifyInstance } from "fastify";
import {
  noopLogger,
  type Adapter,
  MediaUnavailableError,
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
  FileDownloadError,
  InboundFlow,
  PlatformFailures,
  downloadPlatformFile,
  httpOrigin,
  loadSdk,
  redactText,
  splitMessage,
  type AnswerRules,
} from "../chat/index.js";
import { SlackEventsRoute } from "./slack-events-route.js";
import { SLACK_MESSAGE_LIMIT, markdownToSlackMrkdwn, neutralizeSlackBroadcasts } from "./slack-format.js";
import {
  SLACK_PLATFORM,
  isSpokenSlackMessage,
  mapSlackEvent,
  slackChatKind,
  type SlackBotIdentity,
  type SlackLookups,
  type SlackMessageEvent,
} from "./slack-source.js";

type Bolt = typeof import("@slack/bolt");
type WebApi = typeof import("@slack/web-api");

/** Options of a {@link SlackAdapter}. */
export interface SlackAdapterOptions {
  /** The bot token (`xoxb-…`; never logged). */
  botToken: string;
  /** Events API over HTTP: the app's signing secret (never logged). */
  signingSecret?: string | null;
  /** Socket Mode: the app-level token (`xapp-…`; never logged). With it, no HTTP route is mounted. */
  appToken?: string | null;
  /** The Events API route on the gateway's server (default `/slack/events`). */
  eventsPath?: string | null;
  /** The Web API base URL (default `https://slack.com/api/`; a test fake). */
  apiUrl?: string | null;
  /** Who is answered (default: DMs, and mentions/threads the bot is in elsewhere; no bots; no allowlists). */
  rules?: AnswerRules;
  /** Show "is thinking…" with `assistant.threads.setStatus` while a turn runs (default false). */
  assistantStatus?: boolean;
  /** Let the platform show previews of links in sent messages (default false: previews off, so no URL in a reply is fetched without a click). */
  linkPreviews?: boolean;
  logger?: GatewayLogger;
  /** How many times a failed Web API call (429, 5xx, network) is retried (default 5). */
  maxRetries?: number;
  /** The first pause between retries of a 5xx or network failure, in ms (default 1,000; 429s wait `Retry-After`). */
  retryMinTimeoutMs?: number;
  /** One Web API request's time limit, in ms (default 30,000). */
  requestTimeoutMs?: number;
  /** How long user/channel look-ups may delay an inbound message, in ms (default 2,000; then it goes on without names). */
  lookupTimeoutMs?: number;
}

/** Slack errors that mean "this formatting/these blocks are not accepted": the chunk is resent as plain text. */
const FORMAT_REJECTIONS = new Set(["invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long", "invalid_arguments", "markdown_text_conflict"]);
const LOOKUP_TTL_MS = 10 * 60_000;

/** Slack's file host: `url_private` and `url_private_download` of files in slack.com workspaces. */
export const SLACK_FILE_ORIGIN = "https://files.slack.com";

/**
 * The origins the adapter downloads files from: Slack's file host when the Web API is Slack's
 * own (`apiUrl` unset or on slack.com); otherwise (a proxy, a test fake) the origin of `apiUrl`,
 * which then serves the files too.
 */
export function slackFileOrigins(apiUrl: string | null | undefined): ReadonlySet<string> {
  const origin = apiUrl ? httpOrigin(apiUrl) : null;
  if (origin === null) return new Set([SLACK_FILE_ORIGIN]);
  const host = new URL(origin).hostname;
  return new Set([host === "slack.com" || host.endsWith(".slack.com") ? SLACK_FILE_ORIGIN : origin]);
}

/** Thrown by the event listener so the Events API route answers 500 and Slack sends the event again. */
class NotTaken extends PlatformError {}

/** The Slack platform adapter. Create it with {@link SlackAdapter.create}. */
export class SlackAdapter implements Adapter {
  readonly platform = SLACK_PLATFORM;
  /** Socket Mode keeps one socket per app token (one replica holds it); the Events API is served by any replica. */
  readonly exclusiveReceiver: boolean;
  readonly #app: App;
  readonly #client: WebClient;
  readonly #route: SlackEventsRoute | null;
  readonly #options: SlackAdapterOptions;
  readonly #log: GatewayLogger;
  readonly #secrets: string[];
  readonly #failures: PlatformFailures;
  readonly #flow: InboundFlow;
  /** `<channel>:<thread_ts>` of threads the bot started or posted in. */
  readonly #botThreads = new Set<string>();
  readonly #users = new Map<string, { name: string | null; at: number }>();
  readonly #channels = new Map<string, { info: SlackLookups; at: number }>();
  #me: (SlackBotIdentity & { name: string | null; team: string | null }) | null = null;
  /** Where files may be downloaded from (see {@link slackFileOrigins}). */
  readonly #fileOrigins: ReadonlySet<string>;
  #statusWarned = false;

  private constructor(options: SlackAdapterOptions, bolt: Bolt, webApi: WebApi) {
    this.#options = options;
    this.#fileOrigins = slackFileOrigins(options.apiUrl);
    this.exclusiveReceiver = Boolean(options.appToken);
    this.#log = options.logger ?? noopLogger;
    this.#secrets = [options.botToken, options.signingSecret ?? "", options.appToken ?? ""].filter((s) => s !== "");
    this.#failures = new PlatformFailures(SLACK_PLATFORM, this.#secrets, { codeOf: slackErrorCode });
    const logger = this.#boltLogger(bolt);
    const apiUrl = options.apiUrl ? (options.apiUrl.endsWith("/") ? options.apiUrl : `${options.apiUrl}/`) : undefined;
    const clientOptions: WebClientOptions = {
      ...(apiUrl !== undefined ? { slackApiUrl: apiUrl } : {}),
      logger,
      logLevel: webApi.LogLevel.INFO,
      timeout: options.requestTimeoutMs ?? 30_000,
      retryConfig: { retries: options.maxRetries ?? 5, factor: 2, minTimeout: options.retryMinTimeoutMs ?? 1_000, maxTimeout: 60_000, randomize: true },
    };
    if (options.appToken) {
      this.#route = null;
      const receiver = new bolt.SocketModeReceiver({ appToken: options.appToken, logger, installerOptions: { clientOptions } });
      this.#app = new bolt.App({ token: options.botToken, receiver, logger, clientOptions, deferInitialization: true, ignoreSelf: false });
    } else {
      this.#route = new SlackEventsRoute(bolt, {
        signingSecret: options.signingSecret ?? "",
        path: options.eventsPath ?? "/slack/events",
        logger,
        accepting: () => this.#flow.receiving && this.#me !== null,
      });
      this.#app = new bolt.App({ token: options.botToken, receiver: this.#route, logger, clientOptions, deferInitialization: true, ignoreSelf: false });
    }
    this.#client = this.#app.client;
    this.#flow = new InboundFlow({
      platform: SLACK_PLATFORM,
      redelivers: this.#route !== null,
      rules: options.rules,
      logger: this.#log,
      send: (source, message) => this.send(source, message),
      redact: (error) => this.#safe(error),
      typing: options.assistantStatus
        ? {
            intervalMs: 30_000,
            send: (chat) => {
              const [channel, threadTs] = chat.split("\u0000");
              return this.#client.assistant.threads.setStatus({ channel_id: channel!, thread_ts: threadTs!, status: "is thinking…" });
            },
            onError: (error) => {
              if (this.#statusWarned) return;
              this.#statusWarned = true;
              this.#log.warn(
                { err: this.#safe(error), platform: this.platform },
                "slack: assistant.threads.setStatus failed (is the app an AI app with assistant:write?); no status is shown",
              );
            },
          }
        : null,
    });
    // The adapter's own rules (decideAnswer) drop its own and other bots' messages, so Bolt's ignoreSelf is off.
    this.#app.event("message", async ({ event, body }) =>
      this.#receive(event as unknown as SlackMessageEvent, body as { team_id?: string; event_id?: string }),
    );
    this.#app.event("app_mention", async ({ event, body }) =>
      this.#receive(event as unknown as SlackMessageEvent, body as { team_id?: string; event_id?: string }),
    );
    this.#app.error(async (error) => {
      if (error instanceof NotTaken) throw error;
      this.#log.error({ err: this.#safe(error), platform: this.platform }, "slack: handling an event failed");
    });
  }

  /** Loads Bolt and the Web API client and makes the adapter (nothing is sent yet). */
  static async create(options: SlackAdapterOptions): Promise<SlackAdapter> {
    // Bolt is CommonJS: its named exports come through Node's CJS interop (the types see the module object).
    const bolt = await loadSdk<Bolt>("@slack/bolt", SLACK_PLATFORM, () => import("@slack/bolt") as unknown as Promise<Bolt>);
    const webApi = await loadSdk<WebApi>("@slack/web-api", SLACK_PLATFORM, () => import("@slack/web-api"));
    return new SlackAdapter(options, bolt, webApi);
  }

  /** `events` (Events API over HTTP) or `socket` (Socket Mode). */
  get mode(): "events" | "socket" {
    return this.#route === null ? "socket" : "events";
  }

  /** The bot's identity once connected (`@name (U…)`), `null` before. */
  get identity(): string | null {
    return this.#me === null ? null : `@${this.#me.name ?? "bot"} (${this.#me.userId})`;
  }

  /** Events API mode: mounts the events route on the gateway's server (call before it listens). */
  routes(http: FastifyInstance): void {
    this.#route?.routes(http);
  }

  /**
   * Logs in (`auth.test`: a refused token fails the start with a clear error), then takes
   * events: the HTTP route starts accepting, or Socket Mode connects.
   */
  async connect(handler: InboundHandler, events?: AdapterEvents): Promise<void> {
    this.#flow.connect(handler, events);
    let auth: { user_id?: string; bot_id?: string; team_id?: string; user?: string; team?: string };
    try {
      auth = await this.#client.auth.test();
      await this.#app.init();
    } catch (error) {
      throw this.#connectError(error);
    }
    this.#me = { userId: auth.user_id ?? "", botId: auth.bot_id ?? null, teamId: auth.team_id ?? null, name: auth.user ?? null, team: auth.team ?? null };
    if (this.#route === null) await this.#flow.receive({ start: async () => void (await this.#app.start()), stop: () => this.#stopSocket() });
    else await this.#flow.receive();
    this.#log.info(
      {
        platform: this.platform,
        mode: this.mode,
        bot: this.identity,
        team: this.#me.team,
        ...(this.#route !== null ? { path: this.#options.eventsPath ?? "/slack/events" } : {}),
      },
      `slack adapter connected as ${this.identity} (${this.mode})`,
    );
  }

  /** Stops taking events (the route answers 503, so Slack retries later; Socket Mode disconnects); `connect` starts again. */
  async stopReceiving(): Promise<void> {
    await this.#flow.stopReceiving();
  }

  async disconnect(): Promise<void> {
    await this.#flow.close();
  }

  async #stopSocket(): Promise<void> {
    await this.#app.stop().catch((error: unknown) => this.#log.warn({ err: this.#safe(error) }, "slack: stopping Socket Mode failed"));
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const channel = source.chatId;
    if (channel === undefined || channel === null || channel === "") {
      throw new InvalidInputError("slack: the session source has no chatId (channel) to send to; pass the source of a Slack channel or DM.", {
        field: "source.chatId",
      });
    }
    const threadTs = source.threadId ? source.threadId : undefined;
    try {
      if (message.text.trim() === "") return { messageId: null };
      let first: string | null = null;
      const chunks =
        message.kind === "reply"
          ? splitMessage(message.text, SLACK_MESSAGE_LIMIT, { measure: (t) => markdownToSlackMrkdwn(t).length })
          : splitMessage(message.text, SLACK_MESSAGE_LIMIT);
      for (const chunk of chunks) {
        const ts =
          message.kind === "reply" ? await this.#postFormatted(channel, threadTs, chunk) : await this.#post(channel, threadTs, chunk, { mrkdwn: false });
        first ??= ts;
      }
      if (threadTs !== undefined) this.#botThreads.add(`${channel}:${threadTs}`);
      return { messageId: first };
    } catch (error) {
      throw this.#failures.failure(error);
    } finally {
      if (message.kind !== "notice" && threadTs !== undefined) this.#flow.stopTyping(`${channel}\u0000${threadTs}`);
    }
  }

  /** Posts a root message (the title) in the channel of `source` and returns the thread under it. */
  async createThread(source: SessionSource, title: string): Promise<SessionSource> {
    const channel = source.chatId;
    if (!channel) {
      throw new InvalidInputError(
        "slack: the home channel has no chatId; set homeChannels.slack.chatId to a channel id (C…), or send /sethome in that channel.",
        { field: "source.chatId" },
      );
    }
    try {
      const ts = await this.#post(channel, undefined, `🧵 ${title.trim() || "Threadline"}`, { mrkdwn: false });
      if (ts === null)
        throw new PlatformError(
          this.platform,
          "slack: chat.postMessage returned no ts for the thread's root message; check the Slack Web API address (adapters.slack.apiUrl) and try the handoff again.",
        );
      this.#botThreads.add(`${channel}:${ts}`);
      return {
        platform: this.platform,
        chatType: source.chatType === "dm" ? "dm" : source.chatType,
        chatId: channel,
        chatName: source.chatName ?? null,
        threadId: ts,
      };
    } catch (error) {
      throw this.#failures.failure(error);
    }
  }

  async editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    try {
      await this.#client.chat.update({ channel: source.chatId!, ts: messageId, text: neutralizeSlackBroadcasts(text), ...this.#unfurl() } as Parameters<
        WebClient["chat"]["update"]
      >[0]);
    } catch (error) {
      throw this.#failures.failure(error);
    }
  }

  /**
   * Downloads a shared file: its `url_private_download`/`url_private` (asked of `files.info` when
   * only the file id is known) with `Authorization: Bearer <bot token>`, and only when that URL is
   * on Slack's file host ({@link slackFileOrigins}): a URL anywhere else is refused before
   * anything is sent. A redirect is not followed: Slack sends a request whose token it does not
   * take to its sign-in page.
   */
  async fetchMedia(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia> {
    let url = media.url ?? null;
    let size: number | null = null;
    if (url === null) {
      if (typeof media.fileId !== "string" || media.fileId === "") {
        throw new PlatformError(this.platform, "slack: the attachment has neither a file id nor a private URL, so it cannot be downloaded");
      }
      let file: { url_private?: string; url_private_download?: string; size?: number; mode?: string } | undefined;
      try {
        file = (await this.#client.files.info({ file: media.fileId })).file;
      } catch (error) {
        if (slackErrorCode(error) === "file_not_found" || slackErrorCode(error) === "file_deleted") {
          throw new MediaUnavailableError("Slack no longer has this file (it was deleted), so it could not be kept.");
        }
        throw this.#failures.failure(error);
      }
      url = file?.url_private_download ?? file?.url_private ?? null;
      size = typeof file?.size === "number" ? file.size : null;
      if (url === null) throw new MediaUnavailableError("Slack does not give this file for download (an external or deleted file), so it could not be kept.");
    }
    try {
      const fetched = await downloadPlatformFile(url, {
        platform: this.platform,
        origins: this.#fileOrigins,
        host: "Slack's file host",
        headers: { authorization: `Bearer ${this.#options.botToken}` },
        signal: request.signal,
        redact: (text) => redactText(text, this.#secrets),
        followRedirects: false,
      });
      return { ...fetched, size: fetched.size ?? size };
    } catch (error) {
      if (error instanceof FileDownloadError && error.status >= 300 && error.status < 400) {
        throw new PlatformError(
          this.platform,
          `slack: the file host sent the download to its sign-in page (HTTP ${error.status}): it did not take the bot token for this file; check that the app has the files:read scope and is in the conversation`,
          { platformCode: error.status },
        );
      }
      throw error;
    }
  }

  // --- inbound -----------------------------------------------------------------------

  async #receive(event: SlackMessageEvent, body: { team_id?: string }): Promise<void> {
    const me = this.#me;
    if (me === null || !isSpokenSlackMessage(event)) return;
    const context = { botThreads: this.#botThreads, teamId: body.team_id ?? null };
    const outcome = await this.#flow.take(`${event.channel}:${event.ts}`, () => {
      // Who is answered is decided before any look-up, so a message that is not for the bot costs
      // no API call (the look-ups only add names; DMs are told apart by their id, D…).
      const early = mapSlackEvent(event, me, {}, context);
      if (early === null) return null;
      const { chatId, threadId } = early.inbound.source;
      return {
        candidate: early.candidate,
        inbound: async () => (mapSlackEvent(event, me, await this.#lookups(event), context) ?? early).inbound,
        // The assistant status lives in a thread (Slack's AI-app threads); top-level messages show none.
        typingKey: threadId ? `${chatId}\u0000${threadId}` : null,
      };
    });
    if (outcome === "redeliver") throw new NotTaken(this.platform, "slack: the gateway could not take the event; Slack sends it again");
  }

  /** The sender's name and the conversation's name, purpose and kind (cached; bounded wait; failures give nulls). */
  async #lookups(event: SlackMessageEvent): Promise<SlackLookups> {
    const work = (async (): Promise<SlackLookups> => {
      const [userName, channel] = await Promise.all([event.user ? this.#userName(event.user) : Promise.resolve(null), this.#channelInfo(event.channel!)]);
      return { ...channel, userName };
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<SlackLookups>((resolve) => {
      timer = setTimeout(() => resolve({}), this.#options.lookupTimeoutMs ?? 2_000);
      timer.unref();
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  async #userName(userId: string): Promise<string | null> {
    const cached = this.#users.get(userId);
    if (cached !== undefined && Date.now() - cached.at < LOOKUP_TTL_MS) return cached.name;
    try {
      const { user } = await this.#client.users.info({ user: userId });
      const name = user?.profile?.display_name || user?.real_name || user?.profile?.real_name || user?.name || null;
      this.#users.set(userId, { name, at: Date.now() });
      return name;
    } catch (error) {
      this.#log.warn(
        { err: this.#safe(error), platform: this.platform },
        "slack: users.info failed (is the users:read scope granted?); going on without the name",
      );
      return null;
    }
  }

  async #channelInfo(channelId: string): Promise<SlackLookups> {
    const cached = this.#channels.get(channelId);
    if (cached !== undefined && Date.now() - cached.at < LOOKUP_TTL_MS) return cached.info;
    try {
      const { channel } = await this.#client.conversations.info({ channel: channelId });
      const kind = channel?.is_im ? "im" : channel?.is_mpim ? "mpim" : channel?.is_private || channel?.is_group ? "group" : "channel";
      const info: SlackLookups = {
        chatName: channel?.is_im ? null : (channel?.name ?? null),
        chatTopic: channel?.purpose?.value || channel?.topic?.value || null,
        chatKind: kind,
      };
      this.#channels.set(channelId, { info, at: Date.now() });
      return info;
    } catch (error) {
      this.#log.warn(
        { err: this.#safe(error), platform: this.platform },
        "slack: conversations.info failed (are the channels:read/groups:read/im:read scopes granted?); going on without the channel's name",
      );
      return { chatKind: slackChatKind({ type: "message", channel: channelId }) };
    }
  }

  // --- outbound helpers ----------------------------------------------------------------

  /**
   * Every post goes through here: broadcast mentions in the text and in section blocks are
   * defused ({@link neutralizeSlackBroadcasts}), and unfurling is off unless `linkPreviews`.
   */
  async #post(
    channel: string,
    threadTs: string | undefined,
    text: string,
    extra: { mrkdwn: boolean; blocks?: Array<{ type: "section"; text: { type: "mrkdwn"; text: string } }> },
  ): Promise<string | null> {
    const blocks = extra.blocks?.map((block) => ({ ...block, text: { ...block.text, text: neutralizeSlackBroadcasts(block.text.text) } }));
    const result = await this.#client.chat.postMessage({
      channel,
      text: neutralizeSlackBroadcasts(text),
      ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
      ...this.#unfurl(),
      mrkdwn: extra.mrkdwn,
      ...(blocks !== undefined ? { blocks } : {}),
    } as Parameters<WebClient["chat"]["postMessage"]>[0]);
    return typeof result.ts === "string" ? result.ts : null;
  }

  /** `unfurl_links` and `unfurl_media`: false unless `linkPreviews` (a preview is fetched by Slack with no click). */
  #unfurl(): { unfurl_links: boolean; unfurl_media: boolean } {
    const on = this.#options.linkPreviews === true;
    return { unfurl_links: on, unfurl_media: on };
  }

  /** mrkdwn in a section block (and as `text`); plain text when Slack rejects it. */
  async #postFormatted(channel: string, threadTs: string | undefined, markdown: string): Promise<string | null> {
    const mrkdwn = markdownToSlackMrkdwn(markdown);
    if (mrkdwn === "") return this.#post(channel, threadTs, markdown, { mrkdwn: false });
    try {
      return await this.#post(channel, threadTs, mrkdwn, { mrkdwn: true, blocks: [{ type: "section", text: { type: "mrkdwn", text: mrkdwn } }] });
    } catch (error) {
      const code = (error as { data?: { error?: string } }).data?.error;
      if (code !== undefined && FORMAT_REJECTIONS.has(code)) {
        this.#log.warn({ platform: this.platform, error: code }, "slack: formatting rejected; sending plain text");
        return this.#post(channel, threadTs, markdown, { mrkdwn: false });
      }
      throw error;
    }
  }

  #connectError(error: unknown): PlatformError {
    const code = slackErrorCode(error);
    const why =
      code === "invalid_auth" || code === "not_authed" || code === "account_inactive" || code === "token_revoked"
        ? `Slack refused the bot token (${code}): check adapters.slack.botToken or SLACK_BOT_TOKEN (the app's OAuth & Permissions page shows it)`
        : `could not reach the Slack Web API${this.#options.apiUrl ? ` at ${this.#options.apiUrl}` : ""}: ${this.#safe(error).message}`;
    return this.#failures.connectError(why, error);
  }

  /** The redacted error, with Slack's `data.error` kept for the log. */
  #safe(error: unknown): Error {
    const safe = this.#failures.safe(error);
    const code = slackErrorCode(error);
    if (code !== null) (safe as unknown as { data: { error: string } }).data = { error: code };
    return safe;
  }

  /** Bolt's and the WebClient's log lines go to the gateway's logger, secrets removed; debug lines are dropped. */
  #boltLogger(bolt: Bolt): BoltLogger {
    const clean = (parts: unknown[]): string =>
      redactText(parts.map((p) => (p instanceof Error ? p.message : typeof p === "string" ? p : JSON.stringify(p))).join(" "), this.#secrets);
    let level = bolt.LogLevel.INFO;
    return {
      debug: () => {},
      info: (...parts: unknown[]) => this.#log.info({ platform: SLACK_PLATFORM }, `slack: ${clean(parts)}`),
      warn: (...parts: unknown[]) => this.#log.warn({ platform: SLACK_PLATFORM }, `slack: ${clean(parts)}`),
      error: (...parts: unknown[]) => this.#log.error({ platform: SLACK_PLATFORM }, `slack: ${clean(parts)}`),
      setLevel: (next) => {
        level = next;
      },
      getLevel: () => level,
      setName: () => {},
    };
  }
}

/** Slack's `error` of a failed Web API call (`channel_not_found`), when there is one. */
function slackErrorCode(error: unknown): string | null {
  const code = (error as { data?: { error?: unknown } } | null)?.data?.error;
  return typeof code === "string" ? code : null;
}
