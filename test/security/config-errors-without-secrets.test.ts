/**
 * Threat: a config error echoes a secret. `threadline serve` and `threadline config check` print
 * every problem of the config file, with the rejected value; a short API key, api-server token,
 * webhook secret or provider key that is rejected must not be printed (the log of a service, a
 * CI job or a pasted error would then hold it). Secrets are shown by their length only.
 */
import { describe, expect, it } from "vitest";
import { configFileProblems } from "../../src/serve/internal.js";

const SECRET = "sh0rt-s3cret";
/** Operator tokens need 8 characters: this one is rejected too. */
const SHORT_TOKEN = "s3cr3t7";

/** Every problem line of a config document, joined. */
function problemsOf(doc: Record<string, unknown>): string {
  return configFileProblems(doc, { env: {} }).join("\n");
}

describe("config errors never print a rejected secret", () => {
  it.each([
    ["an API key too short", { api: { keys: [{ key: SECRET }] } }, "api.keys.0.key"],
    ["an API key written as a plain string", { api: { keys: [SECRET] } }, "api.keys.0"],
    ["an api-server token too short", { adapters: { apiServer: { tokens: [SHORT_TOKEN] } } }, "adapters.apiServer.tokens.0"],
    ["a bound api-server token too short", { adapters: { apiServer: { tokens: [{ token: SECRET, userId: "alice" }] } } }, "adapters.apiServer.tokens.0.token"],
    ["a webhook secret too short", { adapters: { webhook: { enabled: true, secret: SECRET } } }, "adapters.webhook.secret"],
    ["a provider key of the wrong type", { provider: { apiKey: [SECRET] } }, "provider.apiKey"],
  ])("%s", (_what, doc, field) => {
    const text = problemsOf(doc);
    expect(text).toContain(field);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SHORT_TOKEN);
  });

  it("still shows a value that is not a secret", () => {
    expect(problemsOf({ gateway: { port: "eighty" } })).toContain('"eighty"');
  });
});
