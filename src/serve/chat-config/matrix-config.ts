/**
 * `adapters.matrix`: its zod schema, `EXPECTED` lines, resolved {@link MatrixConfig} (the
 * access token from the file, else MATRIX_ACCESS_TOKEN), {@link matrixProblems} (what
 * `chatAdapterProblems` reports for it) and {@link MATRIX_SECRET_KEYS}.
 *
 * @module
 */
import { z } from "zod";
import { chatAccessExpected, chatAccessShape, resolveChatAccess, type ChatAccess } from "./chat-access.js";

/** The environment variable a Matrix access token may come from. */
export const MATRIX_TOKEN_ENV = "MATRIX_ACCESS_TOKEN";

/** An access token: opaque to clients, sent in an `Authorization: Bearer` header, so visible ASCII without spaces. */
const MATRIX_TOKEN = /^[\x21-\x7e]{8,4096}$/u;

/** A Matrix user id: `@localpart:server.name` (server name with an optional port). */
export const MATRIX_USER_ID = /^@[^\s:]+:[A-Za-z0-9.\-[\]:]+$/u;

/** `adapters.matrix` as written in the file. */
export const matrixSchema = z.strictObject({
  ...chatAccessShape,
  homeserverUrl: z
    .string()
    .url()
    .regex(/^https?:\/\//u)
    .optional(),
  accessToken: z.string().regex(MATRIX_TOKEN).optional(),
  userId: z.string().regex(MATRIX_USER_ID).optional(),
  autoJoin: z.boolean().optional(),
});

/** The `EXPECTED` lines of `adapters.matrix`. */
export const MATRIX_EXPECTED: Record<string, string> = {
  "adapters.matrix.homeserverUrl": "the http(s) base URL of the bot account's homeserver, such as https://matrix.example.org (the part before /_matrix)",
  "adapters.matrix.accessToken": `the bot account's access token: 8 or more visible characters without spaces (or set ${MATRIX_TOKEN_ENV})`,
  "adapters.matrix.userId": "the bot's Matrix user id such as @threadline:example.org (optional: the homeserver tells it; when set it must match)",
  "adapters.matrix.autoJoin": "true (accept room invitations, the default) or false (ignore them)",
  ...chatAccessExpected("matrix"),
};

/** `adapters.matrix`, resolved. */
export interface MatrixConfig extends ChatAccess {
  /** The homeserver's base URL; `null` when missing ({@link matrixProblems} reports it). */
  homeserverUrl: string | null;
  /** From the file, else MATRIX_ACCESS_TOKEN; `null` when neither has one. */
  accessToken: string | null;
  /** The expected user id (checked against `whoami`); `null`: whoever the token belongs to. */
  userId: string | null;
  /** Accept invitations (from allowed users, to allowed rooms). */
  autoJoin: boolean;
}

/** Resolves `adapters.matrix` (`null`: not configured or `enabled: false`). */
export function resolveMatrixConfig(section: z.infer<typeof matrixSchema> | undefined, env: NodeJS.ProcessEnv): MatrixConfig | null {
  if (section === undefined || section.enabled === false) return null;
  const fromEnv = env[MATRIX_TOKEN_ENV]?.trim();
  return {
    homeserverUrl: section.homeserverUrl?.replace(/\/+$/u, "") ?? null,
    accessToken: section.accessToken ?? (fromEnv ? fromEnv : null),
    userId: section.userId ?? null,
    autoJoin: section.autoJoin ?? true,
    ...resolveChatAccess(section),
  };
}

/** The `adapters.matrix` keys whose values are secrets (never shown in errors or `config show`). */
export const MATRIX_SECRET_KEYS: readonly string[] = ["adapters.matrix.accessToken"];

/** What is missing or inconsistent in `adapters.matrix` (empty: ready, or not configured). */
export function matrixProblems(matrix: MatrixConfig | null | undefined): string[] {
  if (matrix === null || matrix === undefined) return [];
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
