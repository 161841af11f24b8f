// A first run: THREADLINE_HOME holds nothing yet and no --db, THREADLINE_DB or config file
// database names another one. Reading commands answer as for an empty database (exit 0,
// valid --json), naming a session is "not found" (exit 3) without claiming the database is
// missing, -c/-r say there is nothing to resume, and nothing is created: no file, no
// directories.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** Nothing was created: not the database, not its directory. */
function expectNothingCreated(home: TempHome): void {
  expect(existsSync(join(home.home, "state.db"))).toBe(false);
  expect(existsSync(home.home)).toBe(false);
}

describe("a first run (the default database does not exist yet)", { timeout: 120_000 }, () => {
  it("sessions list says there are no sessions yet (exit 0); --json is an empty list document", async () => {
    const list = await t.run(["sessions", "list"]);
    expect(list).toEqual({ code: 0, stdout: "No sessions yet.\n", stderr: "" });
    const bySource = await t.run(["sessions", "list", "--source", "cli"]);
    expect(bySource).toEqual({ code: 0, stdout: "No sessions from cli.\n", stderr: "" });
    const json = await t.run(["sessions", "list", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ sessions: [], more: 0 });
    expectNothingCreated(t);
  });

  it("search finds nothing (exit 0), --discover lists nothing, both in text and --json", async () => {
    const text = await t.run(["sessions", "search", "deploy"]);
    expect(text).toEqual({ code: 0, stdout: 'No matches for "deploy".\n', stderr: "" });
    expect(parseJson(await t.run(["sessions", "search", "deploy", "--json"]))).toEqual({ query: "deploy", totalHits: 0, sessions: [] });
    const discover = await t.run(["sessions", "search", "--discover"]);
    expect(discover.code).toBe(0);
    expect(discover.stderr).toBe("");
    expect(parseJson<{ sessions: unknown[] }>(await t.run(["sessions", "search", "--discover", "--json"])).sessions).toEqual([]);
    expectNothingCreated(t);
  });

  it("stats shows zero totals at the default path, saying it is not created yet; insights has no sessions", async () => {
    const path = join(t.home, "state.db");
    const stats = await t.run(["sessions", "stats"]);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toContain(`Database  ${path} (sqlite, not created yet)`);
    expect(stats.stdout).toMatch(/^Size +0 B\b/mu);
    expect(stats.stdout).toMatch(/^Sessions +0$/mu);
    expect(parseJson(await t.run(["sessions", "stats", "--json"]))).toMatchObject({
      location: path,
      backend: "sqlite",
      totalSessions: 0,
      totalMessages: 0,
      databaseBytes: 0,
      sessionsBySource: {},
    });
    const insights = await t.run(["insights"]);
    expect(insights.code).toBe(0);
    expect(insights.stdout).toContain("No sessions in this period.");
    expect(parseJson(await t.run(["insights", "--json"]))).toMatchObject({ location: path, backend: "sqlite", days: 30 });
    expectNothingCreated(t);
  });

  it("show, rename, delete and export --session-id: the session is not found (exit 3), and the database is not said to be missing", async () => {
    for (const args of [
      ["sessions", "show", "abc"],
      ["sessions", "rename", "abc", "new title"],
      ["sessions", "delete", "abc", "--yes"],
      ["sessions", "export", "-", "--session-id", "abc"],
    ]) {
      const result = await t.run(args);
      expect(result.code, args.join(" ")).toBe(3);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe('threadline: No session with the id, id prefix or title "abc". Run "threadline sessions list" to see them.\n');
    }
    expectNothingCreated(t);
  });

  it("export writes no sessions; prune and prune --dry-run have nothing to do (exit 0, valid --json)", async () => {
    expect(await t.run(["sessions", "export", "-"])).toEqual({ code: 0, stdout: "", stderr: "Exported 0 sessions to stdout\n" });
    const prune = await t.run(["sessions", "prune", "--yes"]);
    expect(prune).toEqual({ code: 0, stdout: "Nothing to prune: no ended sessions not active for 90 days.\n", stderr: "" });
    expect(parseJson(await t.run(["sessions", "prune", "--dry-run", "--json"]))).toMatchObject({ dryRun: true, sessions: [], pruned: 0 });
    expectNothingCreated(t);
  });

  it("sessions browse has nothing to pick (exit 0)", async () => {
    expect(await t.run(["sessions", "browse"])).toEqual({ code: 0, stdout: 'No sessions yet. Start one with "threadline chat".\n', stderr: "" });
    expectNothingCreated(t);
  });

  it("doctor has nothing to check (exit 0, also --repair and --json)", async () => {
    const path = join(t.home, "state.db");
    const doctor = await t.run(["doctor"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stderr).toBe("");
    expect(doctor.stdout).toContain(`No database yet at ${path}: nothing has been stored, so there is nothing to check.`);
    expect(parseJson(await t.run(["doctor", "--json"]))).toEqual({ backend: "sqlite", location: path, notCreatedYet: true, healthy: true });
    const repair = await t.run(["doctor", "--repair", "--json"]);
    expect(repair.code).toBe(0);
    expect(JSON.parse(repair.stdout)).toEqual({ diagnosis: { backend: "sqlite", location: path, notCreatedYet: true, healthy: true }, repair: null });
    expectNothingCreated(t);
    // A file the user named stays an error.
    const named = await t.run(["doctor", "--db", join(t.dir, "typo.db")]);
    expect(named.code).toBe(3);
  });

  it("threadline -c and chat -c say there is nothing to continue (exit 3) and create nothing; -r is not found", async () => {
    for (const args of [["-c"], ["chat", "-c"], ["chat", "--continue"]]) {
      const result = await t.run(args);
      expect(result.code, args.join(" ")).toBe(3);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe('threadline: No terminal chat session to continue yet. Start one with "threadline chat".\n');
      expectNothingCreated(t);
    }
    // A blank THREADLINE_DB counts as unset: still the default database, still a first run.
    const blank = await t.run(["-c"], { env: { THREADLINE_DB: "" } });
    expect(blank).toEqual({ code: 3, stdout: "", stderr: 'threadline: No terminal chat session to continue yet. Start one with "threadline chat".\n' });
    expectNothingCreated(t);
    for (const args of [
      ["-r", "abc"],
      ["chat", "-c", "Deploy", "plan"],
    ]) {
      const result = await t.run(args);
      expect(result.code, args.join(" ")).toBe(3);
      expect(result.stderr).toMatch(/^threadline: No session with the id, id prefix or title "(abc|Deploy plan)"/u);
      expectNothingCreated(t);
    }
  });

  it("-c on a --db file that does not exist names it (exit 3) and creates nothing; a config file's missing database is refused by reads", async () => {
    const typo = join(t.dir, "typo", "dir", "state.db");
    const result = await t.run(["-c", "--db", typo]);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `threadline: No terminal chat session to continue yet. Start one with "threadline chat". There is no database at ${typo} yet; if that path is wrong, check --db, THREADLINE_DB or the config file's database.\n`,
    );
    expect(existsSync(join(t.dir, "typo"))).toBe(false);

    // The config file names a database: it is not the default, so a missing one is an error.
    mkdirSync(t.home, { recursive: true });
    writeFileSync(join(t.home, "config.yaml"), `database: ${typo}\n`);
    const browse = await t.run(["sessions", "browse"]);
    expect(browse.code).toBe(3);
    expect(browse.stderr).toContain(`No database at ${typo}`);
    expect((await t.run(["chat", "-c"])).code).toBe(3);
    expect(existsSync(join(t.dir, "typo"))).toBe(false);
  });
});
