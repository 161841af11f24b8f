import { describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/gateway/clock.js";
import { InvalidInputError } from "../../src/store/errors.js";

describe("clock", () => {
  it("systemClock reads epoch seconds from Date.now()", () => {
    const before = Date.now() / 1000;
    const now = systemClock.now();
    const after = Date.now() / 1000;
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(after);
  });

  it("ManualClock only moves when told to", () => {
    const clock = new ManualClock(1_000.5);
    expect(clock.now()).toBe(1_000.5);
    expect(clock.advance(90)).toBe(1_090.5);
    expect(clock.now()).toBe(1_090.5);
    clock.set(10);
    expect(clock.now()).toBe(10);
    clock.advance(0);
    expect(clock.now()).toBe(10);
  });

  it("rejects non-finite times and negative advances", () => {
    expect(() => new ManualClock(Number.NaN)).toThrow(InvalidInputError);
    const clock = new ManualClock(0);
    expect(() => clock.set(Infinity)).toThrow(InvalidInputError);
    expect(() => clock.advance(-1)).toThrow(/use set\(\) to move the clock backwards/);
    expect(clock.now()).toBe(0);
  });
});
