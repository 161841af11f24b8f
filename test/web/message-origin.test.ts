// The page's copy of the summary/note rule (src/web/message-origin.ts) agrees with the store's.
import { describe, expect, it } from "vitest";
import * as store from "../../src/store/message-origin.js";
import * as web from "../../src/web/message-origin.js";

const CASES: Array<{ role: "user" | "assistant"; platformMessageId: string | null; text: string }> = [
  {
    role: "user",
    platformMessageId: "summary:20261127_100000_abc123",
    text: "[Summary of the earlier conversation (session 20261127_100000_abc123)]\nWe chose SQLite.",
  },
  { role: "user", platformMessageId: "handoff:h-1", text: "[System note: This conversation was handed off from the terminal to telegram.]" },
  { role: "user", platformMessageId: null, text: "[Summary of the earlier conversation (session x)]\ntyped by hand" },
  { role: "user", platformMessageId: "4711", text: "[System note: typed by hand]" },
  { role: "assistant", platformMessageId: "summary:x", text: "an assistant row is never a summary" },
];

describe("message origin: the page and the store agree", () => {
  it("classifies and unwraps every case the same way", () => {
    for (const c of CASES) {
      const kind = store.syntheticMessageKind(c);
      expect(web.syntheticMessageKind(c), JSON.stringify(c)).toBe(kind);
      if (kind !== null) expect(web.syntheticMessageBody(kind, c.text)).toBe(store.syntheticMessageBody(kind, c.text));
    }
    expect(CASES.map((c) => store.syntheticMessageKind(c))).toEqual(["summary", "note", null, null, null]);
    expect(store.syntheticMessageBody("summary", CASES[0]!.text)).toBe("We chose SQLite.");
    expect(store.syntheticMessageBody("note", CASES[1]!.text)).toBe("This conversation was handed off from the terminal to telegram.");
    expect(web.summarisedSession("summary:20261127_100000_abc123")).toBe("20261127_100000_abc123");
    expect(store.summaryMessageText("p", "s")).toMatch(/^\[Summary of the earlier conversation \(session p\)\]\ns$/u);
  });
});
