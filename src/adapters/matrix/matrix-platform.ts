/**
 * Matrix as `threadline serve` knows it: {@link matrixPlatform}, the descriptor of
 * `adapters.matrix` (zod schema, `EXPECTED` lines, the resolved {@link MatrixConfig} with the
 * access token from the file, else MATRIX_ACCESS_TOKEN, its secret keys, its problems, and a
 * `create` that imports the adapter, and so matrix-js-sdk, only when the section is configured).
 *
 * @module
 */
import { z } from "zod";
import { CHAT_ACCESS_EXPECTED, chatAccessShape, resolveChatAccess, type ChatAccess } from "../chat-access.js";
import { defineChatPlatform, fromEnv, secret } from "../chat-platform.js";

/** The environment variable a Matrix access token may come from. */
const MATRIX_TOKEN_ENV = "MATRIX_ACCESS_TOKEN";

/** An access token: opaque to clients, sent in an `Authorization: Bearer` header, so visible ASCII without spaces. */
const MATRIX_TOKEN = /^[\x21-\x7e]{8,4096}$/u;

/** A Matrix user id: `@localpart:server.name` (server name with an optional port). */
const MATRIX_USER_ID = /^@[^\s:]+:[A-Za-z0-9.\-[\]:]+$/u;

/** `adapters.matrix` as written in the file. */
const matrixSchema = z.strictObject({
  ...chatAccessShape,
  homeserverUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
  accessToken: secret(z.string().regex(MATRIX_TOKEN)).optional(),
  userId: z.string().regex(MATRIX_USER_ID).optional(),
  autoJoin: z.boolean().optional(),
});

/** `adapters.matrix`, resolved. */
export interface MatrixConfig extends ChatAccess {
  /** The homeserver's base URL; `null` when missing (its problems report it). */
  homeserverUrl: string | null;
  /** From the file, else MATRIX_ACCESS_TOKEN; `null` when neither has one. */
  accessToken: string | null;
  /** The expected user id (checked against `whoami`); `null`: whoever the token belongs to. */
  userId: string | null;
  /** Accept invitations (from allowed users, to allowed rooms). */
  autoJoin: boolean;
}

/** The Matrix platform: `adapters.matrix` and its adapter (matrix-js-sdk, loaded by `create` only). */
export const matrixPlatform = defineChatPlatform({
  name: "matrix",
  schema: matrixSchema,
  expected: {
    homeserverUrl: "the http(s) base URL of the bot account's homeserver, such as https://matrix.example.org (the part before /_matrix)",
    accessToken: `the bot account's access token: 8 or more visible characters without spaces (or set ${MATRIX_TOKEN_ENV})`,
    userId: "the bot's Matrix user id such as @threadline:example.org (optional: the homeserver tells it; when set it must match)",
    autoJoin: "true (accept room invitations, the default) or false (ignore them)",
    ...CHAT_ACCESS_EXPECTED,
  },
  secrets: { accessToken: true },
  resolve: (section, env): MatrixConfig => ({
    homeserverUrl: section.homeserverUrl?.replace(/\/+$/u, "") ?? null,
    accessToken: section.accessToken ?? fromEnv(env, MATRIX_TOKEN_ENV),
    userId: section.userId ?? null,
    autoJoin: section.autoJoin ?? true,
    ...resolveChatAccess(section),
  }),
  problems: matrixProblems,
  async create(matrix, { logger, rules, state }) {
    const { MatrixAdapter } = await import("./index.js");
    return await MatrixAdapter.create({
      homeserverUrl: matrix.homeserverUrl!,
      accessToken: matrix.accessToken!,
      userId: matrix.userId,
      autoJoin: matrix.autoJoin,
      rules,
      logger,
      state,
    });
  },
});

/** What is missing or inconsistent in `adapters.matrix` (empty: ready). */
function matrixProblems(matrix: MatrixConfig): string[] {
  const problems: string[] = [];
  if (matrix.homeserverUrl === null) {
    problems.push(
      "adapters.matrix.homeserverUrl: missing: set the http(s) base URL of the bot account's homeserver, such as https://matrix.example.org (the part before /_matrix)",
    );
  }
  if (matrix.accessToken === null) {
    problems.push(
      `adapters.matrix.accessToken: missing: set it in the config file or in the ${MATRIX_TOKEN_ENV} environment variable (log in as the bot account and copy its access token, see docs/platforms.md)`,
    );
  } else if (!MATRIX_TOKEN.test(matrix.accessToken)) {
    problems.push(`adapters.matrix.accessToken: ${MATRIX_TOKEN_ENV} does not look like an access token (8 or more visible characters without spaces)`);
  }
  return problems;
}
