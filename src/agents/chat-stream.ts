/**
 * Reads a streamed chat completion (`text/event-stream`, `data: {chunk}` lines ending in
 * `data: [DONE]`) as it arrives: each piece of reply text goes to `onDelta` at once, and
 * the chunks are folded back into the body a non-streamed call would have returned
 * (content, reasoning, tool calls merged by index, finish reason, usage, model), so one
 * parser maps both.
 *
 * @module
 */
import { AgentError } from "./agent.js";

/**
 * What a stream's `error` chunk said (some servers report failures inside a 200 stream). The
 * provider turns it into an {@link AgentError} whose message says what to do.
 */
export class StreamErrorChunk extends AgentError {
  declare readonly providerMessage: string;

  constructor(providerMessage: string) {
    super(providerMessage, { providerMessage });
  }
}

interface ToolCallParts {
  id: string;
  type: string;
  name: string;
  args: string;
}

/**
 * Reads `body` to its end (or `[DONE]`), calling `onDelta` with every piece of content
 * text, and returns the equivalent non-streamed completion body. Throws
 * {@link StreamErrorChunk} for an `error` chunk; read errors (abort, reset) propagate.
 */
export async function readChatStream(body: ReadableStream<Uint8Array> | null, onDelta: (text: string) => void): Promise<Record<string, unknown>> {
  let content: string | null = null;
  let reasoning: string | null = null;
  let finishReason: string | null = null;
  let usage: unknown;
  let model: string | undefined;
  let id: string | undefined;
  let sawChoice = false;
  const calls: ToolCallParts[] = [];

  const onChunk = (chunk: Record<string, unknown>): void => {
    const error = chunk.error;
    if (error !== undefined && error !== null) {
      const message = typeof error === "string" ? error : isRecord(error) && typeof error.message === "string" ? error.message : JSON.stringify(error);
      throw new StreamErrorChunk(message);
    }
    if (typeof chunk.model === "string" && chunk.model !== "") model = chunk.model;
    if (typeof chunk.id === "string") id ??= chunk.id;
    if (isRecord(chunk.usage)) usage = chunk.usage;
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!isRecord(choice)) return;
    sawChoice = true;
    if (typeof choice.finish_reason === "string") finishReason = choice.finish_reason;
    const delta = isRecord(choice.delta) ? choice.delta : isRecord(choice.message) ? choice.message : null;
    if (delta === null) return;
    if (typeof delta.content === "string" && delta.content !== "") {
      content = (content ?? "") + delta.content;
      try {
        onDelta(delta.content);
      } catch {
        // A listener's failure must not end the model call.
      }
    }
    const thinking = typeof delta.reasoning_content === "string" ? delta.reasoning_content : typeof delta.reasoning === "string" ? delta.reasoning : null;
    if (thinking !== null) reasoning = (reasoning ?? "") + thinking;
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((raw: unknown, position) => {
        if (!isRecord(raw)) return;
        const index = typeof raw.index === "number" ? raw.index : position;
        const call = (calls[index] ??= { id: "", type: "function", name: "", args: "" });
        if (typeof raw.id === "string" && raw.id !== "") call.id = raw.id;
        if (typeof raw.type === "string") call.type = raw.type;
        const fn = isRecord(raw.function) ? raw.function : {};
        if (typeof fn.name === "string") call.name += fn.name;
        if (typeof fn.arguments === "string") call.args += fn.arguments;
        else if (isRecord(fn.arguments)) call.args += JSON.stringify(fn.arguments);
      });
    }
  };

  if (body !== null) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let done = false;
    try {
      while (!done) {
        const next = await reader.read();
        buffer += next.done ? decoder.decode() : decoder.decode(next.value, { stream: true });
        if (next.done) buffer += "\n";
        let newline: number;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/u, "");
          buffer = buffer.slice(newline + 1);
          if (!line.startsWith("data:")) continue; // blank lines, comments (": keep-alive"), event names
          const data = line.slice(5).trim();
          if (data === "[DONE]") {
            done = true;
            break;
          }
          if (data === "") continue;
          let parsed: unknown;
          try {
            parsed = JSON.parse(data);
          } catch {
            continue; // a line that is not JSON carries nothing we can use
          }
          if (isRecord(parsed)) onChunk(parsed);
        }
        if (next.done) done = true;
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  const completion: Record<string, unknown> = { object: "chat.completion" };
  if (id !== undefined) completion.id = id;
  if (model !== undefined) completion.model = model;
  if (usage !== undefined) completion.usage = usage;
  if (!sawChoice) return { ...completion, choices: [] };
  const message: Record<string, unknown> = { role: "assistant", content };
  if (reasoning !== null) message.reasoning = reasoning;
  const toolCalls = calls
    .filter((call) => call !== undefined)
    .map((call, index) => ({ id: call.id || `call_${index}`, type: call.type, function: { name: call.name, arguments: call.args } }));
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  completion.choices = [{ index: 0, message, finish_reason: finishReason }];
  return completion;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
