/**
 * Builds the chat-platform adapters the config enables, one per configured section, through
 * each platform's descriptor (`src/adapters/platforms.ts`): its `create` imports the
 * platform's folder (and so its SDK) with `import()` only then, so an HTTP-only gateway and
 * the CLI never load grammY, Bolt, discord.js or matrix-js-sdk (WhatsApp and Signal have no
 * SDK: their folders speak the platform's HTTP API). Webhook-style platforms mount their
 * routes on the gateway's server in `create`.
 *
 * @module
 */
import type { FastifyInstance } from "fastify";
import type { Adapter, AdapterStateStore, GatewayLogger } from "../gateway/index.js";
import { redactingLogger } from "../gateway/internal.js";
import { InvalidInputError } from "../store/index.js";
import { chatAdapterProblems, chatAdapterRules, configuredChatPlatforms, type ChatAdaptersConfig } from "./chat-config.js";

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
  const logger = redactingLogger(options.logger);
  for (const { platform, section } of configuredChatPlatforms(adapters)) {
    const rules = chatAdapterRules(platform.name, section, options.admins);
    out.push(await platform.create(section, { http: options.http, logger, rules, state: options.state?.(platform.name) ?? null }));
  }
  return out;
}
