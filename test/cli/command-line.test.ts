// The command line itself, as people type it: run in process (runCli, the code the bin runs) with pipes.
// Error messages (one style: `threadline: <what was wrong>. <what to do>`), suggestions,
// exit codes, options before the subcommand, unquoted titles, the help texts.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "./sessions/cli-harness.js";
import { addSession } from "./sessions/fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** Runs threadline and expects a usage error: exit 2, nothing on stdout, exactly `stderr`. */
async function expectUsageError(args: string[], stderr: string): Promise<void> {
  const result = await t.run(args);
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 2, stdout: "", stderr });
}

describe("threadline: usage errors in one style", { timeout: 120_000 }, () => {
  it("an unknown command suggests the closest one, at the top level and in a group", async () => {
    await expectUsageError(["chta"], 'threadline: unknown command "chta". Did you mean "threadline chat"?\n');
    await expectUsageError(["sessions", "lst"], 'threadline: unknown command "sessions lst". Did you mean "threadline sessions list"?\n');
    await expectUsageError(["config", "shwo"], 'threadline: unknown command "config shwo". Did you mean "threadline config show"?\n');
  });

  it("an unknown command with nothing close points at the help", async () => {
    await expectUsageError(["frobnicate"], 'threadline: unknown command "frobnicate". Run "threadline --help" to see the commands.\n');
    await expectUsageError(
      ["sessions", "frobnicate"],
      'threadline: unknown command "sessions frobnicate". Run "threadline sessions --help" to see the commands.\n',
    );
  });

  it("an unknown option suggests the closest one, else points at the command's help", async () => {
    await expectUsageError(
      ["sessions", "list", "--limt", "3"],
      'threadline: unknown option "--limt" for "threadline sessions list". Did you mean "--limit"?\n',
    );
    await expectUsageError(
      ["sessions", "list", "--frobnicate"],
      'threadline: unknown option "--frobnicate" for "threadline sessions list". Run "threadline sessions list --help" to see its options.\n',
    );
    await expectUsageError(["--bogus"], 'threadline: unknown option "--bogus". Run "threadline --help" to see the options.\n');
    await expectUsageError(["--cofnig", "x.yaml"], 'threadline: unknown option "--cofnig". Did you mean "--config"?\n');
  });

  it("a missing argument, a missing option value and extra arguments name the command and show its usage", async () => {
    await expectUsageError(
      ["sessions", "show"],
      'threadline: missing argument <session> for "threadline sessions show". Usage: threadline sessions show [options] <session...>\n',
    );
    await expectUsageError(
      ["sessions", "list", "--db"],
      'threadline: option "--db <target>" needs a value. Run "threadline sessions list --help" to see its options.\n',
    );
    await expectUsageError(["-r"], 'threadline: option "-r, --resume <session>" needs a value. Run "threadline --help" to see its options.\n');
    await expectUsageError(
      ["sessions", "stats", "extra"],
      'threadline: "threadline sessions stats" takes no arguments (got 1). Usage: threadline sessions stats [options]\n',
    );
    await expectUsageError(
      ["sessions", "export", "out.jsonl", "more"],
      'threadline: too many arguments for "threadline sessions export" (expected 1, got 2). Quote a value that contains spaces. Usage: threadline sessions export [options] <file>\n',
    );
  });

  it("help and version still exit 0; help for an unknown command shows the overview", async () => {
    const help = await t.run(["help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: threadline /mu);
    const sessionsHelp = await t.run(["help", "sessions"]);
    expect(sessionsHelp.code).toBe(0);
    expect(sessionsHelp.stdout).toMatch(/^Usage: threadline sessions /mu);
  });
});

describe("threadline serve and api: a bad --port is a usage error", { timeout: 120_000 }, () => {
  it("serve --port abc exits 2 with the error line (before starting anything)", async () => {
    await expectUsageError(["serve", "--port", "abc"], 'threadline: --port must be a port number from 0 to 65535 (got "abc").\n');
    await expectUsageError(["serve", "--port", "70000"], 'threadline: --port must be a port number from 0 to 65535 (got "70000").\n');
  });

  it("api --port -1 exits 2 as well", async () => {
    await expectUsageError(["api", "--port=-1"], 'threadline: --port must be a port number from 0 to 65535 (got "-1").\n');
  });
});

describe("threadline --db/--config before the subcommand", { timeout: 120_000 }, () => {
  it("--db before the subcommand names the database", async () => {
    await t.seed((db) => addSession(db, { id: "global_db_1", text: "hello from the named db" }));
    const result = await t.run(["--db", t.db, "sessions", "list", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(parseJson<{ sessions: Array<{ id: string }> }>(result).sessions.map((s) => s.id)).toEqual(["global_db_1"]);
  });

  it("it wins over THREADLINE_DB; a --db after the subcommand wins over it", async () => {
    await t.seed((db) => addSession(db, { id: "global_db_2", text: "hello" }));
    const elsewhere = `${t.dir}/other.db`;
    const overEnv = await t.run(["--db", t.db, "sessions", "list", "--json"], { env: { THREADLINE_DB: elsewhere } });
    expect(parseJson<{ sessions: Array<{ id: string }> }>(overEnv).sessions.map((s) => s.id)).toEqual(["global_db_2"]);
    const local = await t.run(["--db", elsewhere, "sessions", "list", "--json", "--db", t.db]);
    expect(parseJson<{ sessions: Array<{ id: string }> }>(local).sessions.map((s) => s.id)).toEqual(["global_db_2"]);
    const stats = await t.run([`--db=${t.db}`, "sessions", "stats", "--json"]);
    expect(parseJson<{ location: string; totalSessions: number }>(stats)).toMatchObject({ totalSessions: 1 });
  });

  it("--config before the subcommand names the config file", async () => {
    const missing = `${t.dir}/no-such-config.yaml`;
    const result = await t.run(["--config", missing, "chat"], { input: "" });
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^threadline: .*no-such-config\.yaml/u);
  });

  it("an option the subcommand does not take is a usage error, not silently ignored", async () => {
    await expectUsageError(
      ["--config", "x.yaml", "sessions", "delete", "abc"],
      'threadline: --config does not apply to "threadline sessions delete". Leave it out (see "threadline sessions delete --help").\n',
    );
  });
});

describe("the environment", { timeout: 120_000 }, () => {
  it("is the run's own: THREADLINE_DB and THREADLINE_HOME of this process are not read", async () => {
    await t.seed((db) => addSession(db, { id: "env_1", text: "in the run's database" }));
    const saved = { db: process.env["THREADLINE_DB"], home: process.env["THREADLINE_HOME"] };
    process.env["THREADLINE_DB"] = join(t.dir, "not-this-one.db");
    process.env["THREADLINE_HOME"] = join(t.dir, "not-this-home");
    try {
      const named = await t.run(["sessions", "list", "--json"], { env: { THREADLINE_DB: t.db } });
      expect(named.stderr).toBe("");
      expect(parseJson<{ sessions: Array<{ id: string }> }>(named).sessions.map((s) => s.id)).toEqual(["env_1"]);
      // The run's home holds no database yet: a first run there (not the process's home).
      const home = await t.run(["sessions", "stats", "--json"]);
      expect(home.code).toBe(0);
      expect(parseJson<{ location: string }>(home).location).toBe(join(t.home, "state.db"));
    } finally {
      for (const [name, value] of [
        ["THREADLINE_DB", saved.db],
        ["THREADLINE_HOME", saved.home],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe("an unquoted multi-word title names a session", { timeout: 120_000 }, () => {
  it("sessions show Deploy staging", async () => {
    await t.seed(async (db) => {
      await addSession(db, { id: "title_words_1", text: "deploy it", title: "Deploy staging" });
      await addSession(db, { id: "title_words_2", text: "other", title: "Deploy" });
    });
    const result = await t.run(["sessions", "show", "Deploy", "staging", "--db", t.db]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Session\s+title_words_1$/mu);
    const json = await t.run(["sessions", "show", "--db", t.db, "--json", "Deploy", "staging"]);
    expect(parseJson<{ session: { id: string } }>(json).session.id).toBe("title_words_1");
  });

  it("sessions delete Deploy staging --yes", async () => {
    await t.seed(async (db) => {
      await addSession(db, { id: "title_words_3", text: "deploy it", title: "Deploy staging" });
      await addSession(db, { id: "title_words_4", text: "other", title: "Deploy" });
    });
    const result = await t.run(["sessions", "delete", "Deploy", "staging", "--yes", "--db", t.db, "--json"]);
    expect(result.code).toBe(0);
    expect(parseJson(result)).toEqual({ id: "title_words_3", deleted: true });
    expect(await t.seed((db) => db.getSession("title_words_4"))).not.toBeNull();
  });
});

describe("help texts", { timeout: 120_000 }, () => {
  it("chat --help lists each slash command once, with its arguments, descriptions aligned", async () => {
    const { code, stdout } = await t.run(["chat", "--help"]);
    expect(code).toBe(0);
    const section = stdout.slice(stdout.indexOf("In the chat:"));
    const lines = section.split("\n").filter((line) => /^ {2}\/\w/u.test(line));
    expect(lines.length).toBeGreaterThanOrEqual(12);
    for (const name of ["new", "reset", "stop", "resume", "title", "undo", "retry", "queue", "compress", "status", "sethome", "help", "handoff", "exit"]) {
      // Listed once: one command line starts with it (descriptions may mention other commands).
      expect(lines.filter((line) => line.startsWith(`  /${name} `) || line === `  /${name}`).length, `/${name} is listed once`).toBe(1);
    }
    // The usage column (before the description) names its command once: "/new", never "/new /new".
    for (const line of lines) expect(line.trim().split(/ {2,}/u)[0]!.match(/\/\w+/gu), line).toHaveLength(1);
    expect(section).toMatch(/^ {2}\/resume \[title\|id\] +switch to an earlier session/mu);
    expect(section).toMatch(/^ {2}\/handoff <platform> +move this session/mu);
    // Every description starts in the same column.
    const columns = new Set(lines.map((line) => /^ {2}\S+(?: \S+)? +/u.exec(line)![0].length));
    expect([...columns]).toHaveLength(1);
  });

  it("the chat's slash commands (loaded only for its help) are in every way of asking for chat's help", async () => {
    const full = (await t.run(["chat", "--help"])).stdout;
    expect(full).toContain("In the chat:");
    for (const argv of [
      ["help", "chat"],
      ["chat", "-h"],
      ["--db", "x.db", "chat", "--help"],
    ]) {
      const { code, stdout } = await t.run(argv);
      expect(code, argv.join(" ")).toBe(0);
      expect(stdout, argv.join(" ")).toBe(full);
    }
    // The program's own help lists the commands only.
    expect((await t.run(["--help"])).stdout).not.toContain("In the chat:");
  });

  it("serve --help says how to choose a model and lists the exit codes", async () => {
    const { code, stdout } = await t.run(["serve", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("OPENAI_BASE_URL");
    expect(stdout).toContain("THREADLINE_MODEL");
    expect(stdout).toContain("provider:");
    expect(stdout).toMatch(/^Exit codes:$/mu);
    expect(stdout).toMatch(/^ {2}0 +.*SIGTERM/mu);
    expect(stdout).toMatch(/^ {2}1 +/mu);
    expect(stdout).toMatch(/^ {2}2 +.*invalid/mu);
    expect(stdout).toMatch(/^ {2}3 +.*--config/mu);
  });

  it("options bound to a variable say so: --db (env: THREADLINE_DB), --config (env: THREADLINE_CONFIG)", async () => {
    const list = await t.run(["sessions", "list", "--help"]);
    expect(list.stdout).toMatch(/^ {2}--db <target> +database: .*\(default:\s+\$THREADLINE_HOME\/state\.db\) \(env: THREADLINE_DB\)$/mu);
    const chat = await t.run(["chat", "--help"]);
    expect(chat.stdout).toMatch(/^ {2}--config <file> +config file \(YAML\) \(env: THREADLINE_CONFIG\)$/mu);
  });

  it("the top-level help shows -c, -r, --db and --config", async () => {
    const { stdout } = await t.run(["--help"]);
    expect(stdout).toMatch(/^ {2}-c, --continue \[title\]/mu);
    expect(stdout).toMatch(/^ {2}-r, --resume <session>/mu);
    expect(stdout).toMatch(/^ {2}--db <target>/mu);
    expect(stdout).toMatch(/^ {2}--config <file>/mu);
  });
});
