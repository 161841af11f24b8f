/**
 * docs/deploy.md's backup schedules, as written: the systemd timer and service pass
 * `systemd-analyze verify` (offline, as system units: there is no user manager here), and the
 * service's ExecStart and ExecStartPost and the cron line run for real through `sh` with the
 * built bin in place of `/usr/local/bin/threadline`, making a dated 0600 backup and keeping
 * the 14 newest days. The restore steps run too (the `threadline service` lines left out: the
 * gateway is a process killed mid-write here, leaving a `-wal` the steps must move aside).
 */
import Database from "better-sqlite3";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { codeBlocks, run } from "../../docs/markdown-examples.js";
import { seedDatabase } from "../../support/damaged-sqlite.js";
import { waitFor } from "../../support/wait-for.js";
import { builtCli, shellQuote } from "../cli-run.js";
import { makeTempHome, type TempHome } from "../sessions/cli-harness.js";

const DEPLOY = readFileSync(new URL("../../../docs/deploy.md", import.meta.url), "utf8");
const INSTALLED = "/usr/local/bin/threadline";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** The unit files of the Backups section, by their name (the `# ~/.config/systemd/user/<name>` first line). */
function units(): Map<string, string> {
  const out = new Map<string, string>();
  for (const block of codeBlocks(DEPLOY).filter((b) => b.section === "Backups" && b.lang === "ini")) {
    const name = /^# ~\/\.config\/systemd\/user\/(\S+)\n/u.exec(block.code)?.[1];
    if (name !== undefined) out.set(name, block.code);
  }
  return out;
}

/** A user's home with a seeded database in `.threadline` and an empty backups directory. */
async function userHome(): Promise<{ home: string; backups: string }> {
  const home = join(t.dir, "user");
  mkdirSync(join(home, ".threadline"), { recursive: true });
  mkdirSync(join(home, "backups", "threadline"), { recursive: true });
  await seedDatabase(join(home, ".threadline", "state.db"), { sessions: 2, messages: 3 });
  return { home, backups: join(home, "backups", "threadline") };
}

/** An old backup, 20 days old, that the retention step must remove, and a recent one it must keep. */
function oldAndRecent(backups: string): void {
  const old = join(backups, "state-20200101-0315.db");
  const recent = join(backups, "state-20990101-0315.db");
  writeFileSync(old, "old");
  writeFileSync(recent, "recent");
  const twentyDaysAgo = Date.now() / 1000 - 20 * 86_400;
  utimesSync(old, twentyDaysAgo, twentyDaysAgo);
}

/** The bin as the docs' commands name it, swapped for the built one. */
function withBuiltBin(command: string): string {
  expect(command).toContain(INSTALLED);
  return command.replaceAll(INSTALLED, builtCli().map(shellQuote).join(" "));
}

/** The backups the schedule made (dated names), with their modes. */
function madeBackups(backups: string): Array<{ name: string; mode: number }> {
  return readdirSync(backups)
    .filter((name) => /^state-\d{8}-\d{4}\.db$/u.test(name) && !name.startsWith("state-2099") && !name.startsWith("state-2020"))
    .map((name) => ({ name, mode: statSync(join(backups, name)).mode & 0o777 }));
}

describe("docs/deploy.md: scheduled backups", { timeout: 120_000 }, () => {
  it("the timer and its service pass systemd-analyze verify", async () => {
    const found = units();
    expect([...found.keys()].sort()).toEqual(["threadline-backup.service", "threadline-backup.timer"]);
    const dir = join(t.dir, "units");
    mkdirSync(dir);
    for (const [name, text] of found) writeFileSync(join(dir, name), text);
    const result = await run("systemd-analyze", ["verify", join(dir, "threadline-backup.timer"), join(dir, "threadline-backup.service")], {
      cwd: dir,
      env: { ...process.env, SYSTEMD_LOG_COLOR: "0" },
    });
    expect(result.code, result.stderr).toBe(0);
    // Warnings (an unknown key, a bad specifier) go to stderr with the file's name; the executables checked are
    // /bin/sh and find, so only the threadline path may be reported missing.
    const about = result.stderr.split("\n").filter((line) => line.includes("threadline-backup") && !line.includes(INSTALLED));
    expect(about).toEqual([]);
  });

  it("the service's ExecStart and ExecStartPost, run as systemd would (%h, %%), make a dated 0600 backup and keep 14 days", async () => {
    const service = units().get("threadline-backup.service")!;
    const { home, backups } = await userHome();
    oldAndRecent(backups);
    const expand = (value: string): string => value.replaceAll("%h", home).replaceAll("%%", "%");
    const start = /^ExecStart=\/bin\/sh -c '(.*)'$/mu.exec(service)?.[1];
    const post = /^ExecStartPost=(.*)$/mu.exec(service)?.[1];
    const homeVar = /^Environment=THREADLINE_HOME=(.*)$/mu.exec(service)?.[1];
    expect(start).toBeDefined();
    expect(post).toBeDefined();
    expect(homeVar).toBeDefined();
    const env = { ...t.env({ THREADLINE_HOME: expand(homeVar!) }), HOME: home };
    const made = await run("/bin/sh", ["-c", `umask 000; ${withBuiltBin(expand(start!))}`], { cwd: home, env });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain("Holds         2 session(s), 6 message(s)");
    // ExecStartPost is one command line, no shell: split on spaces as systemd does for these unquoted words.
    const [program, ...args] = expand(post!).split(" ");
    execFileSync(program!, args, { env });
    expect(madeBackups(backups)).toEqual([{ name: expect.stringMatching(/^state-\d{8}-\d{4}\.db$/u), mode: 0o600 }]);
    expect(readdirSync(backups)).not.toContain("state-20200101-0315.db");
    expect(readdirSync(backups)).toContain("state-20990101-0315.db");
  });

  it("the cron line, run as cron would (% unescaped, HOME set), makes a dated 0600 backup and keeps 14 days", async () => {
    const cron = codeBlocks(DEPLOY).find((b) => b.section === "Backups" && b.code.startsWith("15 3 * * * "));
    expect(cron).toBeDefined();
    const { home, backups } = await userHome();
    oldAndRecent(backups);
    const command = cron!.code.trim().slice("15 3 * * * ".length).replaceAll("\\%", "%");
    const made = await run("/bin/sh", ["-c", `umask 000; ${withBuiltBin(command)}`], {
      cwd: home,
      env: { ...t.env({ THREADLINE_HOME: join(home, ".threadline") }), HOME: home },
    });
    expect(made.code, made.stderr).toBe(0);
    expect(madeBackups(backups)).toEqual([{ name: expect.stringMatching(/^state-\d{8}-\d{4}\.db$/u), mode: 0o600 }]);
    expect(readdirSync(backups)).not.toContain("state-20200101-0315.db");
    expect(readdirSync(backups)).toContain("state-20990101-0315.db");
  });

  it("the restore steps put the backup in place and move the crashed database and its -wal aside", async () => {
    const { home, backups } = await userHome();
    const data = join(home, ".threadline");
    const made = await run(builtCli()[0]!, [...builtCli().slice(1), "db", "backup", join(backups, "state-20261128-0315.db"), "--db", join(data, "state.db")], {
      cwd: home,
      env: t.env(),
    });
    expect(made.code, made.stderr).toBe(0);
    // A gateway writes after the backup and dies (SIGKILL) with its last writes only in the -wal.
    const script = `const db = new (require("better-sqlite3"))(process.argv[1]); db.pragma("wal_autocheckpoint = 0");
      db.prepare("UPDATE sessions SET title = 'after the backup ' || rowid").run(); process.stdout.write("written\\n"); process.stdin.resume();`;
    const gateway = spawn(process.execPath, ["-e", script, join(data, "state.db")], { cwd: process.cwd(), stdio: ["pipe", "pipe", "pipe"] });
    let said = "";
    let errors = "";
    gateway.stdout.setEncoding("utf8").on("data", (d: string) => (said += d));
    gateway.stderr.setEncoding("utf8").on("data", (d: string) => (errors += d));
    const exited = new Promise((resolve) => gateway.on("exit", resolve));
    await waitFor(() => said.includes("written\n") || gateway.exitCode !== null, { what: "the write after the backup", describe: () => errors });
    expect(said, errors).toBe("written\n");
    gateway.kill("SIGKILL");
    await exited;
    expect(statSync(join(data, "state.db-wal")).size).toBeGreaterThan(0);

    const block = codeBlocks(DEPLOY).find((b) => b.section === "Backups" && b.code.startsWith("threadline service stop"));
    expect(block).toBeDefined();
    const steps = block!.code
      .split("\n")
      .filter((line) => !line.startsWith("threadline service "))
      .map((line) => line.replace(/^threadline /u, `${builtCli().map(shellQuote).join(" ")} `))
      .join("\n");
    const restored = await run("/bin/sh", ["-c", steps], { cwd: home, env: { ...t.env({ THREADLINE_HOME: data }), HOME: home } });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^Healthy\.$/mu);
    expect(statSync(join(data, "state.db")).mode & 0o777).toBe(0o600);
    const titles = (path: string): string[] => {
      const db = new Database(path, { readonly: true });
      try {
        return db.prepare("SELECT DISTINCT title FROM sessions ORDER BY title").pluck().all() as string[];
      } finally {
        db.close();
      }
    };
    // The restored file is the backup, not the backup with the dead gateway's WAL replayed into it...
    expect(titles(join(data, "state.db"))).toEqual(["seeded 0", "seeded 1"]);
    // ...and nothing was lost: the crashed database, with its WAL, is kept aside.
    expect(readdirSync(join(data, "before-restore")).sort()).toEqual(["state.db", "state.db-shm", "state.db-wal"]);
    expect(titles(join(data, "before-restore", "state.db"))).toEqual(["after the backup 1", "after the backup 2"]);
  });
});
