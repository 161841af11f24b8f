import { expect, it } from "vitest";
import {
  DEFAULT_ANSWER_RULES,
  REDACTED,
  SeenMessageIds,
  TypingIndicator,
  abortableSleep,
  connectInBackground,
  decideAnswer,
  loadSdk,
  mediaKindOf,
  redactError,
  redactText,
  wrapMarkers,
  type AnswerCandidate,
} from "../../../src/adapters/chat/index.js";
import { markdownToSlackMrkdwn } from "../../../src/adapters/slack/index.js";
import { markdownToTelegramHtml } from "../../../src/adapters/telegram/index.js";
import { markdownToWhatsApp } from "../../../src/adapters/whatsapp/index.js";
import { InvalidInputError } from "../../../src/store/index.js";
import { waitFor } from "../../support/wait-for.js";

const base: AnswerCandidate = {
  chatType: "group",
  chatId: "-1",
  userId: "7",
  fromSelf: false,
  fromBot: false,
  mentionsBot: false,
  repliesToBot: false,
  inBotThread: false,
};

it("who is answered: own messages never, bots only when allowed, DMs always, groups when addressed or with groupReply all", () => {
  expect(decideAnswer({ ...base, chatType: "dm", fromSelf: true }, DEFAULT_ANSWER_RULES)).toEqual({ answer: false, reason: "self" });
  expect(decideAnswer({ ...base, fromBot: true, mentionsBot: true }, DEFAULT_ANSWER_RULES)).toEqual({ answer: false, reason: "bot" });
  expect(decideAnswer({ ...base, fromBot: true, mentionsBot: true }, { ...DEFAULT_ANSWER_RULES, answerBots: true }).answer).toBe(true);
  expect(decideAnswer({ ...base, chatType: "dm" }, DEFAULT_ANSWER_RULES)).toEqual({ answer: true, reason: "dm" });
  expect(decideAnswer(base, DEFAULT_ANSWER_RULES)).toEqual({ answer: false, reason: "not-addressed" });
  expect(decideAnswer({ ...base, mentionsBot: true }, DEFAULT_ANSWER_RULES).reason).toBe("mention");
  expect(decideAnswer({ ...base, repliesToBot: true }, DEFAULT_ANSWER_RULES).reason).toBe("reply");
  expect(decideAnswer({ ...base, inBotThread: true }, DEFAULT_ANSWER_RULES).reason).toBe("thread");
  expect(decideAnswer({ ...base, chatType: "channel" }, { ...DEFAULT_ANSWER_RULES, groupReply: "all" }).reason).toBe("all");
});

it("allowlists refuse other users and chats, DMs included", () => {
  const rules = { ...DEFAULT_ANSWER_RULES, allowedUsers: ["1"], allowedChats: ["-5"] };
  expect(decideAnswer({ ...base, chatType: "dm", userId: "2", chatId: "2" }, rules).reason).toBe("user-not-allowed");
  expect(decideAnswer({ ...base, userId: "1", chatId: "-6", mentionsBot: true }, rules).reason).toBe("chat-not-allowed");
  expect(decideAnswer({ ...base, userId: "1", chatId: "-5", mentionsBot: true }, rules).answer).toBe(true);
});

it("SeenMessageIds reports repeats and forgets the oldest beyond its size", () => {
  const seen = new SeenMessageIds(2);
  expect(seen.add("a")).toBe(true);
  expect(seen.add("a")).toBe(false);
  seen.add("b");
  seen.add("c");
  expect(seen.has("a")).toBe(false);
  expect(seen.add("a")).toBe(true);
  seen.delete("a");
  expect(seen.has("a")).toBe(false);
});

it("TypingIndicator sends at once, renews until stopped, shares one timer per chat, and survives send errors", async () => {
  const sends: string[] = [];
  const errors: unknown[] = [];
  let fail = true;
  const typing = new TypingIndicator({
    intervalMs: 20,
    send: async (chat) => {
      sends.push(chat);
      if (fail) {
        fail = false;
        throw new Error("boom");
      }
    },
    onError: (error) => errors.push(error),
  });
  typing.start("c1");
  typing.start("c1");
  expect(sends).toEqual(["c1"]);
  await waitFor(() => sends.length >= 3, { what: "two renewals", timeoutMs: 2_000 });
  expect(errors).toHaveLength(1);
  expect(typing.active).toEqual(["c1"]);
  typing.stop("c1");
  const count = sends.length;
  // The barrier: another chat's timer, started now with the same interval, renews twice; a
  // timer of c1 still running would have fired before its second renewal.
  typing.start("c2");
  await waitFor(() => sends.filter((c) => c === "c2").length >= 3, { what: "two renewals in c2", timeoutMs: 2_000 });
  expect(sends.slice(0, count).every((c) => c === "c1")).toBe(true);
  expect(sends.slice(count).every((c) => c === "c2")).toBe(true);
  typing.stop("c2");
  expect(typing.active).toEqual([]);
});

it("redaction removes secrets (plain and URL-encoded) from messages, stacks and causes", () => {
  const token = "123456:ABC-def_ghi";
  expect(redactText(`GET /bot${token}/getMe and /bot${encodeURIComponent(token)}/x`, [token])).toBe(`GET /bot${REDACTED}/getMe and /bot${REDACTED}/x`);
  const cause = new Error(`request to http://h/bot${token}/sendMessage failed`);
  const error = Object.assign(new Error(`wrapped ${token}`, { cause }), { error_code: 400, description: `bad ${token}` });
  const safe = redactError(error, [token]);
  const all = `${safe.message} ${safe.stack} ${(safe.cause as Error).message} ${(safe.cause as Error).stack} ${String((safe as unknown as { description: string }).description)}`;
  expect(all).not.toContain(token);
  expect((safe as unknown as { error_code: number }).error_code).toBe(400);
});

it("loadSdk names the package to install when it is missing", async () => {
  const missing = Object.assign(new Error("Cannot find package"), { code: "ERR_MODULE_NOT_FOUND" });
  const error = await loadSdk("some-sdk", "example", () => Promise.reject(missing)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidInputError);
  expect((error as Error).message).toContain("npm install some-sdk");
  expect(await loadSdk("x", "example", async () => 42)).toBe(42);
});

it("connectInBackground: resolves with the bring-up, fails with it in time, else lets it go on and reports a later failure", async () => {
  const calls: string[] = [];
  const options = {
    timeoutMs: 60_000,
    onTimeout: () => calls.push("timeout"),
    onBackgroundFailure: (e: unknown) => calls.push(`failed: ${(e as Error).message}`),
  };
  await connectInBackground(Promise.resolve(), options);
  await expect(connectInBackground(Promise.reject(new Error("refused token")), options)).rejects.toThrow("refused token");
  expect(calls).toEqual([]);

  let fail!: (error: Error) => void;
  const slow = new Promise<void>((_resolve, reject) => (fail = reject));
  await connectInBackground(slow, { ...options, timeoutMs: 1 });
  expect(calls).toEqual(["timeout"]);
  fail(new Error("unreachable"));
  await slow.catch(() => {});
  expect(calls).toEqual(["timeout", "failed: unreachable"]);
});

it("abortableSleep ends when its signal aborts, at once when it already has", async () => {
  // Which settles first: the hour-long sleep, or a zero-delay timer started with it.
  const first = (sleep: Promise<void>): Promise<string> =>
    Promise.race([sleep.then(() => "sleep"), new Promise<string>((resolve) => setTimeout(() => resolve("timer"), 0))]);
  const stop = new AbortController();
  const sleeping = abortableSleep(3_600_000, stop.signal);
  stop.abort();
  expect(await first(sleeping)).toBe("sleep");
  expect(await first(abortableSleep(3_600_000, stop.signal))).toBe("sleep");
  // Without an abort, the sleep lasts: the zero-delay timer wins; a short one then ends by itself.
  const idle = new AbortController();
  expect(await first(abortableSleep(3_600_000, idle.signal))).toBe("timer");
  idle.abort();
  await expect(abortableSleep(1)).resolves.toBeUndefined();
});

it("lists and tables as text lines: numbered from the list's start, ☐/☑ for tasks, each platform's bullet, indent and header style", () => {
  const md = "3. c\n4. d\n   more\n\n- [ ] todo\n- [x] done\n\n| a | b |\n|---|---|\n| 1 | 2 |";
  expect(markdownToSlackMrkdwn(md)).toBe("3. c\n4. d\n   more\n\n• ☐ todo\n• ☑ done\n\n*a | b*\n1 | 2");
  expect(markdownToWhatsApp(md)).toBe("3. c\n4. d\n   more\n\n- ☐ todo\n- ☑ done\n\n*a | b*\n1 | 2");
  expect(markdownToTelegramHtml(md)).toBe("3. c\n4. d\n  more\n\n• ☐ todo\n• ☑ done\n\na | b\n1 | 2");
  expect(wrapMarkers("*", " bold ")).toBe(" *bold* ");
  expect(wrapMarkers("_", "  ")).toBe("  ");
});

it("mediaKindOf: image, audio or video by the MIME type, file for anything else or none", () => {
  expect(["image/png", "audio/ogg", "video/mp4", "application/pdf", "imagery/x", null, undefined].map(mediaKindOf)).toEqual([
    "image",
    "audio",
    "video",
    "file",
    "file",
    "file",
    "file",
  ]);
});
