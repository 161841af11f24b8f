/** The `compression` settings: hermes-agent's defaults, the threshold rule, clear errors. */
import { describe, expect, it } from "vitest";
import { DEFAULT_COMPRESSION_SETTINGS, effectiveThreshold, resolveCompressionSettings, thresholdTokens } from "../../src/context/index.js";
import { InvalidInputError } from "../../src/store/errors.js";

describe("compression settings", () => {
  it("defaults are hermes-agent's; the threshold is 0.5, or 0.75 for windows under 512K tokens, unless set", () => {
    expect(resolveCompressionSettings({})).toEqual({
      enabled: true,
      threshold: null,
      protectFirstN: 3,
      protectLastN: 20,
      targetRatio: 0.2,
      abortOnSummaryFailure: false,
      hardMessageLimit: 5000,
      model: null,
      notify: true,
    });
    expect(effectiveThreshold(DEFAULT_COMPRESSION_SETTINGS, 128_000)).toBe(0.75);
    expect(effectiveThreshold(DEFAULT_COMPRESSION_SETTINGS, 511_999)).toBe(0.75);
    expect(effectiveThreshold(DEFAULT_COMPRESSION_SETTINGS, 512_000)).toBe(0.5);
    expect(effectiveThreshold({ threshold: 0.6 }, 128_000)).toBe(0.6);
    expect(thresholdTokens({ threshold: null }, 8000)).toBe(6000);
    expect(resolveCompressionSettings({ model: "  gpt-4o-mini ", threshold: 1 })).toMatchObject({ model: "gpt-4o-mini", threshold: 1 });
  });

  it("refuses bad values naming the key, what it must be and what was given", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ threshold: 0 }, /^compression\.threshold: must be a share of the context window above 0 and at most 1.*\(got 0\)$/u],
      [{ targetRatio: 1 }, /^compression\.targetRatio: must be a share of the threshold above 0 and below 1, such as 0\.2 \(got 1\)$/u],
      [{ protectFirstN: 1.5 }, /^compression\.protectFirstN: must be a whole number of messages from 0 to 1,000 \(got 1\.5\)$/u],
      [{ hardMessageLimit: 5 }, /^compression\.hardMessageLimit: must be a whole number of messages from 10 to 1,000,000 \(got 5\)$/u],
      [{ enabled: "yes" }, /^compression\.enabled: must be true or false \(got "yes"\)$/u],
      [{ model: "" }, /^compression\.model: must be a model name/u],
      [{ protect_last_n: 5 }, /^compression: unknown key "protect_last_n"; allowed: enabled, threshold, protectFirstN/u],
      [[1], /^compression: must be a mapping/u],
    ];
    for (const [raw, message] of cases) {
      expect(() => resolveCompressionSettings(raw)).toThrow(InvalidInputError);
      expect(() => resolveCompressionSettings(raw)).toThrow(message);
    }
  });
});
