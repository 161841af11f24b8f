/** The one back-off of the chat adapters (src/adapters/chat/backoff.ts). No timed assertions: pauses are a few ms. */
import { expect, it } from "vitest";
import { Backoff, abortableSleep, parseRetryAfter, retry } from "../../../src/adapters/chat/index.js";

it("grows by the factor up to the cap, starts again after reset, and counts its pauses", () => {
  const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
  expect([1, 2, 3, 4, 5, 6, 7, 8].map(() => backoff.next())).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
  expect(backoff.attempts).toBe(8);
  backoff.reset();
  expect(backoff.attempts).toBe(0);
  expect(backoff.next()).toBe(1_000);
  expect(new Backoff({ initialMs: 100, maxMs: 1_000, factor: 3 }).next()).toBe(100);
});

it("jitter stays within its range: full between 0 and the delay, equal between half and the delay", () => {
  const full = new Backoff({ initialMs: 1_000, maxMs: 1_000, jitter: "full" });
  const equal = new Backoff({ initialMs: 1_000, maxMs: 1_000, jitter: "equal" });
  for (let i = 0; i < 50; i++) {
    const f = full.next();
    const e = equal.next();
    expect(f).toBeGreaterThanOrEqual(0);
    expect(f).toBeLessThanOrEqual(1_000);
    expect(e).toBeGreaterThanOrEqual(500);
    expect(e).toBeLessThanOrEqual(1_000);
  }
});

it("Retry-After wins (seconds or an HTTP date), capped at maxRetryAfterMs; an unreadable one is ignored", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  expect(parseRetryAfter("2", now)).toBe(2_000);
  expect(parseRetryAfter(1.5, now)).toBe(1_500);
  expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30_000);
  expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
  expect([parseRetryAfter("soon", now), parseRetryAfter(null), parseRetryAfter(undefined), parseRetryAfter("")]).toEqual([null, null, null, null]);
  const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000, maxRetryAfterMs: 300_000 });
  expect(backoff.next("120")).toBe(120_000);
  expect(backoff.next("9999")).toBe(300_000);
  expect(backoff.next("later")).toBe(4_000);
});

it("a pause ends when its signal aborts, at once when it already has; sleep returns the pause taken", async () => {
  const stop = new AbortController();
  const sleeping = abortableSleep(3_600_000, stop.signal);
  stop.abort();
  await sleeping;
  await abortableSleep(3_600_000, stop.signal);
  const backoff = new Backoff({ initialMs: 3_600_000, maxMs: 3_600_000 });
  expect(await backoff.sleep(stop.signal)).toBe(3_600_000);
  expect(await new Backoff({ initialMs: 1, maxMs: 1 }).sleep()).toBe(1);
});

it("retry: tries until success, stops at once on a failure that is not retryable, gives up after `attempts`, and tells each retry", async () => {
  let calls = 0;
  const retries: Array<{ attempt: number; delayMs: number }> = [];
  const value = await retry(
    async (attempt) => {
      calls += 1;
      if (attempt < 3) throw Object.assign(new Error("busy"), { retryAfter: "0" });
      return "sent";
    },
    {
      attempts: 5,
      isRetryable: () => true,
      retryAfter: (e) => (e as { retryAfter: string }).retryAfter,
      backoff: { initialMs: 1, maxMs: 2 },
      onRetry: ({ attempt, delayMs }) => retries.push({ attempt, delayMs }),
    },
  );
  expect(value).toBe("sent");
  expect(calls).toBe(3);
  expect(retries).toEqual([
    { attempt: 1, delayMs: 0 },
    { attempt: 2, delayMs: 0 },
  ]);

  let tried = 0;
  const fatal = async (): Promise<never> => {
    tried += 1;
    throw new Error("refused");
  };
  await expect(retry(fatal, { attempts: 5, isRetryable: () => false, backoff: { initialMs: 1, maxMs: 1 } })).rejects.toThrow("refused");
  expect(tried).toBe(1);
  await expect(retry(fatal, { attempts: 3, isRetryable: () => true, backoff: { initialMs: 1, maxMs: 1 } })).rejects.toThrow("refused");
  expect(tried).toBe(4);
});

it("retry: an abort ends the pause and throws the last failure", async () => {
  const stop = new AbortController();
  let tried = 0;
  const failing = retry(
    async () => {
      tried += 1;
      throw new Error("down");
    },
    { attempts: 10, isRetryable: () => true, backoff: { initialMs: 3_600_000, maxMs: 3_600_000 }, signal: stop.signal, onRetry: () => stop.abort() },
  );
  await expect(failing).rejects.toThrow("down");
  expect(tried).toBe(1);
});
