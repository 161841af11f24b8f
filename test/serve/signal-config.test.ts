/**
 * `adapters.signal` in the serve config: defaults, what is missing named by
 * `chatAdapterProblems` with what to do, and malformed values refused with the expected form.
 */
import { describe, expect, it } from "vitest";
import { chatAdapterProblems, configFileDocument, parseServeConfig } from "../../src/serve/index.js";

describe("adapters.signal", () => {
  it("absent or disabled → null; defaults: websocket mode, read receipts on; access lists as strings; a trailing slash dropped", () => {
    expect(parseServeConfig({}).adapters.signal).toBeNull();
    expect(
      parseServeConfig({ adapters: { signal: { enabled: false, apiUrl: "http://127.0.0.1:8080", number: "+4915100000000" } } }).adapters.signal,
    ).toBeNull();
    const config = parseServeConfig({
      adapters: {
        signal: { apiUrl: "http://127.0.0.1:8080/", number: "+4915100000000", allowedUsers: ["+4915100000001", "3f6c2a10-9b7e-4d21-a5c4-1e8f0b7d2a01"] },
      },
    });
    expect(config.adapters.signal).toEqual({
      apiUrl: "http://127.0.0.1:8080",
      number: "+4915100000000",
      mode: "websocket",
      readReceipts: true,
      access: "allowlist",
      accessDefaulted: false,
      admins: [],
      allowedUsers: ["+4915100000001", "3f6c2a10-9b7e-4d21-a5c4-1e8f0b7d2a01"],
      allowedChats: [],
      groupReply: "mention",
      answerBots: false,
    });
    expect(chatAdapterProblems(config.adapters)).toEqual([]);
    const polling = parseServeConfig({
      adapters: { signal: { apiUrl: "https://signal.internal", number: "+15551234567", mode: "polling", readReceipts: false, groupReply: "all" } },
    });
    expect(polling.adapters.signal).toMatchObject({ mode: "polling", readReceipts: false, groupReply: "all" });
    // The file form round-trips.
    expect(parseServeConfig(configFileDocument(polling)).adapters.signal).toEqual(polling.adapters.signal);
  });

  it("a missing apiUrl or number is named with what to do", () => {
    const missing = parseServeConfig({ adapters: { signal: {} } });
    expect(chatAdapterProblems(missing.adapters)).toEqual([
      expect.stringMatching(
        /^adapters\.signal\.apiUrl: missing: set it to the URL of your signal-cli REST API \(bbernhard\/signal-cli-rest-api\), such as http:\/\/127\.0\.0\.1:8080$/u,
      ),
      expect.stringMatching(
        /^adapters\.signal\.number: missing: set it to the bot's Signal number as registered or linked in the REST API, in E\.164 form such as \+4915100000000$/u,
      ),
    ]);
    for (const problem of chatAdapterProblems(missing.adapters)) expect(problem).not.toContain("; ");
  });

  it("malformed values are refused with the expected form", () => {
    for (const number of ["4915100000000", "+49 151 00000000", "+0123456789", "+123", "+49151000000001234"]) {
      expect(() => parseServeConfig({ adapters: { signal: { apiUrl: "http://127.0.0.1:8080", number } } }), number).toThrow(
        /adapters\.signal\.number: must be the bot's registered Signal number in E\.164 form: '\+', country code and number, no spaces, in quotes \(such as "\+4915100000000"; unquoted, YAML reads it as a number\)/u,
      );
    }
    // Unquoted in YAML, +4915100000000 arrives as a number.
    expect(() => parseServeConfig({ adapters: { signal: { apiUrl: "http://127.0.0.1:8080", number: 4915100000000 } } })).toThrow(
      /in quotes .* \(got 4915100000000\)/u,
    );
    expect(() => parseServeConfig({ adapters: { signal: { apiUrl: "127.0.0.1:8080" } } })).toThrow(
      /adapters\.signal\.apiUrl: must be the http\(s\) URL of the signal-cli REST API/u,
    );
    expect(() => parseServeConfig({ adapters: { signal: { apiUrl: "ws://127.0.0.1:8080" } } })).toThrow(/adapters\.signal\.apiUrl: must be the http\(s\) URL/u);
    expect(() => parseServeConfig({ adapters: { signal: { mode: "json-rpc" } } })).toThrow(
      /adapters\.signal\.mode: must be websocket \(the REST API runs with MODE=json-rpc, the default\) or polling/u,
    );
    expect(() => parseServeConfig({ adapters: { signal: { token: "x" } } })).toThrow(
      /adapters\.signal: unknown key\(s\) "token"; allowed: .*apiUrl.*number.*mode.*readReceipts/u,
    );
  });
});
