/**
 * Threat (issue 32, backups): a backup holds every conversation, attachment, memory and pairing
 * approval in clear text. Written with the process's umask (often 022), it would be readable by
 * every local user, and backups tend to sit in shared places (/var/backups, a mounted disk) for
 * months. `threadline db backup` creates the file 0600 before a byte of history is in it,
 * whatever the umask, and a replaced file (`--force`) ends up 0600 too.
 *
 * The built bin as a child process under `umask 000` (the worst case; umask is process-wide,
 * so it cannot be set for one in-process run).
 */
import { chmodSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { seedDatabase } from "../support/damaged-sqlite.js";
import { builtCli, runChild, shellQuote } from "../cli/cli-run.js";
import { makeTempHome, type TempHome } from "../cli/sessions/cli-harness.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** `threadline <args>` (the built bin) under `umask 000`. */
function runWithOpenUmask(args: string[]): ReturnType<typeof runChild> {
  const command = [...builtCli(), ...args].map(shellQuote).join(" ");
  return runChild(["sh", "-c"], [`umask 000 && exec ${command}`], t.env());
}

describe("security: a backup is readable by its owner only", { timeout: 120_000 }, () => {
  it("is 0600 under umask 000, from a world-readable database, and when it replaces a world-readable file", async () => {
    await seedDatabase(t.db, { sessions: 3, messages: 4 });
    chmodSync(t.db, 0o644);
    const dir = join(t.dir, "backups");
    await runChild(["sh", "-c"], [`umask 000 && mkdir ${shellQuote(dir)}`], t.env());
    expect(statSync(dir).mode & 0o777).toBe(0o777);

    // The control: this umask really leaves a new file open to everyone.
    await runChild(["sh", "-c"], [`umask 000 && : > ${shellQuote(join(dir, "control"))}`], t.env());
    expect(statSync(join(dir, "control")).mode & 0o777).toBe(0o666);

    const fresh = join(dir, "state.db");
    const made = await runWithOpenUmask(["db", "backup", fresh, "--db", t.db]);
    expect(made.code, made.stderr).toBe(0);
    expect(statSync(fresh).mode & 0o777).toBe(0o600);

    const old = join(dir, "old.db");
    writeFileSync(old, "an old backup");
    chmodSync(old, 0o666);
    const replaced = await runWithOpenUmask(["db", "backup", old, "--db", t.db, "--force"]);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(statSync(old).mode & 0o777).toBe(0o600);

    // Nothing else was left beside them (no temp copy, no journal) with other modes.
    expect(readdirSync(dir).sort()).toEqual(["control", "old.db", "state.db"]);
  });
});
