/**
 * The one shape of a chat platform for `threadline serve`: a {@link ChatPlatform} descriptor,
 * exported by `src/adapters/<platform>/<platform>-platform.ts` and listed once in
 * `platforms.ts`. It holds everything the config file, `threadline config show`/`check` and
 * the gateway's start-up need to know about the platform: its `adapters.<platform>` section
 * (zod schema, `EXPECTED` lines, resolution with the environment's tokens), its secret keys,
 * what a resolved section still lacks (`problems`) and a lazy `create` that loads the
 * adapter (and so its SDK) with `import()` only when the section is configured.
 *
 * A descriptor is written with {@link defineChatPlatform}, whose types tie the pieces
 * together: a key declared with {@link secret} in the schema must be listed in `secrets` (a
 * missing one does not compile, so `config show` cannot print it), and must be a key of the
 * resolved config (where `config show` masks it).
 *
 * @module
 */
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { Adapter, AdapterStateStore, GatewayLogger } from "../gateway/index.js";
import type { ChatAccess } from "./chat-access.js";
import type { AnswerRules } from "./chat/index.js";

/** What a descriptor's `create` gets besides its resolved section. */
export interface ChatPlatformContext {
  /** The gateway's server: webhook-style platforms mount their routes on it (before it listens). */
  http: FastifyInstance;
  /** The gateway's logger (session keys with phone numbers are logged as hashes). */
  logger: GatewayLogger;
  /** The platform's durable state (the database's `meta` table); `null`: keep it in memory. */
  state: AdapterStateStore | null;
  /** The answer rules the adapter applies itself (`access`, with `gateway.admins` counted). */
  rules: AnswerRules;
}

/**
 * A chat platform as `threadline serve` knows it (see the module's description). Written with
 * {@link defineChatPlatform}; listed in `PLATFORMS`.
 */
export interface ChatPlatform<Name extends string = string, Config extends ChatAccess = ChatAccess> {
  /** The platform's name: the `adapters.<name>` section, the sources' `platform`. */
  readonly name: Name;
  /** `adapters.<name>` as written in the file. */
  readonly schema: z.ZodType;
  /** What each key must be, by full path (`adapters.<name>.<key>`): errors say "must be …", and an unknown key lists these as allowed. */
  readonly expected: Readonly<Record<string, string>>;
  /** Full paths (`adapters.<name>.<key>`) of the keys whose values are secrets: masked by `config show`, shown by length only in errors. */
  readonly secrets: readonly string[];
  /** The resolved section (tokens missing from the file taken from `env`); `null`: absent or `enabled: false`. `section` passed the schema. */
  resolve(section: unknown, env: NodeJS.ProcessEnv): Config | null;
  /** What the resolved section lacks or contradicts, one line each naming the key and what to do (no "; " inside); empty: ready. */
  problems(config: Config): string[];
  /** Creates (does not connect) the adapter; imports its module with `import()`, so the SDK loads only here. */
  create(config: Config, context: ChatPlatformContext): Promise<Adapter>;
  /** How the gateway's start-up names this platform's webhook when it receives one over the gateway's server (`null`: it does not). */
  webhookReceiver(config: Config): string | null;
  /** A public URL the platform sends to (its host is one the gateway answers to besides `gateway.publicHosts`); `null`: none. */
  publicUrl(config: Config): string | null;
}

/** The resolved section type of a descriptor. */
export type ChatPlatformConfigOf<P> = P extends ChatPlatform<string, infer Config> ? Config : never;

/** The brand of {@link secret} values (type-level only). */
const SECRET = "secret";

/**
 * Declares a key of a section as a secret: `token: secret(z.string().regex(…)).optional()`.
 * {@link defineChatPlatform} then requires it in `secrets`.
 */
export function secret<T extends z.ZodString>(schema: T) {
  return schema.brand<typeof SECRET>();
}

/** The keys of a section (as written) declared with {@link secret}. */
export type SecretKeys<Section> = {
  [K in keyof Section]-?: NonNullable<Section[K]> extends z.$brand<typeof SECRET> ? K : never;
}[keyof Section] &
  string;

/** What a platform's author writes (see {@link defineChatPlatform}); keys are those of `adapters.<name>`. */
export interface ChatPlatformDefinition<Name extends string, Section extends { enabled?: boolean | undefined }, Config extends ChatAccess> {
  name: Name;
  /** `adapters.<name>` as written: spread `chatAccessShape` (and `linkPreviewsShape` where the platform previews links). */
  schema: z.ZodType<Section>;
  /** What each key must be, by key of the section, in the order `allowed:` lists them (spread `CHAT_ACCESS_EXPECTED`). */
  expected: Readonly<Record<string, string>>;
  /** Every key declared with {@link secret}, each `true`: leaving one out is a type error. */
  secrets: { readonly [K in SecretKeys<Section>]: true };
  /** The resolved section (called only when it is present and not `enabled: false`). */
  resolve(section: Section, env: NodeJS.ProcessEnv): Config;
  problems(config: Config): string[];
  create(config: Config, context: ChatPlatformContext): Promise<Adapter>;
  webhookReceiver?(config: Config): string | null;
  publicUrl?(config: Config): string | null;
}

/**
 * A {@link ChatPlatform} from its definition: prefixes the keys of `expected` and `secrets`
 * with `adapters.<name>.`, and resolves an absent or `enabled: false` section to `null`.
 * The resolved config must hold every secret key too (a string or `null`).
 */
export function defineChatPlatform<
  Name extends string,
  Section extends { enabled?: boolean | undefined },
  Config extends ChatAccess & { [K in SecretKeys<Section>]: string | null },
>(definition: ChatPlatformDefinition<Name, Section, Config>): ChatPlatform<Name, Config> {
  const prefix = `adapters.${definition.name}.`;
  return {
    name: definition.name,
    schema: definition.schema,
    expected: Object.fromEntries(Object.entries(definition.expected).map(([key, line]) => [`${prefix}${key}`, line])),
    secrets: Object.keys(definition.secrets).map((key) => `${prefix}${key}`),
    resolve(section, env) {
      if (section === undefined || section === null) return null;
      const written = section as Section;
      return written.enabled === false ? null : definition.resolve(written, env);
    },
    problems: (config) => definition.problems(config),
    create: (config, context) => definition.create(config, context),
    webhookReceiver: (config) => definition.webhookReceiver?.(config) ?? null,
    publicUrl: (config) => definition.publicUrl?.(config) ?? null,
  };
}

/** A value from the environment, trimmed; `null` when unset or blank. */
export function fromEnv(env: NodeJS.ProcessEnv, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}
