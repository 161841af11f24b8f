/**
 * A resolved `threadline serve` config written back as the file a user writes
 * ({@link configFileDocument}): what `threadline config show` prints.
 *
 * @module
 */
import type { ServeConfig } from "./serve-config.js";

/**
 * A config as the file a user writes: the same sections and keys (`sessions`, `reset`, …,
 * not the resolved `lifecycle`), every default written out, and nothing `null` (an unset
 * value is left out). {@link parseServeConfig} of the result gives `config` back.
 *
 * @example
 * stringify(configFileDocument(parseServeConfig(await readConfigFile(path))));
 */
export function configFileDocument(config: ServeConfig): Record<string, unknown> {
  const { lifecycle } = config;
  const policy = (p: { mode: string; idleMinutes: number; atHour: number }): Record<string, unknown> => ({
    mode: p.mode,
    idleMinutes: p.idleMinutes,
    atHour: p.atHour,
  });
  const defined = (entries: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== null && v !== undefined));
  const webhook = config.adapters.webhook;
  const reset = lifecycle.reset;
  return {
    ...(config.database === null ? {} : { database: config.database }),
    storage: { ...config.storage },
    gateway: (({ owner, admins, ...rest }) => ({
      ...rest,
      publicHosts: [...rest.publicHosts],
      trustProxy: [...rest.trustProxy],
      admins: Object.fromEntries(Object.entries(admins).map(([p, ids]) => [p, [...ids]])),
      ...(Object.keys(owner).length === 0 ? {} : { owner: structuredClone(owner) }),
    }))(config.gateway),
    ...(config.provider === null ? {} : { provider: defined({ ...config.provider }) }),
    titles: { ...config.titles },
    tools: { sessionSearch: { ...config.tools.sessionSearch }, memory: { ...config.tools.memory } },
    adapters: {
      apiServer: {
        ...config.adapters.apiServer,
        tokens: config.adapters.apiServer.tokens.map((t) => (typeof t === "string" ? t : defined({ token: t.token, userId: t.userId, name: t.name }))),
      },
      webhook: defined({ enabled: webhook.enabled, secret: webhook.secret, callbackUrl: webhook.callbackUrl, path: webhook.path }),
      // Chat platforms (telegram, …): each configured section with the keys a user writes.
      ...Object.fromEntries(
        Object.entries(config.adapters)
          .filter(([name, section]) => name !== "apiServer" && name !== "webhook" && section !== null)
          .map(([name, section]) => {
            // `accessDefaulted` is bookkeeping for the startup log, not a key of the file; a
            // defaulted `access` is left out, so the file still says what its writer chose.
            const { accessDefaulted, access, ...keys } = section as Record<string, unknown>;
            return [name, defined(accessDefaulted === true ? keys : { access, ...keys })];
          }),
      ),
    },
    homeChannels: Object.fromEntries(
      Object.entries(config.homeChannels).map(([platform, c]) => [
        platform,
        defined({ chatId: c.chatId, name: c.name, threadsSupported: c.threadsSupported, chatType: c.chatType, userId: c.userId }),
      ]),
    ),
    display: { ...config.display },
    autoPrune: { ...config.autoPrune },
    sessions: {
      groupSessionsPerUser: lifecycle.keySettings.groupSessionsPerUser,
      threadSessionsPerUser: lifecycle.keySettings.threadSessionsPerUser,
      resumeFreshnessSeconds: lifecycle.resumeFreshnessSeconds,
      sessionStoreMaxAgeDays: lifecycle.sessionStoreMaxAgeDays,
      expiryIntervalSeconds: lifecycle.expiryIntervalSeconds,
      maxQueueDepth: lifecycle.maxQueueDepth,
      redactPii: lifecycle.redactPii,
    },
    reset: {
      ...policy(reset.default),
      notify: reset.notify,
      notifyExclude: [...reset.notifyExclude],
      ...(Object.keys(reset.platforms).length === 0
        ? {}
        : { platforms: Object.fromEntries(Object.entries(reset.platforms).map(([name, p]) => [name, policy(p)])) }),
      ...(Object.keys(reset.types).length === 0 ? {} : { types: Object.fromEntries(Object.entries(reset.types).map(([type, p]) => [type, policy(p!)])) }),
    },
    api: {
      enabled: config.api.enabled,
      host: config.api.host,
      port: config.api.port,
      ...(config.api.prefix === "" ? {} : { prefix: config.api.prefix }),
      keys: config.api.keys.map((k) => defined({ key: k.key, userId: k.userId, name: k.name })),
      allowUnauthenticatedLoopback: config.api.allowUnauthenticatedLoopback,
    },
    ui: { ...config.ui },
    compression: defined({ ...config.compression }),
    media: { ...config.media },
  };
}
