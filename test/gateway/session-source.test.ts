import { describe, expect, it } from "vitest";
import { describeSessionSource, KNOWN_PLATFORMS, parseSessionSource, type SessionSource } from "../../src/gateway/session-source.js";
import { InvalidInputError } from "../../src/store/errors.js";

describe("parseSessionSource", () => {
  it("accepts a full source", () => {
    const full: SessionSource = {
      platform: "telegram",
      chatType: "group",
      chatId: "-100123",
      chatName: "Dev Chat",
      userId: "42",
      userName: "Alice",
      threadId: "7",
      chatTopic: "builds",
      userIdAlt: null,
      chatIdAlt: null,
      isBot: false,
      scopeId: null,
      parentChatId: null,
      messageId: "m1",
      roleAuthorized: true,
      profile: "work",
    };
    expect(parseSessionSource(full)).toEqual(full);
  });

  it("keeps unknown platforms and extra keys through a JSON round trip", () => {
    const original = {
      platform: "my-new-chat-app",
      chatType: "thread",
      chatId: "c1",
      threadId: "t1",
      userId: null,
      extraField: { nested: [1, "two", null] },
      anotherOne: 3,
    };
    const json = JSON.stringify(original);
    const parsed = parseSessionSource(JSON.parse(json));
    expect(parsed.platform).toBe("my-new-chat-app");
    expect(JSON.stringify(parsed)).toBe(json);
    expect(JSON.stringify(parseSessionSource(JSON.parse(JSON.stringify(parsed))))).toBe(json);
  });

  it("returns a copy, not the input", () => {
    const input = { platform: "slack", chatType: "channel" };
    const parsed = parseSessionSource(input);
    expect(parsed).not.toBe(input);
    expect(parsed).toEqual(input);
  });

  it("lists the known platforms", () => {
    expect(KNOWN_PLATFORMS).toContain("telegram");
    expect(KNOWN_PLATFORMS).toContain("api-server");
    expect(Object.isFrozen(KNOWN_PLATFORMS)).toBe(true);
  });

  it.each([
    [{ platform: "telegram", chatType: "room" }, 'session source: chatType must be one of dm, group, channel, thread (got "room")', "chatType"],
    [{ platform: "telegram" }, "session source: chatType must be one of dm, group, channel, thread (got nothing)", "chatType"],
    [{ chatType: "dm" }, 'session source: platform must be a non-empty platform name such as "telegram" (got nothing)', "platform"],
    [{ platform: "", chatType: "dm" }, 'session source: platform must be a non-empty platform name such as "telegram" (got "")', "platform"],
    [{ platform: "telegram", chatType: "dm", userId: 42 }, "session source: userId must be a string or null (got 42)", "userId"],
    [{ platform: "telegram", chatType: "dm", isBot: "yes" }, 'session source: isBot must be true or false (got "yes")', "isBot"],
    [{ platform: "telegram", chatType: "dm", roleAuthorized: null }, "session source: roleAuthorized must be true or false (got null)", "roleAuthorized"],
  ])("rejects %j", (input, message, field) => {
    let error: unknown;
    try {
      parseSessionSource(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).message).toBe(message);
    expect((error as InvalidInputError).field).toBe(field);
  });

  it.each([null, "telegram", 42, [], undefined])("rejects a non-object (%j)", (input) => {
    expect(() => parseSessionSource(input)).toThrow(/session source: must be an object with at least platform and chatType/);
  });
});

describe("describeSessionSource", () => {
  const base = { platform: "telegram" } as const;
  it.each<[SessionSource, string]>([
    [{ ...base, chatType: "dm", userName: "Alice", userId: "42" }, "DM with Alice"],
    [{ ...base, chatType: "dm", userId: "42" }, "DM with 42"],
    [{ ...base, chatType: "dm", userName: "", userId: "" }, "DM with unknown user"],
    [{ ...base, chatType: "dm" }, "DM with unknown user"],
    [{ ...base, chatType: "group", chatName: "Dev Chat", chatId: "-1", threadId: "42" }, "group: Dev Chat, thread: 42"],
    [{ ...base, chatType: "group", chatId: "-100" }, "group: -100"],
    [{ platform: "discord", chatType: "channel", chatName: "#general", chatId: "9" }, "channel: #general"],
    [{ platform: "discord", chatType: "thread", chatName: "bug 12", chatId: "55", parentChatId: "9" }, "thread: bug 12 in 9"],
    [{ platform: "slack", chatType: "thread", chatId: "C1", threadId: "1700.1" }, "thread: 1700.1 in C1"],
    [{ platform: "slack", chatType: "thread", threadId: "1700.1" }, "thread: 1700.1"],
    [{ platform: "cli", chatType: "dm", userName: "me" }, "CLI terminal"],
    [{ platform: "local", chatType: "dm" }, "CLI terminal"],
  ])("%j → %s", (source, expected) => {
    expect(describeSessionSource(source)).toBe(expected);
  });
});
