/**
 * The token budget of a request's messages: the model's window, less the reply's share, the
 * system and context prompt, and the tool schemas sent with the request, scaled down by the
 * session's correction when the provider reported more tokens than were counted.
 *
 * @module
 */

/** The most tokens kept free for the reply: {@link reservedOutputTokens} is this or a quarter of the window, whichever is smaller. */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 4096;

/**
 * Tokens kept free for the model's reply in a window of `window` tokens:
 * `min(4,096, window / 4)` (1,024 of a 4,096 window, 4,096 of a 128K one).
 *
 * @example
 * reservedOutputTokens(8192); // 2048
 * reservedOutputTokens(128_000); // 4096
 */
export function reservedOutputTokens(window: number): number {
  return Math.min(DEFAULT_RESERVED_OUTPUT_TOKENS, Math.floor(window / 4));
}

/** What {@link requestBudget} is computed from. */
export interface RequestBudgetInput {
  /** The model's context window in tokens. */
  window: number;
  /** Tokens of the system prompt and context prompt, as counted. */
  promptTokens: number;
  /** Tokens of the tool schemas sent with the request, as counted (default 0). */
  toolTokens?: number;
  /** Tokens kept for the reply (default {@link reservedOutputTokens} of the window). */
  reservedOutput?: number;
  /** The session's correction factor (`TokenCalibration.factor`, ≥ 1; default 1): counts are scaled up by it. */
  correction?: number;
}

/**
 * Tokens the messages of a request may take, as counted: `(window − reserved output) /
 * correction − prompt − tools`, never below 0.
 *
 * @example
 * requestBudget({ window: 8192, promptTokens: 300, toolTokens: 200 }); // 5644
 */
export function requestBudget(input: RequestBudgetInput): number {
  const reserved = input.reservedOutput ?? reservedOutputTokens(input.window);
  const correction = input.correction !== undefined && input.correction >= 1 ? input.correction : 1;
  const room = Math.floor((input.window - reserved) / correction) - input.promptTokens - (input.toolTokens ?? 0);
  return Math.max(0, room);
}
