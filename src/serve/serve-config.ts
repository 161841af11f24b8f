/**
 * The whole `threadline serve` config file: the lifecycle sections (`sessions`,
 * `reset`) plus `gateway`, `provider`, `titles`, `adapters`, `api` (the HTTP API of
 * `threadline serve` and `threadline api`) and `ui` (the web page). Every error names the key and the expected value.
 *
 * @module
 */
import { hostname } from "node:os";
import { z } from "zod";
import { providerExpected, providerSectionProblems } from "../agents/internal.js";
import { lifecycleConfigProblems, parseLifecycleConfig, type LifecycleConfig } from "../gateway/internal.js";
import { trustProxyEntryProblem } from "../net/index.js";
import { InvalidInputError } from "../store/index.js";
import type { SessionSearchScope } from "../tools/index.js";
import { misplacedConfigKeys, type ConfigKeySuggestion } from "./config-keys.js";
import { homeChannelPlatforms, unknownHomePlatform } from "./home-channel-platforms.js";
import { ownerPlatforms, unknownOwnerPlatform } from "./owner-identities.js";
import { chatPlatformNames, chatPlatforms, type ChatPlatformConfigs } from "../adapters/internal.js";
import { chatAdapterProblems, secretConfigKeys, type ChatAdaptersConfig } from "./chat-config.js";
import { COMPRESSION_EXPECTED, resolveCompressionSettings, type CompressionSettings } from "../context/index.js";
import { DEFAULT_MEDIA_SETTINGS, MAX_MEDIA_MAX_BYTES, parseByteSize, type MediaSettings } from "../media/index.js";

/** Everything `serve` needs, defaults resolved. */
export interface ServeConfig {
  lifecycle: LifecycleConfig;
  /** A database target from the file (`--db` and THREADLINE_DB win over it). */
  database: string | null;
  gateway: {
    host: string;
    port: number;
    drainTimeoutSeconds: number;
    /** Seconds an agent's before-reset turn (`Agent.beforeReset`) may take; 0 turns the turn off (default 60). */
    beforeResetTimeoutSeconds: number;
    /** An extra cap on the messages sent per turn, on top of the model's context window (default: none). */
    historyLimit: number | undefined;
    /** This gateway's name among replicas (default: the host name); names its restart bookkeeping. */
    replicaId: string;
    /** `auto`: leases on when the backend is PostgreSQL. */
    leases: "auto" | "on" | "off";
    leaseTtlSeconds: number;
    logLevel: string;
    /**
     * The operator's ids per platform (`telegram`, …, `api-server`, `cli`): their sessions on every
     * platform are one person's for `session_search` (empty: no owner). See {@link ownerIdentities}
     * for the terminal's default.
     */
    owner: Record<string, string[]>;
    /**
     * Host names this gateway is reached under besides localhost and loopback addresses (a
     * proxy's public name): requests naming any other `Host` are refused (docs/http.md).
     */
    publicHosts: string[];
    /**
     * Reverse proxies (addresses or CIDR ranges) whose `Forwarded`/`X-Forwarded-For`/`X-Real-IP`
     * are believed; a request with such headers from anywhere else is never a local client.
     */
    trustProxy: string[];
    /**
     * `gateway.admins`: admins per chat platform (`{ telegram: ["123"], slack: ["U0…"] }`),
     * added to each platform's `adapters.<platform>.admins`.
     */
    admins: Record<string, string[]>;
  };
  provider: {
    baseUrl?: string;
    apiKey?: string;
    model?: string;
    timeoutMs?: number;
    /** `auto` (default: every enabled tool, dropped if the provider refuses tools), `off`, or the tool names to send. */
    tools?: "auto" | "off" | string[];
    /** Model names clients may request → the provider model answering them (or `{ model, contextWindow }`). */
    models?: Record<string, string | { model: string; contextWindow?: number | undefined }>;
    /** The context window of `model` in tokens (default: the table of well-known models, else 8,192). */
    contextWindow?: number;
    /** `auto` (default: images until the provider refuses them for a model), `on` or `off`. */
    vision?: "auto" | "on" | "off";
    /** The speech-to-text model for voice notes (e.g. `whisper-1`); unset: voice is not transcribed. */
    transcriptionModel?: string;
  } | null;
  titles: { enabled: boolean };
  /** SQLite durability: `FULL` (default; every commit survives power loss) or `NORMAL` (survives process crashes; about twice the turn rate). */
  storage: { synchronous: "FULL" | "NORMAL" };
  /**
   * Home channel per platform: where `/handoff <platform>` moves a CLI session and where
   * deliveries go. `chatType` (`null`: a direct chat) and `userId` (whose lane, in a chat with
   * a session per person) say how the chat's messages are keyed (see `HomeChannel`).
   */
  homeChannels: Record<
    string,
    { chatId: string; name: string | null; threadsSupported: boolean; chatType: "dm" | "group" | "channel" | null; userId: string | null }
  >;
  /** Terminal display: `resumeDisplay` full (recap panel) or minimal (one line). */
  display: { resumeDisplay: "full" | "minimal" };
  /**
   * The agent's tools: `session_search` (summarise hits with the model: off by default) and
   * `memory` (the per-person memory, hermes' `memory` tool; on by default).
   */
  tools: { sessionSearch: { enabled: boolean; summarise: boolean; charBudget: number; scope: SessionSearchScope }; memory: { enabled: boolean } };
  /** Automatic pruning of ended sessions (off by default). */
  autoPrune: { enabled: boolean; retentionDays: number; vacuum: boolean; minIntervalHours: number };
  /** The HTTP adapters, and each chat platform's section (`telegram`, …; `null`: not configured, see docs/platforms.md). */
  adapters: ChatPlatformConfigs & {
    /** `tokens`: a string is an operator token (may act as anyone); `{ token, userId }` acts as that person only. */
    apiServer: { enabled: boolean; tokens: ApiServerToken[]; replyTimeoutSeconds: number };
    webhook: { enabled: boolean; secret: string | null; callbackUrl: string | null; path: string };
  };
  /** The HTTP API (docs/http.md): mounted on the gateway's port when `enabled`; `threadline api` runs it alone on `host`/`port`. */
  api: ApiConfig;
  /** The web page (docs/web.md): served at `/ui` by `threadline serve` and `threadline api` (default on). */
  ui: { enabled: boolean };
  /** Automatic compression of long sessions into continuation sessions (hermes-agent's `compression`, its defaults). */
  compression: CompressionSettings;
  /** Inbound media: the size limit, the download timeout, and how many images a request carries (docs/architecture.md, Media). */
  media: MediaSettings;
}

/** An `adapters.apiServer.tokens` entry: an operator token, or a token bound to one person. */
export type ApiServerToken = string | { token: string; userId: string; name: string | null };

/** The `api` section, defaults resolved. */
export interface ApiConfig {
  /** Mount the API on `threadline serve`'s server (default false). `threadline api` ignores it. */
  enabled: boolean;
  /** Where `threadline api` listens (default 127.0.0.1:8788). `threadline serve` uses `gateway.host`/`gateway.port`. */
  host: string;
  port: number;
  /** Path prefix of the API routes (default none). */
  prefix: string;
  /** Accepted keys; a key with `userId` sees only that user's sessions and runs. */
  keys: Array<{ key: string; userId: string | null; name: string | null }>;
  /** With no keys: serve clients on this machine without a key, on a loopback host only (default false). */
  allowUnauthenticatedLoopback: boolean;
}

const SECTIONS = [
  "database",
  "storage",
  "gateway",
  "provider",
  "titles",
  "tools",
  "adapters",
  "homeChannels",
  "display",
  "autoPrune",
  "compression",
  "media",
  "sessions",
  "reset",
  "api",
  "ui",
] as const;

/** `compression`: the checks of {@link resolveCompressionSettings}, as a schema (its messages come from COMPRESSION_EXPECTED). */
const compressionSchema = z.strictObject({
  enabled: z.boolean().optional(),
  threshold: z.number().gt(0).max(1).nullable().optional(),
  protectFirstN: z.number().int().min(0).max(1000).optional(),
  protectLastN: z.number().int().min(1).max(1000).optional(),
  targetRatio: z.number().gt(0).lt(1).optional(),
  abortOnSummaryFailure: z.boolean().optional(),
  hardMessageLimit: z.number().int().min(10).max(1_000_000).optional(),
  model: z.string().trim().min(1).max(200).nullable().optional(),
  notify: z.boolean().optional(),
});

/** What `media.maxBytes` must be. */
const MEDIA_MAX_BYTES_EXPECTED =
  'the largest attachment kept, in bytes (a whole number) or as a size such as "20MB" or "512KB", from 1 byte to 2 GB (default 20 MB)';
/** A `media.maxBytes` value: a whole number of bytes or a size such as "20MB", from 1 byte to 2 GiB. */
const byteLimit = z.union([z.number(), z.string()]).superRefine((value, ctx) => {
  const bytes = parseByteSize(value);
  if (bytes === null || bytes < 1 || bytes > MAX_MEDIA_MAX_BYTES)
    ctx.addIssue({ code: "custom", message: `must be ${MEDIA_MAX_BYTES_EXPECTED} (got ${JSON.stringify(value)})` });
});
/** `media`: inbound attachments. */
const mediaSchema = z.strictObject({
  maxBytes: byteLimit.optional(),
  maxImagesInContext: z.number().int().min(0).max(100).optional(),
  downloadTimeoutSeconds: z.number().gt(0).max(3600).optional(),
});

/** A host name (or IP address) without scheme, port or path. */
const PUBLIC_HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])$/iu;

const gatewayShape = {
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  drainTimeoutSeconds: z.number().min(0).optional(),
  beforeResetTimeoutSeconds: z.number().min(0).max(3600).optional(),
  historyLimit: z.number().int().min(1).max(10_000).optional(),
  replicaId: z
    .string()
    .regex(/^[\w.-]{1,64}$/u)
    .optional(),
  leases: z.enum(["auto", "on", "off"]).optional(),
  leaseTtlSeconds: z.number().min(1).max(3600).optional(),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
  owner: z
    .record(z.string(), z.array(z.string().min(1).max(256)).min(1))
    .superRefine((owner, ctx) => {
      for (const platform of Object.keys(owner)) {
        const problem = unknownOwnerPlatform(platform);
        if (problem !== null) ctx.addIssue({ code: "custom", path: [platform], message: problem });
      }
    })
    .optional(),
  publicHosts: z.array(z.string().regex(PUBLIC_HOST)).optional(),
  trustProxy: z
    .array(
      z.string().superRefine((entry, ctx) => {
        const problem = trustProxyEntryProblem(entry);
        if (problem !== null) ctx.addIssue({ code: "custom", message: `${problem} (a reverse proxy whose forwarding headers are believed)` });
      }),
    )
    .optional(),
};
/** `gateway`, with `admins` for the chat platforms known now. */
function gatewaySchema() {
  const admins = Object.fromEntries(chatPlatformNames().map((p) => [p, z.array(z.union([z.string().min(1), z.number().int()])).optional()]));
  return z.strictObject({ ...gatewayShape, admins: z.strictObject(admins).optional() });
}
/** `provider`: the provider's own validator (one rule set for the file and the API); `tools` may list the tools serve gives. */
const PROVIDER_CHECK = { toolNames: ["session_search", "memory"] } as const;
const providerSchema = z
  .unknown()
  .superRefine((section, ctx) => {
    for (const p of providerSectionProblems(section, PROVIDER_CHECK)) ctx.addIssue({ code: "custom", path: p.path, message: p.problem });
  })
  .transform((section) => (section ?? undefined) as ServeConfig["provider"] | undefined);
const httpAdaptersShape = {
  apiServer: z
    .strictObject({
      enabled: z.boolean().optional(),
      tokens: z
        .array(
          z.union([
            z.string().min(8),
            z.strictObject({ token: z.string().min(16), userId: z.string().min(1).max(256), name: z.string().min(1).max(100).optional() }),
          ]),
        )
        .optional(),
      replyTimeoutSeconds: z.number().positive().optional(),
    })
    .optional(),
  webhook: z
    .strictObject({
      enabled: z.boolean().optional(),
      secret: z.string().min(16).optional(),
      callbackUrl: z.string().url().optional(),
      path: z
        .string()
        .regex(/^\/[\w\-/]*$/u)
        .optional(),
    })
    .optional(),
};
/** `adapters`: the HTTP adapters and the section of each chat platform known now (typed as the HTTP ones: a chat section is read through its descriptor). */
function adaptersSchema() {
  const chat = Object.fromEntries(chatPlatforms().map((p) => [p.name, p.schema.optional()])) as Record<never, never>;
  return z.strictObject({ ...httpAdaptersShape, ...chat });
}
const apiSchema = z.strictObject({
  enabled: z.boolean().optional(),
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  prefix: z
    .string()
    .regex(/^(\/[\w\-.]+)+$/u)
    .optional(),
  keys: z
    .array(
      z.strictObject({
        key: z.string().min(16),
        userId: z.string().min(1).max(256).optional(),
        name: z.string().min(1).max(100).optional(),
      }),
    )
    .optional(),
  allowUnauthenticatedLoopback: z.boolean().optional(),
});
/** The whole file, with the chat platforms known now. */
const fileSchema = () =>
  z.strictObject({
    database: z.string().min(1).optional(),
    gateway: gatewaySchema().optional(),
    provider: providerSchema.optional(),
    titles: z.strictObject({ enabled: z.boolean().optional() }).optional(),
    storage: z.strictObject({ synchronous: z.enum(["FULL", "NORMAL"]).optional() }).optional(),
    homeChannels: z
      .record(
        z.string().min(1),
        z.strictObject({
          chatId: z.string().min(1),
          name: z.string().min(1).optional(),
          threadsSupported: z.boolean().optional(),
          chatType: z.enum(["dm", "group", "channel"]).optional(),
          userId: z.string().min(1).optional(),
        }),
      )
      .superRefine((homes, ctx) => {
        for (const platform of Object.keys(homes)) {
          const problem = unknownHomePlatform(platform);
          if (problem !== null)
            ctx.addIssue({ code: "custom", path: [platform], message: `${problem} Home channels can be on: ${homeChannelPlatforms().join(", ")}.` });
        }
      })
      .optional(),
    display: z.strictObject({ resumeDisplay: z.enum(["full", "minimal"]).optional() }).optional(),
    tools: z
      .strictObject({
        sessionSearch: z
          .strictObject({
            enabled: z.boolean().optional(),
            summarise: z.boolean().optional(),
            charBudget: z.number().int().min(100).optional(),
            scope: z.enum(["user", "chat", "all"]).optional(),
          })
          .optional(),
        memory: z.strictObject({ enabled: z.boolean().optional() }).optional(),
      })
      .optional(),
    autoPrune: z
      .strictObject({
        enabled: z.boolean().optional(),
        retentionDays: z.number().min(0).optional(),
        vacuum: z.boolean().optional(),
        minIntervalHours: z.number().min(0).optional(),
      })
      .optional(),
    adapters: adaptersSchema().optional(),
    api: apiSchema.optional(),
    ui: z.strictObject({ enabled: z.boolean().optional() }).optional(),
    compression: compressionSchema.optional(),
    media: mediaSchema.optional(),
    sessions: z.unknown().optional(),
    reset: z.unknown().optional(),
  });

/** What each key must be, by path: errors say "must be …", and an unknown key lists a section's keys as allowed. */
const expectedLines = (): Record<string, string> => ({
  database: "a database target (a file path or postgres:// URL)",
  "gateway.host": "a host name or address to listen on",
  "gateway.port": "a port number from 0 to 65535",
  "gateway.drainTimeoutSeconds": "a number of seconds ≥ 0",
  "gateway.beforeResetTimeoutSeconds": "a number of seconds from 0 (no before-reset turn) to 3600",
  "gateway.historyLimit":
    "a whole number of messages from 1 to 10,000 (an extra cap on the messages sent per turn; default none, the model's context window decides)",
  "gateway.replicaId": "1–64 letters, digits, '.', '-' or '_'",
  "gateway.leases": "auto, on or off",
  "gateway.leaseTtlSeconds": "a number of seconds from 1 to 3600",
  "gateway.logLevel": "one of fatal, error, warn, info, debug, trace, silent",
  "gateway.owner": `the operator's ids per platform, e.g. { telegram: ["123456789"], cli: ["alice"] } (platforms: ${ownerPlatforms().join(", ")})`,
  "gateway.publicHosts": "a list of host names this gateway is reached under (a proxy's public name such as gateway.example.com; no scheme, port or path)",
  "gateway.trustProxy": "a list of reverse-proxy addresses or CIDR ranges such as 127.0.0.1 or 10.0.0.0/8",
  "gateway.admins": `a map of chat platform (${chatPlatformNames().join(", ")}) to a list of admin user ids, such as { telegram: ["123456"] }`,
  ...Object.fromEntries(chatPlatformNames().map((p) => [`gateway.admins.${p}`, `a list of ${p} user ids who are admins (as adapters.${p}.admins)`])),
  ...providerExpected(PROVIDER_CHECK),
  "titles.enabled": "true or false",
  "storage.synchronous": "FULL or NORMAL (SQLite durability)",
  "display.resumeDisplay": "full or minimal",
  "tools.sessionSearch.enabled": "true or false",
  "tools.sessionSearch.summarise": "true or false",
  "tools.sessionSearch.charBudget": "a whole number of characters ≥ 100",
  "tools.sessionSearch.scope":
    "user (default: the asking user's own sessions), chat (a group's sessions too) or all (every session: single-owner gateways only)",
  "tools.memory.enabled": "true or false",
  "autoPrune.enabled": "true or false",
  "autoPrune.retentionDays": "a number of days ≥ 0",
  "autoPrune.vacuum": "true or false",
  "autoPrune.minIntervalHours": "a number of hours ≥ 0",
  "adapters.apiServer.enabled": "true or false",
  "adapters.apiServer.tokens":
    "a list of bearer tokens: a string of at least 8 characters (an operator token, may act as anyone) or { token: <16+ characters>, userId, name? } (acts as that person only)",
  "adapters.apiServer.replyTimeoutSeconds": "a number of seconds > 0",
  "adapters.webhook.enabled": "true or false",
  "adapters.webhook.secret": "a shared secret of at least 16 characters",
  "adapters.webhook.callbackUrl": "an http(s) URL replies are POSTed to",
  "adapters.webhook.path": "a route path such as /webhook",
  ...Object.assign({}, ...chatPlatforms().map((p) => p.expected)),
  "api.enabled": "true or false",
  "api.host": "a host name or address to listen on (threadline api)",
  "api.port": "a port number from 0 to 65535",
  "api.prefix": "a path prefix such as /api (no trailing slash)",
  "api.keys": "a list of { key, userId?, name? }",
  "api.keys.key": "an API key of at least 16 characters",
  "api.keys.userId": "a user (tenant) id of 1–256 characters",
  "api.keys.name": "a label of 1–100 characters",
  "api.allowUnauthenticatedLoopback": "true or false",
  "ui.enabled": "true or false",
  ...COMPRESSION_EXPECTED,
  media: "a mapping of media settings (maxBytes, maxImagesInContext, downloadTimeoutSeconds)",
  "media.maxBytes": MEDIA_MAX_BYTES_EXPECTED,
  "media.maxImagesInContext": "a whole number of images from 0 (never send images to the model) to 100 (default 4)",
  "media.downloadTimeoutSeconds": "a number of seconds above 0 and at most 3600 (default 60)",
});

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let current = root;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

const HOME_CHANNEL_HINT =
  'a home channel { chatId, name?, threadsSupported?, chatType? (dm, group or channel), userId? } (e.g. homeChannels: { telegram: { chatId: "-100123", chatType: group } })';

/**
 * The config keys outside the chat platforms' sections whose values are secrets, as paths without
 * list indexes (`api.keys.0.key` is `api.keys.key`; a string entry of `adapters.apiServer.tokens` is
 * the list's own path).
 */
const SECRET_KEYS_OUTSIDE_PLATFORMS: ReadonlySet<string> = new Set([
  "api.keys.key",
  "adapters.apiServer.tokens",
  "adapters.apiServer.tokens.token",
  "adapters.webhook.secret",
  "provider.apiKey",
]);

/**
 * How a rejected value is shown: a secret, or a value where a secret belongs below (`api.keys: ["…"]`
 * written without `key:`), by its length only; a mapping or list that may hold one, not at all.
 */
function shown(path: PropertyKey[], value: unknown): string {
  const dotted = path.map(String).join(".");
  const listPath = path
    .filter((part) => typeof part !== "number")
    .map(String)
    .join(".");
  const secretKeys = [...secretConfigKeys(), ...SECRET_KEYS_OUTSIDE_PLATFORMS];
  const secretHere = secretConfigKeys().has(dotted) || SECRET_KEYS_OUTSIDE_PLATFORMS.has(listPath);
  const secretBelow = secretKeys.some((key) => listPath === "" || key.startsWith(`${listPath}.`));
  if ((secretHere || secretBelow) && typeof value === "string") return `a string of ${value.length} characters`;
  if ((secretHere || secretBelow) && value !== null && typeof value === "object") return "a value not shown here (it may hold a secret)";
  return JSON.stringify(value);
}

/** One problem of a config file: the key it is about, and the line that says what is wrong and what to do. */
interface ConfigProblem {
  field: string;
  message: string;
}

/** The message of an unknown key with a suggestion, or of a hermes-agent key with no equivalent. */
function misplacedMessage(m: ConfigKeySuggestion): string {
  if (m.noEquivalent !== undefined) return `${m.path}: ${m.noEquivalent}`;
  const hermes = m.origin === "hermes" ? " (hermes-agent's name)" : "";
  return `${m.path}: unknown key, did you mean ${m.suggestions.map((k) => `"${k}"`).join(" or ")}?${hermes}`;
}

/** A copy of `doc` without the keys at `paths` (sections left empty by it go too), so they are reported once. */
function withoutPaths(doc: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  if (paths.length === 0) return doc;
  const copy = structuredClone(doc);
  for (const path of paths) {
    const parts = path.split(".");
    const parents: Array<Record<string, unknown>> = [];
    let current: unknown = copy;
    for (const part of parts.slice(0, -1)) {
      if (current === null || typeof current !== "object") break;
      parents.push(current as Record<string, unknown>);
      current = (current as Record<string, unknown>)[part];
    }
    if (current === null || typeof current !== "object" || parents.length !== parts.length - 1) continue;
    if (Array.isArray(current)) continue; // list items are never removed (indices would shift)
    delete (current as Record<string, unknown>)[parts[parts.length - 1]!];
    // Remove the sections this left empty, innermost first.
    for (let i = parts.length - 2; i >= 0; i--) {
      const parent = parents[i]!;
      const child = parent[parts[i]!];
      if (child === null || typeof child !== "object" || Array.isArray(child) || Object.keys(child).length > 0) break;
      delete parent[parts[i]!];
    }
  }
  return copy;
}

/** The schema's problems, each naming the key, the expected value and the value found. */
function schemaProblems(doc: Record<string, unknown>): ConfigProblem[] {
  const parsed = fileSchema().safeParse(doc);
  if (parsed.success) return [];
  const EXPECTED = expectedLines();
  return parsed.error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      const where = path === "" ? "config" : path;
      const written = issue.path
        .filter((part) => typeof part !== "number")
        .map(String)
        .join(".");
      const keyPath = written;
      const allowed =
        path === ""
          ? SECTIONS.join(", ")
          : Object.keys(EXPECTED)
              .filter((k) => k.startsWith(`${keyPath}.`) && k.split(".").length === keyPath.split(".").length + 1)
              .map((k) => k.slice(keyPath.length + 1))
              .join(", ");
      return { field: where, message: `${where}: unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}; allowed: ${allowed}` };
    }
    // Our own checks (an unknown home channel platform) say what is wrong themselves.
    if (issue.code === "custom") return { field: path || "config", message: `${path}: ${issue.message}` };
    const listPath = issue.path
      .filter((part) => typeof part !== "number")
      .map(String)
      .join(".");
    const home = issue.path[0] === "homeChannels" ? HOME_CHANNEL_HINT : undefined;
    const ownerIds =
      issue.path.length >= 3 && issue.path[0] === "gateway" && issue.path[1] === "owner"
        ? `a list of the operator's user ids on ${String(issue.path[2])} (each 1–256 characters), e.g. ["123456789"]`
        : undefined;
    const expected = EXPECTED[path] ?? EXPECTED[listPath] ?? home ?? ownerIds ?? "a mapping of settings";
    return { field: path || "config", message: `${path || "config"}: must be ${expected} (got ${shown(issue.path, valueAt(doc, issue.path))})` };
  });
}

/** A plain mapping (not a list), or `undefined`. */
function mapping(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Problems between keys (read from the document as written, so they show even when another key is wrong). */
function crossFieldProblems(doc: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const webhook = mapping(mapping(doc["adapters"])?.["webhook"]);
  if (webhook?.["enabled"] === true && webhook["secret"] === undefined) {
    problems.push({
      field: "adapters.webhook.secret",
      message: "adapters.webhook.secret: required when the webhook adapter is enabled (a shared secret of at least 16 characters).",
    });
  }
  const api = mapping(doc["api"]);
  const apiPrefix = typeof api?.["prefix"] === "string" ? api["prefix"] : "";
  if ((mapping(doc["ui"])?.["enabled"] ?? true) !== false && (apiPrefix === "/ui" || apiPrefix.startsWith("/ui/"))) {
    problems.push({
      field: "api.prefix",
      message: `api.prefix: ${apiPrefix} is where the web page is served; choose another prefix (such as /api) or set ui.enabled: false.`,
    });
  }
  const keys = Array.isArray(api?.["keys"]) ? (api["keys"] as unknown[]).map((k) => mapping(k)?.["key"]) : [];
  keys.forEach((key, i) => {
    if (typeof key === "string" && keys.indexOf(key) !== i) {
      problems.push({ field: `api.keys.${i}.key`, message: `api.keys.${i}.key: the same key is listed twice (each key must be distinct).` });
    }
  });
  return problems;
}

/**
 * Every problem of a config document that {@link parseServeConfig} refuses it for, all at
 * once: keys written in another style or with hermes-agent's names (each with the key to
 * write instead, or why there is none), schema problems, the lifecycle sections' problems and
 * problems between keys. Empty: the document is accepted.
 */
function fileProblems(doc: Record<string, unknown>): ConfigProblem[] {
  const misplaced = misplacedConfigKeys(doc);
  // Each misplaced key is reported once: the rest of the checks read the file without it.
  const rest = withoutPaths(
    doc,
    misplaced.map((m) => m.path),
  );
  return [
    ...misplaced.map((m) => ({ field: m.path, message: misplacedMessage(m) })),
    ...schemaProblems(rest),
    ...lifecycleConfigProblems(rest).map((message) => ({ field: message.slice(0, message.indexOf(":")), message })),
    ...crossFieldProblems(rest),
  ];
}

/**
 * The chat platform sections that pass the schema, resolved (the others `null`): what
 * {@link chatAdapterProblems} can check even when another part of the file is wrong.
 */
function resolvableChatAdapters(doc: Record<string, unknown>, env: NodeJS.ProcessEnv): ChatAdaptersConfig {
  const adapters = mapping(doc["adapters"]) ?? {};
  return Object.fromEntries(
    chatPlatforms().map((p) => {
      const parsed = p.schema.safeParse(adapters[p.name]);
      return [p.name, parsed.success ? p.resolve(parsed.data, env) : null];
    }),
  );
}

/**
 * Every problem of a config file, in one list (what `threadline config check` reports): the
 * problems {@link parseServeConfig} refuses the file for (see there) and what the configured
 * chat platforms are missing ({@link chatAdapterProblems}: a token, …). Each is one line
 * naming the key and what to do; empty when the file is valid and complete.
 *
 * @example
 * configFileProblems({ gateway: { port: 99999 }, sessions: { retention_days: 30 } });
 * // ['sessions.retention_days: unknown key, did you mean "autoPrune.retentionDays"? (hermes-agent\'s name)',
 * //  "gateway.port: must be a port number from 0 to 65535 (got 99999)"]
 */
export function configFileProblems(doc: Record<string, unknown> = {}, options: { env?: NodeJS.ProcessEnv } = {}): string[] {
  const env = options.env ?? process.env;
  const rest = withoutPaths(
    doc,
    misplacedConfigKeys(doc).map((m) => m.path),
  );
  return [...fileProblems(doc).map((p) => p.message), ...chatAdapterProblems(resolvableChatAdapters(rest, env))];
}

/**
 * Validates a config document (already parsed from YAML) and resolves every default.
 * Platform tokens missing from the file are taken from `env` (default `process.env`:
 * TELEGRAM_BOT_TOKEN); what is still missing is reported by `chatAdapterProblems`.
 *
 * @throws {InvalidInputError} listing every problem of the document at once (joined with
 *   "; "), not only the first: see {@link configFileProblems}.
 */
export function parseServeConfig(doc: Record<string, unknown> = {}, options: { env?: NodeJS.ProcessEnv } = {}): ServeConfig {
  const problems = fileProblems(doc);
  if (problems.length > 0) throw new InvalidInputError(problems.map((p) => p.message).join("; "), { field: problems[0]!.field });
  const f = fileSchema().parse(doc);
  const env = options.env ?? process.env;
  const lifecycle = parseLifecycleConfig(doc);
  const webhook = f.adapters?.webhook;
  const keys = f.api?.keys ?? [];
  return {
    lifecycle,
    database: f.database ?? null,
    gateway: {
      host: f.gateway?.host ?? "127.0.0.1",
      port: f.gateway?.port ?? 8787,
      drainTimeoutSeconds: f.gateway?.drainTimeoutSeconds ?? 30,
      beforeResetTimeoutSeconds: f.gateway?.beforeResetTimeoutSeconds ?? 60,
      historyLimit: f.gateway?.historyLimit,
      replicaId:
        f.gateway?.replicaId ??
        (hostname()
          .replace(/[^\w.-]/gu, "-")
          .slice(0, 64) ||
          "gateway"),
      leases: f.gateway?.leases ?? "auto",
      leaseTtlSeconds: f.gateway?.leaseTtlSeconds ?? 30,
      logLevel: f.gateway?.logLevel ?? "info",
      owner: Object.fromEntries(Object.entries(f.gateway?.owner ?? {}).map(([platform, ids]) => [platform, [...new Set(ids)]])),
      publicHosts: f.gateway?.publicHosts ?? [],
      trustProxy: f.gateway?.trustProxy ?? [],
      admins: Object.fromEntries(
        Object.entries(f.gateway?.admins ?? {})
          .filter((entry): entry is [string, Array<string | number>] => entry[1] !== undefined)
          .map(([platform, ids]) => [platform, ids.map(String)]),
      ),
    },
    provider: f.provider ?? null,
    titles: { enabled: f.titles?.enabled ?? true },
    storage: { synchronous: f.storage?.synchronous ?? "FULL" },
    homeChannels: Object.fromEntries(
      Object.entries(f.homeChannels ?? {}).map(([platform, c]) => [
        platform,
        { chatId: c.chatId, name: c.name ?? null, threadsSupported: c.threadsSupported ?? false, chatType: c.chatType ?? null, userId: c.userId ?? null },
      ]),
    ),
    display: { resumeDisplay: f.display?.resumeDisplay ?? "full" },
    tools: {
      sessionSearch: {
        enabled: f.tools?.sessionSearch?.enabled ?? true,
        summarise: f.tools?.sessionSearch?.summarise ?? false,
        charBudget: f.tools?.sessionSearch?.charBudget ?? 100_000,
        scope: f.tools?.sessionSearch?.scope ?? "user",
      },
      memory: { enabled: f.tools?.memory?.enabled ?? true },
    },
    autoPrune: {
      enabled: f.autoPrune?.enabled ?? false,
      retentionDays: f.autoPrune?.retentionDays ?? 90,
      vacuum: f.autoPrune?.vacuum ?? true,
      minIntervalHours: f.autoPrune?.minIntervalHours ?? 24,
    },
    adapters: {
      apiServer: {
        enabled: f.adapters?.apiServer?.enabled ?? true,
        tokens: (f.adapters?.apiServer?.tokens ?? []).map((t) => (typeof t === "string" ? t : { token: t.token, userId: t.userId, name: t.name ?? null })),
        replyTimeoutSeconds: f.adapters?.apiServer?.replyTimeoutSeconds ?? 600,
      },
      webhook: {
        enabled: webhook?.enabled ?? false,
        secret: webhook?.secret ?? null,
        callbackUrl: webhook?.callbackUrl ?? null,
        path: webhook?.path ?? "/webhook",
      },
      ...(Object.fromEntries(
        chatPlatforms().map((p) => [p.name, p.resolve((f.adapters as Record<string, unknown> | undefined)?.[p.name], env)]),
      ) as ChatPlatformConfigs),
    },
    api: {
      enabled: f.api?.enabled ?? false,
      host: f.api?.host ?? "127.0.0.1",
      port: f.api?.port ?? 8788,
      prefix: f.api?.prefix ?? "",
      keys: keys.map((k) => ({ key: k.key, userId: k.userId ?? null, name: k.name ?? null })),
      allowUnauthenticatedLoopback: f.api?.allowUnauthenticatedLoopback ?? false,
    },
    ui: { enabled: f.ui?.enabled ?? true },
    compression: resolveCompressionSettings(f.compression ?? {}),
    media: {
      maxBytes: f.media?.maxBytes === undefined ? DEFAULT_MEDIA_SETTINGS.maxBytes : parseByteSize(f.media.maxBytes)!,
      maxImagesInContext: f.media?.maxImagesInContext ?? DEFAULT_MEDIA_SETTINGS.maxImagesInContext,
      downloadTimeoutSeconds: f.media?.downloadTimeoutSeconds ?? DEFAULT_MEDIA_SETTINGS.downloadTimeoutSeconds,
    },
  };
}
