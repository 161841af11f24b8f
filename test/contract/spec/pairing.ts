/**
 * Contract: DM pairing (hermes-agent's rules) — codes of 8 characters from the alphabet,
 * expiry after 1 hour, at most 3 pending per platform, one request per person per 10
 * minutes, a 1-hour lockout after 5 failed approvals, approval removing the person's codes,
 * revocation, listing, and the races two handles (replicas) can run. Time is passed as `now`.
 *
 * @module
 */

import { expect } from "vitest";
import type { PairingCodeOutcome, SessionDB } from "../../../src/store/contract.js";
import { InvalidInputError } from "../../../src/store/errors.js";
import { normalizePairingCode, PAIRING_CODE_ALPHABET } from "../../../src/store/pairing-code.js";
import { contractArea, expectReject } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000_000;
const MIN = 60_000;
const HOUR = 60 * MIN;

/** The code of an outcome that must be a new code. */
function codeOf(outcome: PairingCodeOutcome): string {
  if (outcome.kind !== "code") throw new Error(`expected a code, got ${outcome.kind}`);
  return outcome.code;
}

/** A code on `platform` that is not pending (never a real one). */
function wrongCode(db: SessionDB, platform: string, now: number): Promise<string> {
  return db.listPairing({ platform, now }).then(({ pending }) => {
    const taken = new Set(pending.map((p) => p.code));
    for (const candidate of ["AAAAAAAA", "BBBBBBBB", "CCCCCCCC", "DDDDDDDD"]) if (!taken.has(candidate)) return candidate;
    throw new Error("unreachable");
  });
}

export function pairingTests(init: SessionDBTestInitializer): void {
  contractArea(init, "pairing", (test, { db, anotherHandle }) => {
    test("a stranger gets a code of 8 characters from the alphabet, valid for an hour, listed as pending", async () => {
      const outcome = await db().requestPairingCode("telegram", "42", { userName: "Ann <b>", chatId: "c1", now: T0 });
      expect(outcome.kind).toBe("code");
      const code = codeOf(outcome);
      expect(code).toMatch(new RegExp(`^[${PAIRING_CODE_ALPHABET}]{8}$`));
      expect(code).not.toMatch(/[01OI]/);
      expect(outcome).toEqual({ kind: "code", code, expiresAt: T0 + HOUR });
      expect(await db().isPairingApproved("telegram", "42")).toBe(false);
      expect(await db().listPairing({ now: T0 + 1 })).toEqual({
        pending: [{ platform: "telegram", code, userId: "42", userName: "Ann <b>", chatId: "c1", createdAt: T0, expiresAt: T0 + HOUR }],
        approved: [],
      });
    });

    test("codes differ (cryptographically random): 30 codes over 10 platforms are all distinct", async () => {
      const codes = new Set<string>();
      for (let p = 0; p < 10; p++) {
        for (let u = 0; u < 3; u++) codes.add(codeOf(await db().requestPairingCode(`p${p}`, `u${u}`, { now: T0 })));
      }
      expect(codes.size).toBe(30);
    });

    test("approving a code approves its sender, removes their pending codes, and their next request is already-approved", async () => {
      const first = codeOf(await db().requestPairingCode("telegram", "42", { userName: "Ann", chatId: "c1", now: T0 }));
      const second = codeOf(await db().requestPairingCode("telegram", "42", { userName: "Ann", now: T0 + 11 * MIN }));
      const other = codeOf(await db().requestPairingCode("telegram", "43", { now: T0 }));
      const outcome = await db().approvePairingCode("telegram", second, { by: "cli", now: T0 + 12 * MIN });
      expect(outcome).toEqual({
        kind: "approved",
        approval: { platform: "telegram", userId: "42", userName: "Ann", approvedAt: T0 + 12 * MIN, approvedBy: "cli" },
        request: { platform: "telegram", code: second, userId: "42", userName: "Ann", chatId: null, createdAt: T0 + 11 * MIN, expiresAt: T0 + 71 * MIN },
      });
      expect(await db().isPairingApproved("telegram", "42")).toBe(true);
      expect(await db().isPairingApproved("slack", "42")).toBe(false);
      const listed = await db().listPairing({ now: T0 + 12 * MIN });
      expect(listed.pending.map((p) => p.code)).toEqual([other]);
      expect(listed.approved).toEqual([{ platform: "telegram", userId: "42", userName: "Ann", approvedAt: T0 + 12 * MIN, approvedBy: "cli" }]);
      // The approved code and the person's other code are gone: approving them again fails.
      expect(await db().approvePairingCode("telegram", first, { now: T0 + 13 * MIN })).toEqual({ kind: "unknown-code" });
      expect(await db().approvePairingCode("telegram", second, { now: T0 + 13 * MIN })).toEqual({ kind: "unknown-code" });
      expect(await db().requestPairingCode("telegram", "42", { now: T0 + 13 * MIN })).toEqual({ kind: "already-approved" });
    });

    test("a typed code matches in any case, with spaces and dashes; a code of another platform does not", async () => {
      const code = codeOf(await db().requestPairingCode("discord", "7", { now: T0 }));
      expect(normalizePairingCode(` ${code.slice(0, 4).toLowerCase()}-${code.slice(4)} `)).toBe(code);
      expect(normalizePairingCode("ABCDEFG")).toBeNull();
      expect(normalizePairingCode("ABCDEFG0")).toBeNull();
      expect(normalizePairingCode("ABCDEFGHJ")).toBeNull();
      expect(await db().approvePairingCode("slack", code, { now: T0 })).toEqual({ kind: "unknown-code" });
      const typed = ` ${code.slice(0, 4).toLowerCase()} - ${code.slice(4)}`;
      expect(await db().approvePairingCode("discord", typed, { by: "discord:admin1", now: T0 + 1 })).toMatchObject({
        kind: "approved",
        approval: { platform: "discord", userId: "7", approvedBy: "discord:admin1" },
      });
    });

    test("a code expires an hour after it was made: not listed, not approvable (a failed approval)", async () => {
      const code = codeOf(await db().requestPairingCode("telegram", "42", { now: T0 }));
      expect((await db().listPairing({ now: T0 + HOUR - 1 })).pending).toHaveLength(1);
      expect((await db().listPairing({ now: T0 + HOUR })).pending).toEqual([]);
      expect(await db().approvePairingCode("telegram", code, { now: T0 + HOUR })).toEqual({ kind: "unknown-code" });
      expect(await db().isPairingApproved("telegram", "42")).toBe(false);
      // Still valid one millisecond before it expires (on a fresh code).
      const fresh = codeOf(await db().requestPairingCode("telegram", "43", { now: T0 + HOUR }));
      expect((await db().approvePairingCode("telegram", fresh, { now: T0 + 2 * HOUR - 1 })).kind).toBe("approved");
    });

    test("at most 3 codes pending per platform; an expired one frees its place; other platforms are independent", async () => {
      for (const u of ["1", "2", "3"]) codeOf(await db().requestPairingCode("telegram", u, { now: T0 + Number(u) }));
      expect(await db().requestPairingCode("telegram", "4", { now: T0 + 10 })).toEqual({ kind: "too-many-pending" });
      // Nothing was recorded for the refused sender: once a place frees, they get a code at once.
      codeOf(await db().requestPairingCode("slack", "4", { now: T0 + 10 }));
      expect(await db().requestPairingCode("telegram", "4", { now: T0 + HOUR + 1 })).toMatchObject({ kind: "code" });
      expect((await db().listPairing({ platform: "telegram", now: T0 + HOUR + 1 })).pending.map((p) => p.userId)).toEqual(["2", "3", "4"]);
      expect((await db().listPairing({ platform: "slack", now: T0 + HOUR + 1 })).pending.map((p) => p.userId)).toEqual(["4"]);
    });

    test("one code request per person per 10 minutes, even after the code expired or was approved then revoked", async () => {
      const code = codeOf(await db().requestPairingCode("telegram", "42", { now: T0 }));
      expect(await db().requestPairingCode("telegram", "42", { now: T0 + 10 * MIN - 1 })).toEqual({ kind: "rate-limited" });
      expect(await db().requestPairingCode("slack", "42", { now: T0 + 1 })).toMatchObject({ kind: "code" });
      expect(await db().requestPairingCode("telegram", "43", { now: T0 + 1 })).toMatchObject({ kind: "code" });
      const again = await db().requestPairingCode("telegram", "42", { now: T0 + 10 * MIN });
      expect(codeOf(again)).not.toBe(code);
      // The earlier code stays valid until one of them is approved.
      expect((await db().listPairing({ platform: "telegram", now: T0 + 10 * MIN })).pending.filter((p) => p.userId === "42")).toHaveLength(2);
      // Approved, then revoked within 10 minutes of the last request: rate-limited.
      expect((await db().approvePairingCode("telegram", code, { now: T0 + 11 * MIN })).kind).toBe("approved");
      expect(await db().revokePairing("telegram", "42")).toBe(true);
      expect(await db().requestPairingCode("telegram", "42", { now: T0 + 12 * MIN })).toEqual({ kind: "rate-limited" });
      expect(await db().requestPairingCode("telegram", "42", { now: T0 + 20 * MIN })).toMatchObject({ kind: "code" });
    });

    test("5 failed approvals lock the platform's approvals for an hour, even with the right code; then the count starts again", async () => {
      const code = codeOf(await db().requestPairingCode("telegram", "42", { now: T0 }));
      const wrong = await wrongCode(db(), "telegram", T0);
      for (let i = 0; i < 4; i++) expect(await db().approvePairingCode("telegram", wrong, { now: T0 + i })).toEqual({ kind: "unknown-code" });
      // A malformed code counts too: the 5th failure still answers unknown-code and starts the lockout.
      expect(await db().approvePairingCode("telegram", "nope", { now: T0 + 10 })).toEqual({ kind: "unknown-code" });
      expect(await db().approvePairingCode("telegram", code, { now: T0 + 11 })).toEqual({ kind: "locked-out", until: T0 + 10 + HOUR });
      expect(await db().approvePairingCode("telegram", code, { now: T0 + 10 + HOUR - 1 })).toEqual({ kind: "locked-out", until: T0 + 10 + HOUR });
      expect(await db().isPairingApproved("telegram", "42")).toBe(false);
      // Another platform is not locked.
      const slack = codeOf(await db().requestPairingCode("slack", "9", { now: T0 + 20 }));
      expect((await db().approvePairingCode("slack", slack, { now: T0 + 21 })).kind).toBe("approved");
      // After the lockout, a fresh count: 4 failures do not lock again; a success resets it.
      const later = T0 + 10 + HOUR;
      const fresh = codeOf(await db().requestPairingCode("telegram", "43", { now: later }));
      for (let i = 0; i < 4; i++) expect(await db().approvePairingCode("telegram", wrong, { now: later + i })).toEqual({ kind: "unknown-code" });
      expect((await db().approvePairingCode("telegram", fresh, { now: later + 5 })).kind).toBe("approved");
      const next = codeOf(await db().requestPairingCode("telegram", "44", { now: later + 6 }));
      for (let i = 0; i < 4; i++) expect(await db().approvePairingCode("telegram", wrong, { now: later + 7 + i })).toEqual({ kind: "unknown-code" });
      expect((await db().approvePairingCode("telegram", next, { now: later + 20 })).kind).toBe("approved");
    });

    test("revoke removes an approval (true once, then false); the person is a stranger again", async () => {
      const code = codeOf(await db().requestPairingCode("matrix", "@ann:example.org", { now: T0 }));
      await db().approvePairingCode("matrix", code, { by: "cli", now: T0 + 1 });
      expect(await db().revokePairing("matrix", "@bob:example.org")).toBe(false);
      expect(await db().revokePairing("telegram", "@ann:example.org")).toBe(false);
      expect(await db().revokePairing("matrix", "@ann:example.org")).toBe(true);
      expect(await db().revokePairing("matrix", "@ann:example.org")).toBe(false);
      expect(await db().isPairingApproved("matrix", "@ann:example.org")).toBe(false);
      expect((await db().listPairing()).approved).toEqual([]);
      expect(await db().requestPairingCode("matrix", "@ann:example.org", { now: T0 + 11 * MIN })).toMatchObject({ kind: "code" });
    });

    test("list filters by platform, and keeps names as given (untrusted text, NUL included)", async () => {
      const name = "<script>alert(1)</script> \u0000 Zoë";
      const a = codeOf(await db().requestPairingCode("telegram", "1", { userName: name, now: T0 }));
      codeOf(await db().requestPairingCode("whatsapp", "15551234567", { now: T0 + 1 }));
      await db().approvePairingCode("telegram", a, { now: T0 + 2 });
      const telegram = await db().listPairing({ platform: "telegram", now: T0 + 3 });
      expect(telegram.pending).toEqual([]);
      expect(telegram.approved).toEqual([{ platform: "telegram", userId: "1", userName: name, approvedAt: T0 + 2, approvedBy: null }]);
      const all = await db().listPairing({ now: T0 + 3 });
      expect(all.pending.map((p) => [p.platform, p.userId])).toEqual([["whatsapp", "15551234567"]]);
      expect(all.approved.map((p) => p.platform)).toEqual(["telegram"]);
    });

    test("bad input is refused with InvalidInputError naming the field", async () => {
      await expectReject(() => db().requestPairingCode("", "1"), InvalidInputError, /platform/);
      await expectReject(() => db().requestPairingCode("telegram", ""), InvalidInputError, /userId/);
      await expectReject(() => db().requestPairingCode("telegram", "1", { now: -1 }), InvalidInputError, /now/);
      await expectReject(() => db().approvePairingCode("telegram", 5 as unknown as string), InvalidInputError, /code/);
      await expectReject(() => db().listPairing({ platform: "" }), InvalidInputError, /platform/);
      await expectReject(() => db().revokePairing("telegram", ""), InvalidInputError, /userId/);
    });

    test("approvals survive reopening and are seen by another handle (a replica)", async () => {
      const code = codeOf(await db().requestPairingCode("telegram", "42", { now: T0 }));
      const other = await anotherHandle();
      expect(await other.listPairing({ now: T0 })).toMatchObject({ pending: [{ code, userId: "42" }] });
      expect((await other.approvePairingCode("telegram", code, { now: T0 + 1 })).kind).toBe("approved");
      expect(await db().isPairingApproved("telegram", "42")).toBe(true);
    });

    test("race: parallel approvals of one code on two handles — exactly one wins", async () => {
      const other = await anotherHandle();
      for (let round = 0; round < 3; round++) {
        const code = codeOf(await db().requestPairingCode("telegram", `r${round}`, { now: T0 }));
        const outcomes = await Promise.all(
          Array.from({ length: 4 }, (_, i) => (i % 2 === 0 ? db() : other).approvePairingCode("telegram", code, { now: T0 + 1 })),
        );
        expect(outcomes.filter((o) => o.kind === "approved")).toHaveLength(1);
        expect(outcomes.filter((o) => o.kind === "unknown-code")).toHaveLength(3);
        // The losers count as failed approvals (3, under the lockout): a success resets the count before the next round.
        const reset = codeOf(await db().requestPairingCode("telegram", `reset${round}`, { now: T0 + 2 }));
        expect((await other.approvePairingCode("telegram", reset, { now: T0 + 3 })).kind).toBe("approved");
      }
    });

    test("race: parallel code requests from many people on two handles never leave more than 3 pending", async () => {
      const other = await anotherHandle();
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? db() : other).requestPairingCode("slack", `U${i}`, { now: T0 })));
      expect(outcomes.filter((o) => o.kind === "code")).toHaveLength(3);
      expect(outcomes.filter((o) => o.kind === "too-many-pending")).toHaveLength(9);
      expect((await db().listPairing({ platform: "slack", now: T0 })).pending).toHaveLength(3);
      // One person asking in parallel gets one code.
      const same = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? db() : other).requestPairingCode("discord", "D1", { now: T0 })));
      expect(same.filter((o) => o.kind === "code")).toHaveLength(1);
      expect(same.filter((o) => o.kind === "rate-limited")).toHaveLength(5);
    });
  });
}
