import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeDataUrl, humanSize, InvalidDataUrlError, MediaTooLargeError, parseByteSize, removeSpooled, spoolMedia } from "../../src/media/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tl-media-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** A body of `count` chunks of `size` bytes that records how far it was read and whether it was closed. */
function countingBody(count: number, size: number): { body: AsyncIterable<Uint8Array>; pulled: () => number; closed: () => boolean } {
  let pulled = 0;
  let closed = false;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      for (let i = 0; i < count; i++) {
        pulled += 1;
        yield new Uint8Array(size).fill(i % 256);
      }
    } finally {
      closed = true;
    }
  }
  return { body: chunks(), pulled: () => pulled, closed: () => closed };
}

describe("spoolMedia", () => {
  it("writes an async iterable to a temp file with its size, SHA-256 and head", async () => {
    const bytes = new Uint8Array(readFileSync(new URL("./fixtures/pixel.png", import.meta.url)));
    async function* body(): AsyncGenerator<Uint8Array> {
      yield bytes.subarray(0, 10);
      yield bytes.subarray(10);
    }
    const spooled = await spoolMedia(body(), { maxBytes: 1000, dir });
    expect(spooled.size).toBe(bytes.byteLength);
    expect(spooled.sha256).toBe(sha256(bytes));
    expect(Buffer.from(spooled.head)).toEqual(Buffer.from(bytes));
    expect(new Uint8Array(readFileSync(spooled.file))).toEqual(bytes);
    await removeSpooled(spooled);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("reads a web ReadableStream", async () => {
    const text = new TextEncoder().encode("hello from a web stream");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(text.subarray(0, 5));
        controller.enqueue(text.subarray(5));
        controller.close();
      },
    });
    const spooled = await spoolMedia(stream, { maxBytes: 1000, dir });
    expect(spooled).toMatchObject({ size: text.byteLength, sha256: sha256(text) });
    await removeSpooled(spooled);
  });

  it("stops reading as soon as the count passes the limit, closes the body and removes the temp file", async () => {
    const counted = countingBody(100, 1024);
    const error = await spoolMedia(counted.body, { maxBytes: 4 * 1024 + 10, dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaTooLargeError);
    expect((error as MediaTooLargeError).message).toBe("it is larger than the limit of 4 KB");
    // The fifth chunk passed the limit: nothing after it was asked for.
    expect(counted.pulled()).toBe(5);
    expect(counted.closed()).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("keeps a body of exactly the limit", async () => {
    const counted = countingBody(4, 1024);
    const spooled = await spoolMedia(counted.body, { maxBytes: 4096, dir });
    expect(spooled.size).toBe(4096);
    await removeSpooled(spooled);
  });

  it("stops a stalled body when the signal aborts", async () => {
    let started!: () => void;
    const waiting = new Promise<void>((resolve) => (started = resolve));
    const stalled: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          started();
          return new Promise<IteratorResult<Uint8Array>>(() => {});
        },
      }),
    };
    const controller = new AbortController();
    const reading = spoolMedia(stalled, { maxBytes: 1000, dir, signal: controller.signal }).catch((e: unknown) => e);
    await waiting;
    controller.abort(new DOMException("The download took too long.", "TimeoutError"));
    const error = await reading;
    expect((error as Error).name).toBe("TimeoutError");
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("decodeDataUrl", () => {
  it("decodes base64 and percent-encoded data URLs", () => {
    const png = new Uint8Array(readFileSync(new URL("./fixtures/pixel.png", import.meta.url)));
    const url = `data:image/png;base64,${Buffer.from(png).toString("base64")}`;
    const decoded = decodeDataUrl(url, 1000);
    expect(decoded.mimeType).toBe("image/png");
    expect(decoded.bytes).toEqual(png);
    expect(decodeDataUrl("data:text/plain,caf%C3%A9%20au%20lait", 100)).toEqual({ bytes: new TextEncoder().encode("café au lait"), mimeType: "text/plain" });
    expect(decodeDataUrl("data:,%FF%00", 100).bytes).toEqual(new Uint8Array([255, 0]));
  });

  it("refuses a payload over the limit before decoding it, with its size", () => {
    const url = `data:image/png;base64,${Buffer.alloc(3000).toString("base64")}`;
    const error = (() => {
      try {
        decodeDataUrl(url, 2048);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(MediaTooLargeError);
    expect((error as MediaTooLargeError).size).toBe(3000);
    expect((error as Error).message).toBe("it is 2.9 KB and the limit is 2 KB");
    expect(() => decodeDataUrl(`data:,${"a".repeat(101)}`, 100)).toThrow(MediaTooLargeError);
  });

  it("refuses what is not a well-formed data: URL", () => {
    expect(() => decodeDataUrl("https://example.com/a.png", 100)).toThrow(InvalidDataUrlError);
    expect(() => decodeDataUrl("data:image/png;base64", 100)).toThrow("no comma");
    expect(() => decodeDataUrl("data:image/png;base64,***", 100)).toThrow("base64 data is not valid");
  });
});

describe("sizes", () => {
  it("says sizes as a chat message does", () => {
    expect(humanSize(26_528_972)).toBe("25.3 MB");
    expect(humanSize(20 * 1024 * 1024)).toBe("20 MB");
    expect(humanSize(200 * 1024)).toBe("200 KB");
    expect(humanSize(1)).toBe("1 byte");
    expect(humanSize(512)).toBe("512 bytes");
  });

  it("reads byte sizes as the config writes them", () => {
    expect(parseByteSize(1234)).toBe(1234);
    expect(parseByteSize("20MB")).toBe(20 * 1024 * 1024);
    expect(parseByteSize("20 MiB")).toBe(20 * 1024 * 1024);
    expect(parseByteSize("512kb")).toBe(512 * 1024);
    expect(parseByteSize("1.5 GB")).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize("300")).toBe(300);
    expect(parseByteSize("20 parsecs")).toBeNull();
    expect(parseByteSize(1.5)).toBeNull();
    expect(parseByteSize(true)).toBeNull();
  });
});
