/**
 * Reads a server-sent-events route with `fetch` and a stream reader. `EventSource` cannot
 * send the API key (`Authorization: Bearer …`), and the page never puts a key in a URL, so
 * the live view reads `GET /gateway/live` this way: the same key and errors as every other
 * request ({@link ApiError}).
 *
 * @module
 */
import { ApiError, apiUrl, storedKey } from "./api-client.js";

/** One event of the stream: its `event:` name (default `message`) and its `data:` lines joined. */
export interface StreamEvent {
  event: string;
  data: string;
}

/**
 * Splits a text/event-stream into events (the parsing rules of the HTML standard: `event`
 * and `data` fields, comment lines ignored, an empty line ends an event). Feed it chunks;
 * it calls `onEvent` for each complete event.
 */
export class EventStreamParser {
  #buffer = "";
  #event = "";
  #data: string[] = [];
  readonly #onEvent: (event: StreamEvent) => void;

  constructor(onEvent: (event: StreamEvent) => void) {
    this.#onEvent = onEvent;
  }

  /** Adds decoded text. */
  push(text: string): void {
    this.#buffer += text;
    let at: number;
    while ((at = this.#buffer.search(/\r\n|\r|\n/u)) !== -1) {
      const line = this.#buffer.slice(0, at);
      const eol = this.#buffer.startsWith("\r\n", at) ? 2 : 1;
      this.#buffer = this.#buffer.slice(at + eol);
      this.#line(line);
    }
  }

  #line(line: string): void {
    if (line === "") {
      if (this.#data.length > 0) this.#onEvent({ event: this.#event === "" ? "message" : this.#event, data: this.#data.join("\n") });
      this.#event = "";
      this.#data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
  }
}

/**
 * Opens the event stream at the API path `path` with the stored key and calls `onEvent`
 * for each event until the server ends the stream (resolves) or `signal` aborts (rejects
 * with an `AbortError`). A refused request throws {@link ApiError} with the server's code.
 */
export async function readEventStream(path: string, onEvent: (event: StreamEvent) => void, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  const key = storedKey();
  if (key !== null && key !== "") headers["authorization"] = `Bearer ${key}`;
  let response: Response;
  try {
    response = await fetch(apiUrl(path), { headers, signal, credentials: "omit", cache: "no-store" });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "TL_ERR_NETWORK", "The server could not be reached. Check that threadline is running.");
  }
  if (!response.ok || response.body === null) {
    let err: { code?: unknown; message?: unknown } | undefined;
    try {
      err = ((await response.json()) as { error?: { code?: unknown; message?: unknown } }).error;
    } catch {
      err = undefined;
    }
    throw new ApiError(
      response.status,
      typeof err?.code === "string" ? err.code : `HTTP_${response.status}`,
      typeof err?.message === "string" ? err.message : `The server answered ${response.status}.`,
    );
  }
  const parser = new EventStreamParser(onEvent);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.push(value);
    }
  } finally {
    reader.releaseLock();
  }
}
