/**
 * Counting tokens: exact for the OpenAI model families (through `gpt-tokenizer`, loaded on
 * first use, one encoding at a time), an estimate with a safety margin for every other
 * model. The estimate is the `o200k_base` count plus {@link ESTIMATE_MARGIN}: other
 * tokenizers (Llama, Mistral, Claude, Gemini) split the same text into up to about a fifth
 * more tokens, so a budget built on it stays under their windows.
 *
 * @module
 */
import type { ContentPart, ConversationMessage } from "../store/index.js";
import { attachmentPlaceholder, isAttachmentPart } from "./attachment-parts.js";

/** The encodings counted exactly. */
export type TokenEncoding = "o200k_base" | "cl100k_base";

/** Extra share added to the `o200k_base` count for a model whose tokenizer is unknown (0.25 = +25 %). */
export const ESTIMATE_MARGIN = 0.25;
/** Tokens every message costs besides its text (role and separators; OpenAI's chat format). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens that prime the reply after the last message. */
export const REPLY_PRIMING_TOKENS = 3;
/** Tokens an image part is counted as (a detail-`auto` image of moderate size). */
export const IMAGE_PART_TOKENS = 765;

/** Counts the tokens of text and of messages for one model. */
export interface TokenCounter {
  /** The encoding counted with; `null` when the model is unknown and counts are estimates. */
  readonly encoding: TokenEncoding | null;
  /** `true` when counts are exact for the model (its encoding is known). */
  readonly exact: boolean;
  /** Tokens of a piece of text. */
  count(text: string): number;
  /** Tokens of one message as the model is sent it: its text, tool calls, and {@link MESSAGE_OVERHEAD_TOKENS}. */
  countMessage(message: ConversationMessage): number;
  /** Tokens of a request's messages, with {@link REPLY_PRIMING_TOKENS}. */
  countMessages(messages: readonly ConversationMessage[]): number;
}

/**
 * The exact encoding of a model name, or `null` when it is not an OpenAI model we know.
 * A provider prefix (`openai/gpt-4o`) is ignored.
 */
export function encodingForModel(model: string | null | undefined): TokenEncoding | null {
  if (model === null || model === undefined) return null;
  const name = model.toLowerCase().split("/").at(-1)!;
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|gpt-oss)/u.test(name)) return "o200k_base";
  if (/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada)/u.test(name)) return "cl100k_base";
  return null;
}

type CountFn = (text: string) => number;
const loaded = new Map<TokenEncoding, Promise<CountFn>>();

async function loadEncoding(encoding: TokenEncoding): Promise<CountFn> {
  let pending = loaded.get(encoding);
  if (pending === undefined) {
    pending =
      encoding === "o200k_base"
        ? import("gpt-tokenizer/encoding/o200k_base").then((m) => m.countTokens as CountFn)
        : import("gpt-tokenizer/encoding/cl100k_base").then((m) => m.countTokens as CountFn);
    loaded.set(encoding, pending);
  }
  return pending;
}

/**
 * The text of a message's parts and the number of image parts. A stored `attachment` part is
 * counted as its placeholder text (the longest form, with the "bytes not stored" note), whatever
 * it is finally sent as: the count of a stored message does not depend on which images a request
 * sends, so it can be cached; the images a request sends are accounted for by whoever chooses
 * them (see `TurnContexts`). Any other non-text part counts as an image.
 */
function textOfParts(parts: ContentPart[]): { text: string; images: number } {
  let text = "";
  let images = 0;
  for (const part of parts) {
    const p = part as { type?: string; text?: unknown };
    if (typeof p.text === "string") text += p.text;
    else if (isAttachmentPart(part)) text += attachmentPlaceholder(part.attachment, { missing: true });
    else if (p.type !== undefined && p.type !== "text") images += 1;
  }
  return { text, images };
}

/**
 * A token counter for `model`: exact for the OpenAI families ({@link encodingForModel}),
 * else the `o200k_base` count plus {@link ESTIMATE_MARGIN}. Loads the encoding on first use.
 *
 * @example
 * const counter = await tokenCounterFor("gpt-4o-mini");
 * counter.countMessages([{ role: "user", content: "Hello" }]); // 11
 */
export async function tokenCounterFor(model: string | null | undefined): Promise<TokenCounter> {
  const encoding = encodingForModel(model);
  const base = await loadEncoding(encoding ?? "o200k_base");
  const count: CountFn = encoding === null ? (text) => Math.ceil(base(text) * (1 + ESTIMATE_MARGIN)) : base;
  const countMessage = (message: ConversationMessage): number => {
    let tokens = MESSAGE_OVERHEAD_TOKENS;
    const content = message.content;
    if (typeof content === "string") tokens += count(content);
    else if (Array.isArray(content)) {
      const { text, images } = textOfParts(content);
      tokens += count(text) + images * IMAGE_PART_TOKENS;
    }
    if (message.name !== undefined) tokens += count(message.name) + 1;
    for (const call of message.tool_calls ?? []) {
      tokens += count(call.function.name) + count(call.function.arguments) + MESSAGE_OVERHEAD_TOKENS;
    }
    return tokens;
  };
  return {
    encoding,
    exact: encoding !== null,
    count,
    countMessage,
    countMessages: (messages) => messages.reduce((sum, m) => sum + countMessage(m), REPLY_PRIMING_TOKENS),
  };
}
