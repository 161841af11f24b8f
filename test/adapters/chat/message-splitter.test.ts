import { expect, it } from "vitest";
import { splitMessage } from "../../../src/adapters/chat/index.js";
import { InvalidInputError } from "../../../src/store/index.js";

it("text within the limit is one chunk; empty text is one empty chunk", () => {
  expect(splitMessage("short", 100)).toEqual(["short"]);
  expect(splitMessage("", 100)).toEqual([""]);
});

it("cuts at paragraph boundaries first, then lines, then spaces, then anywhere", () => {
  const a = "a".repeat(60);
  const b = "b".repeat(60);
  expect(splitMessage(`${a}\n\n${b}`, 100)).toEqual([a, b]);
  expect(splitMessage(`${a}\n${b}`, 100)).toEqual([a, b]);
  expect(splitMessage(`${"w ".repeat(40)}${"v ".repeat(40)}`.trim(), 100).every((c) => c.length <= 100)).toBe(true);
  const word = "x".repeat(250);
  const chunks = splitMessage(word, 100);
  expect(chunks.every((c) => c.length <= 100)).toBe(true);
  expect(chunks.join("")).toBe(word);
});

it("prefers a paragraph break over a later line break", () => {
  const text = `${"p".repeat(50)}\n\n${"q".repeat(30)}\n${"r".repeat(40)}`;
  expect(splitMessage(text, 100)[0]).toBe("p".repeat(50));
});

it("a fenced code block cut in two is closed and reopened with its language", () => {
  const body = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n");
  const text = `intro\n\n\`\`\`python\n${body}\n\`\`\`\n\nafter`;
  const chunks = splitMessage(text, 120);
  expect(chunks.length).toBeGreaterThan(2);
  for (const chunk of chunks) {
    expect(chunk.length).toBeLessThanOrEqual(120);
    // Every chunk has balanced fences.
    expect((chunk.match(/^```/gmu) ?? []).length % 2).toBe(0);
  }
  expect(chunks[1]!.startsWith("```python\n")).toBe(true);
  const lines = chunks
    .join("\n")
    .split("\n")
    .filter((l) => l.startsWith("line "));
  expect(lines).toEqual(body.split("\n"));
  expect(chunks.at(-1)!.endsWith("after")).toBe(true);
});

it("tilde fences and longer backtick fences are respected", () => {
  const text = `~~~\n${"t\n".repeat(80)}~~~`;
  const chunks = splitMessage(text, 60);
  for (const chunk of chunks) expect(chunk.startsWith("~~~") && chunk.trimEnd().endsWith("~~~")).toBe(true);
});

it("never splits a surrogate pair and honours a custom measure", () => {
  const emoji = "😀".repeat(100);
  for (const chunk of splitMessage(emoji, 31)) expect(chunk).not.toMatch(/[\uD800-\uDBFF]$/u);
  const bytes = (t: string) => Buffer.byteLength(t);
  for (const chunk of splitMessage("é".repeat(100), 50, { measure: bytes })) expect(bytes(chunk)).toBeLessThanOrEqual(50);
});

it("rejects a limit too small for a fence", () => {
  expect(() => splitMessage("x", 4)).toThrow(InvalidInputError);
  expect(() => splitMessage("x", 4)).toThrow(expect.objectContaining({ code: "TL_ERR_INVALID_INPUT", field: "limit" }));
});
