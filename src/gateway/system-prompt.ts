/**
 * The system prompt of a gateway turn and its record on the session. A turn's context
 * prompt is the session context section, the agent's tool guidance, then the per-turn
 * notices (an automatic reset, a resumed turn). The session stores the prompt without those
 * notices (what every turn of the session is given), so a session can be audited and
 * replayed: it is written on the session's first turn, and again whenever it changes.
 *
 * @module
 */
import type { Session, SessionUpdate } from "../store/index.js";

/** The heading of the tool guidance section of the context prompt. */
export const TOOL_GUIDANCE_HEADING = "## Using your tools";

/** A turn's system prompt, as given to the agent and as stored. */
export interface TurnPrompt {
  /** The agent's `contextPrompt`: {@link TurnPrompt.stored}, then the notices, joined with blank lines. */
  contextPrompt: string;
  /** What the session stores as its system prompt: the context section and the tool guidance. */
  stored: string;
}

/**
 * Composes a turn's prompt from the rendered context section, the agent's tool guidance lines
 * (blank ones are dropped; none: no guidance section) and the per-turn notices.
 *
 * @example
 * composeTurnPrompt("## Current Session Context\n…", ["Use session_search for earlier chats."], []).stored;
 * // "## Current Session Context\n…\n\n## Using your tools\nUse session_search for earlier chats."
 */
export function composeTurnPrompt(context: string, guidance: readonly string[], notices: readonly string[]): TurnPrompt {
  const lines = guidance.map((line) => line.trim()).filter((line) => line !== "");
  const stored = lines.length === 0 ? context : `${context}\n\n${[TOOL_GUIDANCE_HEADING, ...lines].join("\n")}`;
  const extra = notices.filter((notice) => notice.trim() !== "");
  return { stored, contextPrompt: [stored, ...extra].join("\n\n") };
}

/** What {@link SystemPromptRecords} reads and writes. */
export interface SystemPromptStore {
  getSession(id: string): Promise<Session | null>;
  updateSession(id: string, update: SessionUpdate): Promise<Session>;
}

/**
 * Writes a session's system prompt when it differs from the stored one. The prompt last
 * seen per session is remembered (up to `limit` sessions), so an unchanged prompt costs
 * nothing after the first turn in this process; a session not remembered is read once.
 */
export class SystemPromptRecords {
  readonly #db: SystemPromptStore;
  readonly #limit: number;
  readonly #known = new Map<string, string>();

  constructor(db: SystemPromptStore, { limit = 10_000 }: { limit?: number } = {}) {
    this.#db = db;
    this.#limit = limit;
  }

  /** Stores `prompt` as the session's system prompt unless it is stored already. Resolves with whether it wrote. */
  async record(sessionId: string, prompt: string): Promise<boolean> {
    if (this.#known.get(sessionId) === prompt) return false;
    let wrote = false;
    if (!this.#known.has(sessionId) && (await this.#db.getSession(sessionId))?.systemPrompt === prompt) {
      // Stored by an earlier process (or another replica): nothing to write.
    } else {
      await this.#db.updateSession(sessionId, { systemPrompt: prompt });
      wrote = true;
    }
    this.#known.delete(sessionId);
    this.#known.set(sessionId, prompt);
    if (this.#known.size > this.#limit) {
      const oldest = this.#known.keys().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
    return wrote;
  }
}
