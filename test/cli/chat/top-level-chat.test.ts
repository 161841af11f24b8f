// `threadline`, `threadline -c [title]` and `threadline -r <id|title>` as hermes users type them:
// the built bin in a real terminal (tmux), and in process with pipes, on a temp
// THREADLINE_HOME, echo agent.
import { execFileSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/store/index.js";
import { CLI_ID, runPiped, runPipedStatus, tempHome, Terminal, type TempHome } from "./terminal.js";

// These tests need tmux (CI installs it); without it they fail, saying so, rather than skip.
try {
  execFileSync("tmux", ["-V"], { stdio: "ignore" });
} catch (error) {
  throw new Error("The terminal tests need tmux (apt-get install tmux); .ci/run installs it when missing.", { cause: error });
}

/** A line that is just the prompt (capture-pane drops trailing spaces). */
const PROMPT = /^>\s*$/m;

function idIn(text: string): string {
  const match = new RegExp(`Resume it with: threadline chat --resume (${CLI_ID.source})`).exec(text);
  if (match === null) throw new Error(`no resume hint in:\n${text}`);
  return match[1]!;
}

describe("threadline at the top level", { timeout: 120_000 }, () => {
  let home: TempHome;
  const terminals: Terminal[] = [];

  beforeEach(() => {
    home = tempHome();
  });

  afterEach(async () => {
    for (const terminal of terminals.splice(0)) await terminal.kill();
    home.remove();
  });

  const start = async (args: string[]): Promise<Terminal> => {
    const terminal = await Terminal.start(home, args);
    terminals.push(terminal);
    return terminal;
  };

  it("bare threadline in a terminal starts a chat", async () => {
    const t = await start([]);
    const banner = await t.waitFor(PROMPT);
    expect(banner).toMatch(/threadline chat · echo agent/);
    await t.line("hello from bare threadline");
    await t.waitFor("Echo: hello from bare threadline");
    await t.keys("C-d");
    const screen = await t.waitFor("[exited 0]");
    const id = idIn(screen);
    const db = await openSessionDB(home.dbPath);
    try {
      expect(await db.getSession(id)).toMatchObject({ source: "cli", messageCount: 2 });
    } finally {
      await db.close();
    }
  });

  it("bare threadline without a terminal prints the help (exit 0) and starts nothing", async () => {
    const result = await runPipedStatus(home, [], "hello\n");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: threadline /m);
    expect(result.stdout).toMatch(/^ {2}chat /m);
    expect(result.stdout).not.toContain("Echo:");
    expect(result.stderr).toBe("");
  });

  it("threadline -c in a terminal continues the most recent terminal session with its recap", async () => {
    const id = idIn(await runPiped(home, ["chat"], "first thing\n"));
    const t = await start(["-c"]);
    const recap = await t.waitFor(PROMPT);
    expect(recap).toContain(`Resumed session ${id}.`);
    expect(recap).toMatch(/│ You: first thing$/m);
    await t.line("second thing");
    await t.waitFor("Echo: second thing");
    await t.line("/exit");
    expect(idIn(await t.waitFor("[exited 0]"))).toBe(id);
  });

  it("threadline -c <title> and -r <title> take the rest of the line as the title (no quotes needed)", async () => {
    const deploy = idIn(await runPiped(home, ["chat"], "/title Deploy staging\nalpha\n"));
    const other = idIn(await runPiped(home, ["chat"], "/title Deploy\nbeta\n"));
    expect(other).not.toBe(deploy);

    const continued = await runPipedStatus(home, ["-c", "Deploy", "staging"], "gamma\n");
    expect(continued.stderr).toBe("");
    expect(continued.status).toBe(0);
    expect(continued.stdout).toContain(`Resumed session ${deploy}.`);
    expect(idIn(continued.stdout)).toBe(deploy);

    const resumed = await runPipedStatus(home, ["-r", "Deploy", "staging"], "");
    expect(resumed.status).toBe(0);
    expect(idIn(resumed.stdout)).toBe(deploy);
    // `chat` itself too, for both options.
    expect(idIn(await runPiped(home, ["chat", "-r", "Deploy", "staging"], ""))).toBe(deploy);
    expect(idIn(await runPiped(home, ["chat", "--continue", "Deploy", "staging"], ""))).toBe(deploy);
    expect(idIn(await runPiped(home, ["-r", deploy], ""))).toBe(deploy);
  });

  it("threadline -r with an unknown session exits 3; -c with -r exits 2; stray words for chat exit 2", async () => {
    const unknown = await runPipedStatus(home, ["-r", "no", "such", "thing"], "");
    expect(unknown.status).toBe(3);
    expect(unknown.stderr).toMatch(/^threadline: No session with the id, id prefix or title "no such thing"/);
    const both = await runPipedStatus(home, ["-c", "-r", "x"], "");
    expect(both.status).toBe(2);
    expect(both.stderr).toBe("threadline: Use either --continue or --resume, not both.\n");
    const stray = await runPipedStatus(home, ["chat", "Deploy", "staging"], "");
    expect(stray.status).toBe(2);
    expect(stray.stdout).toBe("");
    expect(stray.stderr).toBe(
      'threadline: unexpected argument "Deploy staging" for "threadline chat". To resume a session, name it with --resume: threadline chat --resume Deploy staging\n',
    );
  });

  it("threadline --db FILE -c uses that database", async () => {
    const other = `${home.dir}/other.db`;
    const id = idIn(await runPiped(home, ["--db", other, "chat"], "in other db\n"));
    // Not in the default database: -c there finds nothing.
    const none = await runPipedStatus(home, ["-c"], "");
    expect(none.status).toBe(3);
    expect(idIn(await runPiped(home, ["--db", other, "-c"], ""))).toBe(id);
  });

  it("after /compress, threadline -c recaps the summary as a summary, never as You:", async () => {
    await runPiped(home, ["chat"], "plan the trip\n/compress\n");
    const out = await runPiped(home, ["-c"], "");
    expect(out).toContain("╭─ Previous conversation · ");
    expect(out).toMatch(/^│ Summary: \S/mu);
    expect(out).not.toMatch(/You: \[Summary/u);
    expect(out).not.toMatch(/^│ You:/mu);
  });
});
