/**
 * Threat: guessing pairing codes. Whoever can run approvals (an operator's script, a chat
 * admin's `/pair approve`, the web page) could try codes until one lets a stranger in. After 5
 * failed approvals on a platform, approvals there are locked for an hour: even the right code
 * is refused until the lockout ends. Shown through `threadline pairing approve`, on both
 * backends; the end of the lockout is shown with failures recorded an hour earlier (the
 * store's `now`), since the CLI runs on the real clock.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, type TempHome } from "../cli/sessions/cli-harness.js";
import { PAIRING_BACKENDS, type PairingBackend } from "../cli/pairing/pairing-backends.js";

const HOUR = 3_600_000;

for (const backend of PAIRING_BACKENDS) {
  describe(`pairing brute force: 5 failed approvals lock the platform for an hour (${backend.name})`, { timeout: 120_000 }, () => {
    let t: TempHome;
    let b: PairingBackend;
    beforeEach(async () => {
      t = makeTempHome();
      b = await backend.open(t);
    });
    afterEach(async () => {
      await b.close();
      t.cleanup();
    });

    const approve = (platform: string, code: string) => t.run(["pairing", "approve", platform, code, "--db", b.target]);

    async function ask(platform: string, userId: string, now?: number): Promise<string> {
      const outcome = await b.db.requestPairingCode(platform, userId, now === undefined ? {} : { now });
      if (outcome.kind !== "code") throw new Error(`expected a code, got ${outcome.kind}`);
      return outcome.code;
    }

    /** A well-formed code that is not pending on the platform. */
    async function wrong(platform: string): Promise<string> {
      const pending = new Set((await b.db.listPairing({ platform })).pending.map((p) => p.code));
      return ["AAAAAAAA", "BBBBBBBB"].find((c) => !pending.has(c))!;
    }

    it("after 5 wrong codes, the right code is refused and the stranger stays out", async () => {
      const code = await ask("telegram", "31337");
      const guess = await wrong("telegram");
      for (let i = 0; i < 5; i++) {
        const failed = await approve("telegram", guess);
        expect(failed.code, failed.stderr).toBe(3);
      }
      const refused = await approve("telegram", code);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toMatch(/Approvals on telegram are locked after 5 failed attempts, until .+\(in (59m|1h)\)/u);
      expect(await b.db.isPairingApproved("telegram", "31337")).toBe(false);
      // The code itself is still pending (it was not consumed), and another platform is not locked.
      expect((await b.db.listPairing({ platform: "telegram" })).pending.map((p) => p.code)).toEqual([code]);
      const slack = await ask("slack", "U1");
      expect((await approve("slack", slack)).code).toBe(0);
    });

    it("the lockout ends an hour after the 5th failure: then the right code is accepted", async () => {
      const longAgo = Date.now() - HOUR - 60_000;
      const guess = await wrong("discord");
      for (let i = 0; i < 5; i++) expect((await b.db.approvePairingCode("discord", guess, { now: longAgo + i })).kind).toBe("unknown-code");
      expect((await b.db.approvePairingCode("discord", guess, { now: longAgo + 10 })).kind).toBe("locked-out");
      const code = await ask("discord", "555");
      const accepted = await approve("discord", code);
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(await b.db.isPairingApproved("discord", "555")).toBe(true);
    });
  });
}
