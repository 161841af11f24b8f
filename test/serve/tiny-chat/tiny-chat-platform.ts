/**
 * A tiny seventh chat platform, for test/serve/platform-registry.test.ts: what a platform's
 * folder holds besides its adapter, written as src/adapters/<platform>/<platform>-platform.ts
 * would be. `adapters.tinychat` has a secret `token` (else TINYCHAT_TOKEN), a `path` for its
 * webhook route and the access keys every chat section shares.
 *
 * @module
 */
import { z } from "zod";
import {
  CHAT_ACCESS_EXPECTED,
  chatAccessShape,
  defineChatPlatform,
  fromEnv,
  resolveChatAccess,
  secret,
  type ChatAccess,
} from "../../../src/adapters/internal.js";

/** `adapters.tinychat`, resolved. */
export interface TinyChatConfig extends ChatAccess {
  /** From the file, else TINYCHAT_TOKEN: what a POST to `path` must carry in `x-tinychat-token`. */
  token: string | null;
  path: string;
}

/** The descriptor: one object, nothing else to edit. */
export const tinyChatPlatform = defineChatPlatform({
  name: "tinychat",
  schema: z.strictObject({
    ...chatAccessShape,
    token: secret(z.string().regex(/^tc-[\w-]{8,64}$/u)).optional(),
    path: z
      .string()
      .regex(/^\/[\w/-]*$/u)
      .optional(),
  }),
  expected: {
    token: "a TinyChat token tc-… (or set TINYCHAT_TOKEN)",
    path: "the route TinyChat posts messages to, such as /tinychat (the default)",
    ...CHAT_ACCESS_EXPECTED,
  },
  secrets: { token: true },
  resolve: (section, env): TinyChatConfig => ({
    token: section.token ?? fromEnv(env, "TINYCHAT_TOKEN"),
    path: section.path ?? "/tinychat",
    ...resolveChatAccess(section),
  }),
  problems: (config) =>
    config.token === null ? ["adapters.tinychat.token: missing: set it in the config file or in the TINYCHAT_TOKEN environment variable"] : [],
  async create(config, context) {
    const { TinyChatAdapter } = await import("./tiny-chat-adapter.js");
    return new TinyChatAdapter(config, context);
  },
  webhookReceiver: () => "adapters.tinychat",
});
