/**
 * The JSON Lines writers: `writeLines` writes serialised lines as they are, `writeJsonl`
 * serialises records; both wait for `drain` when the stream is full.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { writeJsonl, writeLines } from "../../src/index.js";

/** A stream that takes one chunk at a time, each in a later turn of the event loop, and keeps them. */
function slowSink(highWaterMark: number): { out: Writable; chunks: Buffer[]; fullWrites: () => number } {
  const chunks: Buffer[] = [];
  let full = 0;
  const out = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      setImmediate(done);
    },
  });
  const write = out.write.bind(out);
  out.write = ((chunk: unknown, ...rest: never[]) => {
    const ok = write(chunk as Buffer, ...rest);
    if (!ok) full += 1;
    return ok;
  }) as typeof out.write;
  return { out, chunks, fullWrites: () => full };
}

async function* from<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

describe("JSON Lines writers", () => {
  it("writeLines writes bytes and strings as they are, in order, waiting for drain; returns the count", async () => {
    const lines = [Buffer.from('{"a":"é"}\n'), '{"b":1}\n', new Uint8Array(Buffer.from(`${"x".repeat(100)}\n`))];
    const { out, chunks, fullWrites } = slowSink(8);
    expect(await writeLines(from(lines), out)).toBe(3);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(`{"a":"é"}\n{"b":1}\n${"x".repeat(100)}\n`);
    expect(fullWrites()).toBeGreaterThan(0);
    expect(out.writableLength).toBe(0);
  });

  it("writeJsonl writes each record as JSON.stringify plus a newline", async () => {
    const records = [{ a: 1, s: "\u2028\u0001" }, [1, null], "text"];
    const { out, chunks } = slowSink(4);
    expect(await writeJsonl(from(records), out)).toBe(3);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  });
});
