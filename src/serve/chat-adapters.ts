/**
 * Builds the chat-platform adapters the config enables. Each platform's folder (and so its
 * SDK) is imported with `import()` only when its section is present, so an HTTP-only
 * gateway and the CLI never load grammY, Bolt, discord.js or matrix-js-sdk (WhatsApp and
 * Signal have no SDK: their folders speak the platform's HTTP API). To add a platform:
 * resolve its section in `chat-config/<platform>-config.ts` (composed in
 * `chat-config/index.ts`), then add a block here that imports its folder, creates the
 * adapter (with its durable `state`, if it keeps any) and mounts its HTTP routes (if any) on
 * the gateway's server.
 *
 * @module
 */
import type { FastifyInstance } from "fastify";
import type { Adapter, AdapterStateStore, GatewayLogger } from "../gateway/index.js";
import { redactingLogger } from "../gateway/internal.js";
import { InvalidInputError } from "../store/index.js";
import { chatAdapterProblems, chatAdapterRules, type ChatAdaptersConfig } from "./chat-config/index.js";

/** Options of {@link createChatAdapters}. */
export interface CreateChatAdaptersOptions {
  /** The gateway's server: webhook-style platforms mount their routes on it (before it listens). */
  http: FastifyInstance;
  logger: GatewayLogger;
  /**
   * The durable state of one platform's adapter (e.g. Matrix keeps its sync token there so a
   * restart continues where it stopped); `threadline serve` passes the database's `meta`
   * table (`adapterStateInMeta`). Without it, such adapters keep their state in memory.
   */
  state?: (platform: string) => AdapterStateStore;
  /** `gateway.admins`: admins per platform (allowed through the adapter's allowlist too). */
  admins?: Readonly<Record<string, readonly string[]>>;
}

/**
 * Creates (but does not connect) the adapters of the configured chat platforms.
 *
 * @throws {InvalidInputError} listing every missing or inconsistent key (e.g. no token).
 */
export async function createChatAdapters(adapters: ChatAdaptersConfig, options: CreateChatAdaptersOptions): Promise<Adapter[]> {
  const problems = chatAdapterProblems(adapters);
  if (problems.length > 0) throw new InvalidInputError(problems.join("; "), { field: "adapters" });
  const out: Adapter[] = [];
  // Adapters log session keys (a refused message): those with phone numbers are logged as hashes.
  options = { ...options, logger: redactingLogger(options.logger) };
  const telegram = adapters.telegram;
  if (telegram !== null) {
    const { TelegramAdapter } = await import("../adapters/telegram/index.js");
    const adapter = await TelegramAdapter.create({
      token: telegram.token!,
      mode: telegram.mode,
      apiRoot: telegram.apiRoot,
      webhookUrl: telegram.webhookUrl,
      webhookPath: telegram.webhookPath,
      secret: telegram.secret,
      linkPreviews: telegram.linkPreviews,
      rules: chatAdapterRules("telegram", telegram, options.admins),
      logger: options.logger,
    });
    adapter.routes(options.http);
    out.push(adapter);
  }
  const discord = adapters.discord ?? null;
  if (discord !== null) {
    const { DiscordAdapter } = await import("../adapters/discord/index.js");
    out.push(
      await DiscordAdapter.create({
        token: discord.token!,
        apiUrl: discord.apiUrl,
        gatewayUrl: discord.gatewayUrl,
        linkPreviews: discord.linkPreviews,
        rules: chatAdapterRules("discord", discord, options.admins),
        logger: options.logger,
      }),
    );
  }
  const slack = adapters.slack;
  if (slack !== null) {
    const { SlackAdapter } = await import("../adapters/slack/index.js");
    const adapter = await SlackAdapter.create({
      botToken: slack.botToken!,
      signingSecret: slack.signingSecret,
      appToken: slack.mode === "socket" ? slack.appToken : null,
      eventsPath: slack.eventsPath,
      apiUrl: slack.apiUrl,
      assistantStatus: slack.assistantStatus,
      linkPreviews: slack.linkPreviews,
      rules: chatAdapterRules("slack", slack, options.admins),
      logger: options.logger,
    });
    adapter.routes(options.http);
    out.push(adapter);
  }
  const whatsapp = adapters.whatsapp ?? null;
  if (whatsapp !== null) {
    const { WhatsAppAdapter } = await import("../adapters/whatsapp/index.js");
    const adapter = new WhatsAppAdapter({
      accessToken: whatsapp.accessToken!,
      appSecret: whatsapp.appSecret!,
      verifyToken: whatsapp.verifyToken!,
      phoneNumberId: whatsapp.phoneNumberId!,
      apiUrl: whatsapp.apiUrl,
      apiVersion: whatsapp.apiVersion,
      webhookPath: whatsapp.webhookPath,
      readReceipts: whatsapp.readReceipts,
      linkPreviews: whatsapp.linkPreviews,
      rules: chatAdapterRules("whatsapp", whatsapp, options.admins),
      logger: options.logger,
    });
    adapter.routes(options.http);
    out.push(adapter);
  }
  // --- Matrix ---
  const matrix = adapters.matrix ?? null;
  if (matrix !== null) {
    const { MatrixAdapter } = await import("../adapters/matrix/index.js");
    out.push(
      await MatrixAdapter.create({
        homeserverUrl: matrix.homeserverUrl!,
        accessToken: matrix.accessToken!,
        userId: matrix.userId,
        autoJoin: matrix.autoJoin,
        rules: chatAdapterRules("matrix", matrix, options.admins),
        logger: options.logger,
        state: options.state?.("matrix") ?? null,
      }),
    );
  }
  const signal = adapters.signal ?? null;
  if (signal !== null) {
    const { SignalAdapter } = await import("../adapters/signal/index.js");
    out.push(
      await SignalAdapter.create({
        apiUrl: signal.apiUrl!,
        number: signal.number!,
        mode: signal.mode,
        readReceipts: signal.readReceipts,
        rules: chatAdapterRules("signal", signal, options.admins),
        logger: options.logger,
      }),
    );
  }
  return out;
}
