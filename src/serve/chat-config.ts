/**
 * The `adapters.<platform>` sections of the chat platforms, composed from their descriptors
 * (`src/adapters/<platform>/<platform>-platform.ts`, listed in `src/adapters/platforms.ts`):
 * {@link SECRET_CONFIG_KEYS} (masked by `config show`, shown by length only in errors),
 * {@link ChatAdaptersConfig}, {@link chatAdapterProblems} (`threadline config check` and
 * `threadline serve` both call it) and the access settings the gateway and the adapters take.
 * Nothing here names a platform: each function loops over the registry.
 *
 * @module
 */
import { adapterAnswerRules, chatPlatforms, type ChatAccess, type ChatPlatform, type ChatPlatformConfigs } from "../adapters/internal.js";
import type { PlatformAccess } from "../gateway/index.js";

/**
 * Config keys whose values are secrets: never echoed in errors or `config show`. Each is a
 * dotted path (`adapters.whatsapp.appSecret`) that holds the value in the resolved config too.
 * (The keys of the listed platforms; {@link secretConfigKeys} adds those registered at run time.)
 */
export const SECRET_CONFIG_KEYS: ReadonlySet<string> = secretConfigKeys();

/** The secret keys of every chat platform known now (see {@link SECRET_CONFIG_KEYS}). */
export function secretConfigKeys(): ReadonlySet<string> {
  return new Set(chatPlatforms().flatMap((p) => p.secrets));
}

/**
 * The chat platform sections of the resolved config, by platform name (`null`: not
 * configured). A section absent from a config built before its platform existed reads as not
 * configured.
 */
export type ChatAdaptersConfig = Partial<ChatPlatformConfigs>;

/** The configured chat platforms (in the order of the platform list), each with its resolved section. */
export function configuredChatPlatforms(adapters: ChatAdaptersConfig): Array<{ platform: ChatPlatform; section: ChatAccess }> {
  return chatPlatforms().flatMap((platform) => {
    const section = (adapters as Readonly<Record<string, ChatAccess | null | undefined>>)[platform.name] ?? null;
    return section === null ? [] : [{ platform, section }];
  });
}

/** The configured chat platform sections, by platform name. */
export function configuredChatSections(adapters: ChatAdaptersConfig): Array<[string, ChatAccess]> {
  return configuredChatPlatforms(adapters).map(({ platform, section }) => [platform.name, section]);
}

/**
 * The gateway's access settings of every configured chat platform: its `access`,
 * `allowedUsers`, `allowedChats`, and its admins (`adapters.<platform>.admins` with
 * `gateway.admins.<platform>`).
 */
export function chatPlatformAccess(
  adapters: ChatAdaptersConfig,
  gatewayAdmins: Readonly<Record<string, readonly string[]>> = {},
): Record<string, PlatformAccess> {
  return Object.fromEntries(
    configuredChatSections(adapters).map(([platform, section]) => [
      platform,
      {
        mode: section.access,
        allowedUsers: section.allowedUsers,
        allowedChats: section.allowedChats,
        admins: [...new Set([...section.admins, ...(Object.hasOwn(gatewayAdmins, platform) ? gatewayAdmins[platform]! : [])])],
      },
    ]),
  );
}

/** The rules a platform's adapter applies itself (see {@link adapterAnswerRules}), with `gateway.admins` counted. */
export function chatAdapterRules(platform: string, section: ChatAccess, gatewayAdmins: Readonly<Record<string, readonly string[]>> = {}) {
  return adapterAnswerRules(section, Object.hasOwn(gatewayAdmins, platform) ? gatewayAdmins[platform]! : []);
}

/**
 * What is missing or inconsistent in the chat platform sections (empty: ready to start), in
 * the order of the platform list. Each problem names the key and what to do, and contains no
 * "; " (callers join and split on it).
 */
export function chatAdapterProblems(adapters: ChatAdaptersConfig): string[] {
  return configuredChatPlatforms(adapters).flatMap(({ platform, section }) => platform.problems(section));
}
