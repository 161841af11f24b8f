/**
 * The sender-prefix rule of shared sessions (issue 26, point 5): who a message is labelled
 * with, how a label is put in front of text and content parts, and which messages of the
 * history get one.
 */
import { describe, expect, it } from "vitest";
import { hashIdentifier } from "../../src/gateway/session-context.js";
import { prefixContent, senderLabel, withSenderPrefixes } from "../../src/gateway/sender-prefix.js";
import type { ConversationMessage } from "../../src/store/index.js";

describe("senderLabel", () => {
  it("is the display name, else the user id (hashed with redactPii, raw on Discord), else unknown", () => {
    expect(senderLabel({ platform: "slack", chatType: "thread", userName: "Carol", userId: "U1" })).toBe("Carol");
    expect(senderLabel({ platform: "telegram", chatType: "group", userId: "42" })).toBe("42");
    expect(senderLabel({ platform: "telegram", chatType: "group", userId: "42" }, { redactPii: true })).toBe(`user_${hashIdentifier("42")}`);
    expect(senderLabel({ platform: "discord", chatType: "thread", userId: "42" }, { redactPii: true })).toBe("42");
    expect(senderLabel({ platform: "telegram", chatType: "group", userName: "  ", userIdAlt: "alt-7" })).toBe("alt-7");
    expect(senderLabel({ platform: "telegram", chatType: "group", userName: "[]" })).toBe("unknown");
  });

  it("is null for a source that names no user (a note the gateway wrote itself)", () => {
    expect(senderLabel({ platform: "slack", chatType: "channel", chatId: "C1" })).toBeNull();
  });

  it("cannot break the line or fake a second prefix, and is capped", () => {
    expect(senderLabel({ platform: "slack", chatType: "thread", userName: "Mal] [Alice\nX\u0007" })).toBe("Mal Alice X");
    expect([...(senderLabel({ platform: "slack", chatType: "thread", userName: "n".repeat(200) }) ?? "")]).toHaveLength(60);
  });
});

describe("prefixContent", () => {
  it("prefixes text, the first text part of parts, or adds a text part before parts without text", () => {
    expect(prefixContent("hi", "Ann")).toBe("[Ann] hi");
    expect(prefixContent("", "Ann")).toBe("[Ann]");
    expect(prefixContent(null, "Ann")).toBe("[Ann]");
    const image = { type: "image_url", image_url: { url: "https://example.invalid/a.png" } };
    expect(prefixContent([image, { type: "text", text: "look" }], "Ann")).toEqual([image, { type: "text", text: "[Ann] look" }]);
    expect(prefixContent([image], "Ann")).toEqual([{ type: "text", text: "[Ann]" }, image]);
  });
});

describe("withSenderPrefixes", () => {
  const history: ConversationMessage[] = [
    { role: "user", content: "earlier" },
    { role: "assistant", content: "reply" },
    { role: "user", content: "one" },
    { role: "user", content: "two" },
  ];

  it("labels the user messages at the end (the turn's), oldest first; leaves the rest and the input alone", () => {
    const given = withSenderPrefixes(history, ["Ann", "Bob"]);
    expect(given.map((m) => m.content)).toEqual(["earlier", "reply", "[Ann] one", "[Bob] two"]);
    expect(history.map((m) => m.content)).toEqual(["earlier", "reply", "one", "two"]);
  });

  it("labels only as many messages as there are labels, from the end (a summary before the turn's message is nobody's); none leaves all as they are", () => {
    expect(withSenderPrefixes(history, ["Ann"]).map((m) => m.content)).toEqual(["earlier", "reply", "one", "[Ann] two"]);
    expect(withSenderPrefixes(history, []).map((m) => m.content)).toEqual(["earlier", "reply", "one", "two"]);
    expect(withSenderPrefixes(history, [null, "Bob"]).map((m) => m.content)).toEqual(["earlier", "reply", "one", "[Bob] two"]);
  });
});
