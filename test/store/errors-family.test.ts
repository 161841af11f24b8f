/**
 * The error family: one list of codes, and each code mapped once to an HTTP status
 * (`ERROR_STATUS`) and once to an exit code (`ERROR_EXIT_CODE`). Errors of every part of
 * Threadline (store, CLI, HTTP layer, agents, gateway, adapters) are `ThreadlineError`s whose
 * status and exit code follow from their code alone, and docs/errors.md lists every code
 * with the same status and exit code as the tables.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SignalApiError } from "../../src/adapters/signal/index.js";
import { WhatsAppApiError } from "../../src/adapters/whatsapp/index.js";
import { AgentError, AgentInterruptedError } from "../../src/agents/index.js";
import { CliError, ERROR_EXIT_CODE, EXIT, exitCodeOf } from "../../src/cli/cli-context.js";
import { HandoffError } from "../../src/gateway/index.js";
import { ERROR_STATUS, HttpError, toErrorReply } from "../../src/http-api/index.js";
import {
  AmbiguousIdError,
  ConflictError,
  DatabaseCorruptError,
  InternalError,
  InterruptedError,
  InvalidInputError,
  LeaseLostError,
  NotFoundError,
  PlatformError,
  StoreBusyError,
  StoreClosedError,
  StoreError,
  THREADLINE_ERROR_CODES,
  ThreadlineError,
} from "../../src/store/index.js";

/** The codes released before the family was unified: they must never change. */
const STABLE_CODES = [
  "TL_ERR_INVALID_INPUT",
  "TL_ERR_NOT_FOUND",
  "TL_ERR_CONFLICT",
  "TL_ERR_STORE_BUSY",
  "TL_ERR_STORE_CLOSED",
  "TL_ERR_SCHEMA_VERSION",
  "TL_ERR_LEASE_LOST",
  "TL_ERR_AMBIGUOUS_ID",
  "TL_ERR_CORRUPT",
  "TL_ERR_DRIVER_MISSING",
  "TL_ERR_STORE",
  "TL_ERR_UNAUTHORIZED",
  "TL_ERR_FORBIDDEN",
  "TL_ERR_BAD_REQUEST",
  "TL_ERR_PAYLOAD_TOO_LARGE",
  "TL_ERR_UNSUPPORTED_MEDIA_TYPE",
  "TL_ERR_UNAVAILABLE",
  "TL_ERR_INTERNAL",
];

const sorted = (values: Iterable<string>): string[] => [...values].sort();

describe("one list of codes, one status and one exit code each", () => {
  it("every code is TL_ERR_*, listed once, and the released codes are all still there", () => {
    for (const code of THREADLINE_ERROR_CODES) expect(code).toMatch(/^TL_ERR_[A-Z]+(?:_[A-Z]+)*$/u);
    expect(new Set(THREADLINE_ERROR_CODES).size).toBe(THREADLINE_ERROR_CODES.length);
    expect(THREADLINE_ERROR_CODES).toEqual(expect.arrayContaining(STABLE_CODES));
  });

  it("ERROR_STATUS and ERROR_EXIT_CODE cover exactly the codes, with valid values", () => {
    expect(sorted(Object.keys(ERROR_STATUS))).toEqual(sorted(THREADLINE_ERROR_CODES));
    expect(sorted(Object.keys(ERROR_EXIT_CODE))).toEqual(sorted(THREADLINE_ERROR_CODES));
    for (const code of THREADLINE_ERROR_CODES) {
      expect(ERROR_STATUS[code], code).toBeGreaterThanOrEqual(400);
      expect(ERROR_STATUS[code], code).toBeLessThan(600);
      expect(Object.values(EXIT), code).toContain(ERROR_EXIT_CODE[code]);
      expect(ERROR_EXIT_CODE[code], code).not.toBe(EXIT.ok);
    }
  });

  it("the exit codes the command line has always used stay as they were", () => {
    expect(ERROR_EXIT_CODE.TL_ERR_INVALID_INPUT).toBe(2);
    expect(ERROR_EXIT_CODE.TL_ERR_USAGE).toBe(2);
    expect(ERROR_EXIT_CODE.TL_ERR_NOT_FOUND).toBe(3);
    expect(ERROR_EXIT_CODE.TL_ERR_CONFLICT).toBe(4);
    expect(ERROR_EXIT_CODE.TL_ERR_CONFIRMATION_REQUIRED).toBe(4);
    for (const code of [
      "TL_ERR_STORE",
      "TL_ERR_STORE_BUSY",
      "TL_ERR_CORRUPT",
      "TL_ERR_DRIVER_MISSING",
      "TL_ERR_SCHEMA_VERSION",
      "TL_ERR_LEASE_LOST",
    ] as const) {
      expect(ERROR_EXIT_CODE[code], code).toBe(1);
    }
    expect(exitCodeOf(new Error("not ours"))).toBe(EXIT.failure);
    expect(exitCodeOf("a string")).toBe(EXIT.failure);
  });
});

describe("errors from every part map by their code alone", () => {
  const handoff = new HandoffError("timeout", "No running gateway took the handoff to telegram within 1 s.", "h1");
  const cases: Array<{ error: ThreadlineError; name: string; code: string; status: number; exit: number }> = [
    { error: new InvalidInputError("title is too long", { field: "title" }), name: "InvalidInputError", code: "TL_ERR_INVALID_INPUT", status: 422, exit: 2 },
    { error: new NotFoundError("No session 'x'."), name: "NotFoundError", code: "TL_ERR_NOT_FOUND", status: 404, exit: 3 },
    { error: new ConflictError("Title held.", { sessionId: "s1" }), name: "ConflictError", code: "TL_ERR_CONFLICT", status: 409, exit: 4 },
    { error: new LeaseLostError("k", 1, 2), name: "LeaseLostError", code: "TL_ERR_LEASE_LOST", status: 409, exit: 1 },
    { error: new CliError("TL_ERR_USAGE", "Use either --continue or --resume, not both."), name: "CliError", code: "TL_ERR_USAGE", status: 400, exit: 2 },
    { error: new CliError("TL_ERR_NOT_FOUND", "No such file: x.jsonl"), name: "CliError", code: "TL_ERR_NOT_FOUND", status: 404, exit: 3 },
    { error: new CliError("TL_ERR_CONFIRMATION_REQUIRED", "Pass --yes."), name: "CliError", code: "TL_ERR_CONFIRMATION_REQUIRED", status: 428, exit: 4 },
    { error: new CliError("TL_ERR_INCOMPLETE", "1 bad line was not imported"), name: "CliError", code: "TL_ERR_INCOMPLETE", status: 422, exit: 1 },
    { error: new HttpError("TL_ERR_FORBIDDEN", "The API key is not valid."), name: "HttpError", code: "TL_ERR_FORBIDDEN", status: 403, exit: 1 },
    { error: new AgentError("The model provider sent no reply.", { status: 504 }), name: "AgentError", code: "TL_ERR_AGENT", status: 502, exit: 1 },
    {
      error: new AgentInterruptedError([{ role: "assistant", content: "half" }]),
      name: "AgentInterruptedError",
      code: "TL_ERR_INTERRUPTED",
      status: 409,
      exit: 1,
    },
    { error: handoff, name: "HandoffError", code: "TL_ERR_HANDOFF", status: 409, exit: 1 },
    {
      error: new SignalApiError("the signal-cli REST API answered 400", 400, "bad group"),
      name: "SignalApiError",
      code: "TL_ERR_PLATFORM",
      status: 502,
      exit: 1,
    },
    {
      error: new WhatsAppApiError("whatsapp: refused", { status: 400, graphCode: 131047 }),
      name: "WhatsAppApiError",
      code: "TL_ERR_PLATFORM",
      status: 502,
      exit: 1,
    },
    { error: new ThreadlineError("TL_ERR_TIMEOUT", "took too long"), name: "ThreadlineError", code: "TL_ERR_TIMEOUT", status: 504, exit: 1 },
  ];

  it.each(cases)("$name ($code) → HTTP $status, exit $exit", ({ error, name, code, status, exit }) => {
    expect(error).toBeInstanceOf(ThreadlineError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(ERROR_STATUS[error.code]).toBe(status);
    expect(exitCodeOf(error)).toBe(exit);
    const reply = toErrorReply(error, "req-1");
    expect(reply.status).toBe(status);
    expect(reply.body.error.code).toBe(code);
    expect(reply.body.error.message).toBe(error.message);
    expect(reply.internal).toBe(false);
  });

  it("a 500 never shows its message: storage failures, invariants and foreign errors become TL_ERR_INTERNAL", () => {
    for (const error of [
      new StoreError("disk full at /secret/path"),
      new InternalError("a row vanished"),
      new CliError("TL_ERR_IO", "Cannot read /x"),
      new Error("boom"),
    ]) {
      const reply = toErrorReply(error, "req-2");
      expect(reply.status).toBe(500);
      expect(reply.internal).toBe(true);
      expect(reply.body.error).toEqual({ code: "TL_ERR_INTERNAL", message: "internal error", details: { requestId: "req-2" } });
    }
    const corrupt = toErrorReply(new DatabaseCorruptError("/data/state.db", "damaged"), "req-3");
    expect(corrupt.status).toBe(ERROR_STATUS.TL_ERR_CORRUPT);
    expect(corrupt.body.error.code).toBe("TL_ERR_CORRUPT");
    expect(JSON.stringify(corrupt.body)).not.toContain("/data/state.db");
  });

  it("the replies with a message of their own keep the status of the code they come from", () => {
    const busy = toErrorReply(new StoreBusyError("locked by pid 42 at /data/state.db"), "r");
    expect(busy.status).toBe(ERROR_STATUS.TL_ERR_STORE_BUSY);
    expect(busy.body.error).toEqual({ code: "TL_ERR_STORE_BUSY", message: "The database is busy; retry shortly." });
    expect(busy.headers).toEqual({ "retry-after": "1" });
    expect(exitCodeOf(new StoreBusyError("busy"))).toBe(1);
    const closed = toErrorReply(new StoreClosedError(), "r");
    expect(closed.status).toBe(ERROR_STATUS.TL_ERR_STORE_CLOSED);
    expect(closed.body.error.code).toBe("TL_ERR_UNAVAILABLE");
    const ambiguous = toErrorReply(new AmbiguousIdError("ab", [{ id: "ab1", kind: "agent", name: "a", updatedAt: 1 }], false), "r");
    expect(ambiguous.status).toBe(ERROR_STATUS.TL_ERR_AMBIGUOUS_ID);
    expect(ambiguous.body.error.details).toEqual({ candidates: [{ id: "ab1", kind: "agent", name: "a", updatedAt: 1 }], more: false });
  });

  it("extra fields survive: details, headers, field, sessionId, reason, partial, status, platformCode", () => {
    const http = new HttpError("TL_ERR_UNAUTHORIZED", "An API key is required.", { headers: { "www-authenticate": "Bearer" }, details: { hint: 1 } });
    expect(toErrorReply(http, "r").headers).toEqual({ "www-authenticate": "Bearer" });
    expect(toErrorReply(http, "r").body.error.details).toEqual({ hint: 1 });
    expect(toErrorReply(new InvalidInputError("bad", { field: "title" }), "r").body.error.details).toEqual({ field: "title" });
    expect(toErrorReply(new ConflictError("held", { sessionId: "s1" }), "r").body.error.details).toEqual({ sessionId: "s1" });
    expect(handoff.reason).toBe("timeout");
    expect(handoff.handoffId).toBe("h1");
    const interrupted = new AgentInterruptedError([{ role: "assistant", content: "half" }], { inputTokens: 3 });
    expect(interrupted).toBeInstanceOf(InterruptedError);
    expect(interrupted.partial).toEqual([{ role: "assistant", content: "half" }]);
    expect(interrupted.usage).toEqual({ inputTokens: 3 });
    expect(interrupted.message).toBe("The agent's turn was interrupted.");
    const whatsapp = new WhatsAppApiError("whatsapp: refused", { status: 401, graphCode: 190 });
    expect(whatsapp).toBeInstanceOf(PlatformError);
    expect(whatsapp.platform).toBe("whatsapp");
    expect(whatsapp.platformCode).toBe(190);
    expect(whatsapp.isAuthError).toBe(true);
    const signal = new SignalApiError("unreachable", 0, null, true);
    expect([signal.platform, signal.status, signal.unreachable]).toEqual(["signal", 0, true]);
    expect(new AgentError("x", { status: 429, providerMessage: "slow down" })).toMatchObject({ status: 429, providerMessage: "slow down" });
  });
});

describe("docs/errors.md", () => {
  it("lists every code once in its table, with the status and exit code of the tables", () => {
    const text = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    const section = text.slice(text.indexOf("## Every code"), text.indexOf("\n## ", text.indexOf("## Every code") + 1));
    const rows = new Map<string, { status: string; exit: string }>();
    for (const line of section.split("\n")) {
      const cells = line.split("|").map((c) => c.trim());
      const code = /^`(TL_ERR_[A-Z_]+)`$/u.exec(cells[1] ?? "")?.[1];
      if (code === undefined) continue;
      expect(rows.has(code), `${code} is listed twice`).toBe(false);
      rows.set(code, { status: cells[3]!, exit: cells[4]! });
      expect(cells[5], `${code} has a meaning`).not.toBe("");
      expect(cells[6], `${code} says what to do`).not.toBe("");
    }
    expect(sorted(rows.keys())).toEqual(sorted(THREADLINE_ERROR_CODES));
    for (const code of THREADLINE_ERROR_CODES) {
      const row = rows.get(code)!;
      expect(row.status.split(" ")[0], `${code}'s status`).toBe(String(ERROR_STATUS[code]));
      expect(row.exit, `${code}'s exit code`).toBe(String(ERROR_EXIT_CODE[code]));
    }
  });
});
