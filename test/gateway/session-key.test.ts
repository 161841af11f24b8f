import { describe, expect, it } from "vitest";
import {
  assertSafeKey,
  assertSafeSessionId,
  buildSessionKey,
  escapeKeyComponent,
  isSharedMultiUserSession,
  normalizeIdentity,
  SESSION_ID_PATTERN,
  type KeySettings,
} from "../../src/gateway/session-key.js";
import type { SessionSource } from "../../src/gateway/session-source.js";
import { InvalidInputError } from "../../src/store/errors.js";

const user = { userId: "u1" } as const;

describe("buildSessionKey", () => {
  // [name, source, settings, expected key, expected shared]
  const on: KeySettings = { groupSessionsPerUser: true, threadSessionsPerUser: true };
  const off: KeySettings = { groupSessionsPerUser: false, threadSessionsPerUser: false };
  const groupOnly: KeySettings = { groupSessionsPerUser: true, threadSessionsPerUser: false };
  const threadOnly: KeySettings = { groupSessionsPerUser: false, threadSessionsPerUser: true };
  const cases: Array<[string, SessionSource, KeySettings | undefined, string, boolean]> = [
    // DMs: settings never matter
    ["dm chat", { platform: "telegram", chatType: "dm", chatId: "42", ...user }, undefined, "agent:main:telegram:dm:42", false],
    ["dm chat, all on", { platform: "telegram", chatType: "dm", chatId: "42", ...user }, on, "agent:main:telegram:dm:42", false],
    ["dm chat, all off", { platform: "telegram", chatType: "dm", chatId: "42", ...user }, off, "agent:main:telegram:dm:42", false],
    ["dm thread", { platform: "slack", chatType: "dm", chatId: "D1", threadId: "17.5", ...user }, off, "agent:main:slack:dm:D1:17.5", false],
    ["dm no chat → participant", { platform: "signal", chatType: "dm", ...user }, undefined, "agent:main:signal:dm:u1", false],
    ["dm userIdAlt first", { platform: "whatsapp", chatType: "dm", userId: "u1", userIdAlt: "lid9" }, undefined, "agent:main:whatsapp:dm:lid9", false],
    ["dm only thread", { platform: "slack", chatType: "dm", threadId: "t9" }, undefined, "agent:main:slack:dm:t9", false],
    ["dm shared lane", { platform: "email", chatType: "dm" }, undefined, "agent:main:email:dm", false],
    [
      "dm empty strings absent",
      { platform: "email", chatType: "dm", chatId: "", userId: "", userIdAlt: "", threadId: "" },
      undefined,
      "agent:main:email:dm",
      false,
    ],
    // groups
    ["group default (per user)", { platform: "telegram", chatType: "group", chatId: "-100", ...user }, undefined, "agent:main:telegram:group:-100:u1", false],
    ["group per-user on", { platform: "telegram", chatType: "group", chatId: "-100", ...user }, groupOnly, "agent:main:telegram:group:-100:u1", false],
    ["group per-user off", { platform: "telegram", chatType: "group", chatId: "-100", ...user }, threadOnly, "agent:main:telegram:group:-100", true],
    ["group all on", { platform: "telegram", chatType: "group", chatId: "-100", ...user }, on, "agent:main:telegram:group:-100:u1", false],
    ["group all off", { platform: "telegram", chatType: "group", chatId: "-100", ...user }, off, "agent:main:telegram:group:-100", true],
    [
      "group userIdAlt",
      { platform: "whatsapp", chatType: "group", chatId: "1203630@g.us", userId: "u1", userIdAlt: "lid9" },
      undefined,
      "agent:main:whatsapp:group:1203630@g.us:lid9",
      false,
    ],
    ["group no user", { platform: "telegram", chatType: "group", chatId: "-100" }, undefined, "agent:main:telegram:group:-100", false],
    // channels
    ["channel default", { platform: "discord", chatType: "channel", chatId: "9", ...user }, undefined, "agent:main:discord:channel:9:u1", false],
    ["channel off", { platform: "discord", chatType: "channel", chatId: "9", ...user }, { groupSessionsPerUser: false }, "agent:main:discord:channel:9", true],
    ["channel on, thread settings ignored", { platform: "discord", chatType: "channel", chatId: "9", ...user }, on, "agent:main:discord:channel:9:u1", false],
    // threads inside groups/channels (threadId present)
    [
      "group topic default (shared)",
      { platform: "telegram", chatType: "group", chatId: "-100", threadId: "42", ...user },
      undefined,
      "agent:main:telegram:group:-100:42",
      true,
    ],
    [
      "group topic, group per-user on, thread off",
      { platform: "telegram", chatType: "group", chatId: "-100", threadId: "42", ...user },
      groupOnly,
      "agent:main:telegram:group:-100:42",
      true,
    ],
    [
      "group topic, thread per-user on",
      { platform: "telegram", chatType: "group", chatId: "-100", threadId: "42", ...user },
      threadOnly,
      "agent:main:telegram:group:-100:42:u1",
      false,
    ],
    [
      "group topic, all on",
      { platform: "telegram", chatType: "group", chatId: "-100", threadId: "42", ...user },
      on,
      "agent:main:telegram:group:-100:42:u1",
      false,
    ],
    [
      "group topic, all off",
      { platform: "telegram", chatType: "group", chatId: "-100", threadId: "42", ...user },
      off,
      "agent:main:telegram:group:-100:42",
      true,
    ],
    [
      "channel thread default",
      { platform: "slack", chatType: "channel", chatId: "C1", threadId: "17.5", ...user },
      undefined,
      "agent:main:slack:channel:C1:17.5",
      true,
    ],
    [
      "channel thread on",
      { platform: "slack", chatType: "channel", chatId: "C1", threadId: "17.5", ...user },
      threadOnly,
      "agent:main:slack:channel:C1:17.5:u1",
      false,
    ],
    // chatType thread
    ["thread default", { platform: "discord", chatType: "thread", chatId: "55", ...user }, undefined, "agent:main:discord:thread:55", true],
    ["thread, group per-user on", { platform: "discord", chatType: "thread", chatId: "55", ...user }, groupOnly, "agent:main:discord:thread:55", true],
    ["thread, thread per-user on", { platform: "discord", chatType: "thread", chatId: "55", ...user }, threadOnly, "agent:main:discord:thread:55:u1", false],
    ["thread, all on", { platform: "discord", chatType: "thread", chatId: "55", threadId: "55t", ...user }, on, "agent:main:discord:thread:55:55t:u1", false],
    ["thread, all off", { platform: "discord", chatType: "thread", chatId: "55", threadId: "55t", ...user }, off, "agent:main:discord:thread:55:55t", true],
  ];

  it.each(cases)("%s", (_name, source, settings, key, shared) => {
    expect(buildSessionKey(source, settings)).toBe(key);
    expect(isSharedMultiUserSession(source, settings)).toBe(shared);
  });

  it.each<[string | null | undefined, string]>([
    [undefined, "main"],
    [null, "main"],
    ["", "main"],
    ["default", "main"],
    ["work", "work"],
    ["a:b", "a%3Ab"],
  ])("profile %j → %s", (profile, expected) => {
    expect(buildSessionKey({ platform: "telegram", chatType: "dm", chatId: "1", profile })).toBe(`agent:${expected}:telegram:dm:1`);
  });

  it("uses the profile on the shared dm lane too", () => {
    expect(buildSessionKey({ platform: "sms", chatType: "dm" })).toBe("agent:main:sms:dm");
    expect(buildSessionKey({ platform: "sms", chatType: "dm", profile: "ops" })).toBe("agent:ops:sms:dm");
  });

  it("does not normalise ids itself", () => {
    expect(buildSessionKey({ platform: "whatsapp", chatType: "dm", userId: "+15551234567" })).toBe("agent:main:whatsapp:dm:+15551234567");
  });

  it("escapes every variable component so hostile ids cannot forge segments or paths", () => {
    const hostile = ["../../etc", "C:\\x", "a/b", "x:y", "..", "...", "C:", "%2F", "a..b"];
    for (const id of hostile) {
      for (const settings of [undefined, { threadSessionsPerUser: true }]) {
        const sources: SessionSource[] = [
          { platform: id, chatType: "dm", chatId: id, threadId: id },
          { platform: "telegram", chatType: "group", chatId: id, threadId: id, userId: id, profile: id },
          { platform: "telegram", chatType: "dm", userId: id, profile: id },
        ];
        for (const source of sources) {
          const key = buildSessionKey(source, settings);
          expect(() => assertSafeKey(key)).not.toThrow();
          expect(key.startsWith("agent:")).toBe(true);
        }
      }
    }
    expect(buildSessionKey({ platform: "telegram", chatType: "group", chatId: "../../etc" }, {})).toBe("agent:main:telegram:group:%2E%2E%2F%2E%2E%2Fetc");
    expect(buildSessionKey({ platform: "telegram", chatType: "group", chatId: "a:b" })).not.toBe(
      buildSessionKey({ platform: "telegram", chatType: "group", chatId: "a", threadId: "b" }),
    );
  });
});

describe("escapeKeyComponent", () => {
  it.each([
    ["plain-id_123", "plain-id_123"],
    ["a/b", "a%2Fb"],
    ["a%2Fb", "a%252Fb"],
    ["C:\\x", "C%3A%5Cx"],
    ["..", "%2E%2E"],
    ["...", "%2E%2E%2E"],
    ["a.b.c", "a.b.c"],
    ["a..b.c", "a%2E%2Eb.c"],
    ["1203630@g.us", "1203630@g.us"],
    ["ünï cödé 🙂", "ünï cödé 🙂"],
  ])("%j → %j", (input, expected) => {
    expect(escapeKeyComponent(input)).toBe(expected);
  });

  it("keeps distinct inputs distinct", () => {
    const inputs = ["a/b", "a%2Fb", "a%252Fb", "a:b", "a%3Ab", "..", "%2E.", ".%2E", "%2E%2E", "a\\b", "a%5Cb"];
    const outputs = inputs.map(escapeKeyComponent);
    expect(new Set(outputs).size).toBe(inputs.length);
  });
});

describe("normalizeIdentity", () => {
  it.each([
    ["+15551234567", "15551234567"],
    ["15551234567:47@s.whatsapp.net", "15551234567"],
    ["15551234567.0:3@s.whatsapp.net", "15551234567"],
    ["15551234567@s.whatsapp.net", "15551234567"],
    ["15551234567@c.us", "15551234567"],
    ["999999999999999@lid", "999999999999999"],
    ["999999999999999:12@lid", "999999999999999"],
    ["1203630@g.us", "1203630@g.us"],
    ["120363012345678901@g.us", "120363012345678901@g.us"],
    ["15551234567", "15551234567"],
    ["+49 151 2345 6789", "4915123456789"],
    ["+1 (555) 123-4567", "15551234567"],
    ["+49.151.23456789", "4915123456789"],
    ["DE.1502576394655843", "DE.1502576394655843"],
    ["US.ENT.11815799212886844830", "US.ENT.11815799212886844830"],
    ["maria lopez", "maria lopez"],
  ])("whatsapp %j → %j", (input, expected) => {
    expect(normalizeIdentity("whatsapp", input)).toBe(expected);
  });

  it.each(["telegram", "signal", "discord", "sms"])("leaves %s ids unchanged", (platform) => {
    expect(normalizeIdentity(platform, "+15551234567")).toBe("+15551234567");
    expect(normalizeIdentity(platform, "15551234567:47@s.whatsapp.net")).toBe("15551234567:47@s.whatsapp.net");
  });
});

describe("assertSafeKey / assertSafeSessionId", () => {
  it.each(["agent:main:telegram:dm:42", "agent:main:slack:channel:C1:17.5:U1", "k", "agent:x:y:dm:%2E%2E"])("accepts %j", (key) => {
    expect(() => assertSafeKey(key)).not.toThrow();
  });

  it.each([
    ["a/b", /path separator/],
    ["a\\b", /path separator/],
    ["../etc", /path separator/],
    ["agent:..:x", /contains "\.\."/],
    ["..", /contains "\.\."/],
    ["C:", /Windows drive prefix/],
    ["c:agent", /Windows drive prefix/],
    ["C:\\x", /path separator/],
    ["", /non-empty string/],
    ["a\u0000b", /NUL/],
  ])("rejects %j", (key, pattern) => {
    expect(() => assertSafeKey(key)).toThrow(InvalidInputError);
    expect(() => assertSafeKey(key)).toThrow(pattern);
  });

  it("rejects non-strings", () => {
    expect(() => assertSafeKey(42)).toThrow(InvalidInputError);
    expect(() => assertSafeSessionId(null)).toThrow(InvalidInputError);
  });

  it("accepts only Threadline session ids", () => {
    expect(SESSION_ID_PATTERN.test("20250101_120000_0a1b2c3d")).toBe(true);
    expect(() => assertSafeSessionId("20250101_120000_0a1b2c3d")).not.toThrow();
    for (const bad of ["20250101_120000_0A1B2C3D", "2025011_120000_0a1b2c3d", "../20250101_120000_0a1b2c3d", "20250101_120000_0a1b2c3d\n", "x"]) {
      expect(() => assertSafeSessionId(bad)).toThrow(/expected YYYYMMDD_HHMMSS_ followed by 8 lowercase hex digits/);
    }
  });
});
