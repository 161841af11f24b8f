/**
 * `threadline pairing list | approve | revoke` as an operator runs them, on SQLite and
 * PostgreSQL: what is printed (text and `--json`), the exit codes (not found 3, refused 4,
 * usage 2), that the code typed is never echoed in an error, that names are printed without
 * their control characters, and a real child process for the exit codes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";
import { PAIRING_BACKENDS, type PairingBackend } from "./pairing-backends.js";

const PLATFORM_LIST = "telegram, slack, discord, whatsapp, signal, matrix";

for (const backend of PAIRING_BACKENDS) {
  describe(`threadline pairing (${backend.name})`, { timeout: 120_000 }, () => {
    let t: TempHome;
    let b: PairingBackend;

    // A fresh home and database per test.
    beforeEach(async () => {
      t = makeTempHome();
      b = await backend.open(t);
    });
    afterEach(async () => {
      await b.close();
      t.cleanup();
    });

    const run = (args: string[]) => t.run(["pairing", ...args, "--db", b.target]);

    /** A code for a stranger, as the gateway would ask for it. */
    async function ask(platform: string, userId: string, userName: string | null = null): Promise<string> {
      const outcome = await b.db.requestPairingCode(platform, userId, { userName, chatId: userId });
      if (outcome.kind !== "code") throw new Error(`expected a code, got ${outcome.kind}`);
      return outcome.code;
    }

    it("list shows pending codes with age and expiry, then approved people; --platform narrows it", async () => {
      const empty = await run(["list"]);
      expect(empty.code, empty.stderr).toBe(0);
      expect(empty.stdout).toBe("No pending pairing codes.\n\nNo one is approved yet.\n");

      const code = await ask("telegram", "4242", "Ann");
      const slack = await ask("slack", "U77");
      const list = await run(["list"]);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/^Pending codes \(2\)$/mu);
      expect(list.stdout).toMatch(new RegExp(`^  telegram  ${code}  4242\\s+Ann\\s+just now\\s+in (59m|1h)$`, "mu"));
      expect(list.stdout).toMatch(new RegExp(`^  slack\\s+${slack}  U77\\s+-\\s+just now`, "mu"));
      expect(list.stdout).toContain("No one is approved yet.");

      const only = await run(["list", "--platform", "Slack"]);
      expect(only.stdout).toContain(slack);
      expect(only.stdout).not.toContain(code);
      expect(only.stdout).toMatch(/^Pending codes on slack \(1\)$/mu);
    });

    it("approve prints who was approved and that their next message will be answered; list --json shows them", async () => {
      const code = await ask("telegram", "4242", "Ann");
      const typed = `${code.slice(0, 4).toLowerCase()}-${code.slice(4)}`;
      const approved = await run(["approve", "telegram", typed]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe("Approved Ann (user 4242) on telegram. Their next message will be answered.\n");
      expect(await b.db.isPairingApproved("telegram", "4242")).toBe(true);

      const json = parseJson<{ backend: string; pending: unknown[]; approved: Array<Record<string, unknown>> }>(await run(["list", "--json"]));
      expect(json.backend).toBe(backend.name);
      expect(json.pending).toEqual([]);
      expect(json.approved).toEqual([{ platform: "telegram", userId: "4242", userName: "Ann", approvedAt: expect.any(Number), approvedBy: "cli" }]);
      const text = await run(["list"]);
      expect(text.stdout).toMatch(/^Approved \(1\)$/mu);
      expect(text.stdout).toMatch(/^ {2}telegram {2}4242\s+Ann\s+just now\s+cli$/mu);
    });

    it("without --db, acts on the gateway's database: the config file's database (as threadline serve picks it)", async () => {
      const code = await ask("telegram", "4242", "Ann");
      mkdirSync(t.home, { recursive: true });
      writeFileSync(join(t.home, "config.yaml"), `database: ${JSON.stringify(b.target)}\n`);
      const approved = await t.run(["pairing", "approve", "telegram", code]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(await b.db.isPairingApproved("telegram", "4242")).toBe(true);
      const listed = parseJson<{ approved: Array<{ userId: string }> }>(await t.run(["pairing", "list", "--json"]));
      expect(listed.approved.map((a) => a.userId)).toEqual(["4242"]);
      // --db still wins over the config file.
      const elsewhere = await t.run(["pairing", "list", "--json", "--db", join(t.dir, "missing.db")]);
      expect(elsewhere.code).toBe(3);
    });

    it("approve --json gives the approval", async () => {
      const code = await ask("discord", "99", null);
      const json = parseJson<{ approved: Record<string, unknown> }>(await run(["approve", "discord", code, "--json"]));
      expect(json.approved).toMatchObject({ platform: "discord", userId: "99", userName: null, approvedBy: "cli" });
    });

    it("an unknown code is not found (exit 3), with what to do, and the typed code is not echoed", async () => {
      await ask("telegram", "4242");
      const result = await run(["approve", "telegram", "ZZZZ-ZZZZ"]);
      expect(result.code).toBe(3);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^threadline: No pending pairing code on telegram matches what you typed/u);
      expect(result.stderr).toContain('"threadline pairing list --platform telegram"');
      expect(result.stderr).not.toMatch(/ZZZZ/iu);
    });

    it("an unknown platform is a usage error (exit 2) listing the platforms, on every subcommand", async () => {
      for (const args of [
        ["approve", "telegrm", "ABCDEFGH"],
        ["revoke", "irc", "42"],
        ["list", "--platform", "webhook"],
      ]) {
        const result = await run(args);
        expect(result.code, args.join(" ")).toBe(2);
        expect(result.stderr).toContain(`Pairing platforms: ${PLATFORM_LIST}.`);
      }
    });

    it("revoke removes an approval (the person is a stranger again); revoking nobody is not found (exit 3)", async () => {
      const code = await ask("matrix", "@ann:example.org", "Ann");
      await b.db.approvePairingCode("matrix", code, { by: "cli" });
      const revoked = await run(["revoke", "matrix", "@ann:example.org"]);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stdout).toBe("Revoked Ann (user @ann:example.org) on matrix: their next message is treated as a stranger's.\n");
      expect(await b.db.isPairingApproved("matrix", "@ann:example.org")).toBe(false);
      const again = await run(["revoke", "matrix", "@ann:example.org", "--json"]);
      expect(again.code).toBe(3);
      expect(again.stderr).toMatch(/No approval of user @ann:example.org on matrix/u);

      const code2 = await ask("signal", "+15550001", null);
      await b.db.approvePairingCode("signal", code2);
      expect(parseJson(await run(["revoke", "signal", "+15550001", "--json"]))).toEqual({
        revoked: { platform: "signal", userId: "+15550001", userName: null },
      });
    });

    it("a stranger's name is printed without its control characters (no terminal escapes)", async () => {
      const code = await ask("telegram", "7", "Eve\u001b[2J\u001b]0;pwned\u0007");
      const list = await run(["list"]);
      expect(list.stdout).not.toContain("\u001b");
      expect(list.stdout).not.toContain("\u0007");
      expect(list.stdout).toContain("Eve?[2J?]0;pwned?");
      const approved = await run(["approve", "telegram", code]);
      expect(approved.stdout).not.toContain("\u001b");
    });

    it("locked out: refused (exit 4) saying when it ends; as a real child process too", async () => {
      const code = await ask("whatsapp", "15551234567");
      for (let i = 0; i < 5; i++) expect((await run(["approve", "whatsapp", "AAAAAAAA"])).code).toBe(3);
      const refused = await t.runChild(["pairing", "approve", "whatsapp", code, "--db", b.target]);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toMatch(
        /^threadline: Approvals on whatsapp are locked after 5 failed attempts, until \d{4}-\d\d-\d\d \d\d:\d\d \(in (59m|1h)\)\. Nothing was approved/u,
      );
      expect(refused.stderr).not.toContain(code);
      expect(await b.db.isPairingApproved("whatsapp", "15551234567")).toBe(false);
      const missing = await t.runChild(["pairing", "approve", "slack", "AAAAAAAA", "--db", b.target]);
      expect(missing.code).toBe(3);
      const usage = await t.runChild(["pairing", "approve", "nope", "AAAAAAAA", "--db", b.target]);
      expect(usage.code).toBe(2);
    });
  });
}
