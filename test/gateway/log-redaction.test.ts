/** What the gateway's log may hold: phone-number session keys as hashes, URLs as origins, model failures as refs. */
import { expect, it } from "vitest";
import { modelFailureText } from "../../src/gateway/chat-safe-errors.js";
import { redactLogFields, redactingLogger, urlOriginForLog } from "../../src/gateway/log-redaction.js";
import { hashIdentifier } from "../../src/gateway/session-context.js";

it("session keys of WhatsApp and Signal become keyHash / sessionKeyHash; other keys and fields stay", () => {
  const whatsapp = "agent:main:whatsapp:dm:16505551234";
  expect(redactLogFields({ key: whatsapp, kind: "reply" })).toEqual({ kind: "reply", keyHash: hashIdentifier(whatsapp) });
  const signal = "agent:main:signal:group:group.abc:+4915100000001";
  expect(redactLogFields({ sessionKey: signal })).toEqual({ sessionKeyHash: hashIdentifier(signal) });
  const telegram = { key: "agent:main:telegram:dm:111111", platform: "telegram" };
  expect(redactLogFields(telegram)).toBe(telegram);
  const lines: object[] = [];
  const log = redactingLogger({ info: (o) => lines.push(o), warn: (o) => lines.push(o), error: (o) => lines.push(o) });
  log.warn({ key: whatsapp }, "x");
  expect(JSON.stringify(lines)).not.toContain("16505551234");
});

it("a URL is logged as its origin", () => {
  expect(urlOriginForLog("https://hooks.example.com/replies/s3cret?key=abc")).toBe("https://hooks.example.com");
  expect(urlOriginForLog("http://127.0.0.1:9000/x")).toBe("http://127.0.0.1:9000");
  expect(urlOriginForLog(null)).toBeNull();
  expect(urlOriginForLog("not a url")).toBe("(not a URL)");
});

it("a model failure is told by ref on chat platforms, with its detail on the terminal", () => {
  const error = new Error("quota exceeded for org-x");
  expect(modelFailureText("telegram", "0a1b2c3d", error)).toBe("The model could not answer (ref 0a1b2c3d).");
  expect(modelFailureText("api", "0a1b2c3d", error)).toBe("The model could not answer (ref 0a1b2c3d).");
  expect(modelFailureText("cli", "0a1b2c3d", error)).toBe("The model could not answer: quota exceeded for org-x");
});
