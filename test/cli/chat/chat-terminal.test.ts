// `threadline chat` and `threadline sessions browse` as people use them: the built bin
// in a real terminal (tmux), on a temp THREADLINE_HOME with a SQLite database, echo agent;
// set-up and the runs without a terminal go in process.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB } from "../../../src/store/index.js";
import { stringify } from "yaml";
import { cleanupProcesses, spawnGateway, startCallbackServer } from "../../serve/gateway-process.js";
import { CLI_ID, runPiped, runPipedStatus, tempHome, Terminal, type TempHome } from "./terminal.js";

const SECRET = "chat-handoff-secret-0123456789";

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

/** A chat run with piped input (set-up); returns the id its exit message names. */
async function seedChat(home: TempHome, lines: string[], args: string[] = ["chat"]): Promise<string> {
  return idIn(await runPiped(home, args, `${lines.join("\n")}\n`));
}

describe("threadline chat in a terminal", () => {
  let home: TempHome;
  const terminals: Terminal[] = [];
  const databases: SessionDB[] = [];

  const start = async (args: string[]): Promise<Terminal> => {
    const terminal = await Terminal.start(home, args);
    terminals.push(terminal);
    return terminal;
  };
  const database = async (): Promise<SessionDB> => {
    const db = await openSessionDB(home.dbPath);
    databases.push(db);
    return db;
  };

  beforeEach(() => {
    home = tempHome();
  });

  afterEach(async () => {
    for (const terminal of terminals.splice(0)) await terminal.kill();
    for (const db of databases.splice(0)) await db.close();
    await cleanupProcesses();
    home.remove();
  });

  it("converses with the echo agent (saying so) and on exit prints the session id and how to resume it", async () => {
    const t = await start(["chat"]);
    const banner = await t.waitFor(PROMPT);
    expect(banner).toMatch(/echo agent: no model provider is configured/);
    await t.line("hello tmux");
    await t.waitFor("Echo: hello tmux");
    await t.line("/status");
    const status = await t.waitFor(/Session: \S+/);
    const id = /Session: (\S+)/.exec(status)![1]!;
    expect(id).toMatch(new RegExp(`^${CLI_ID.source}$`));
    await t.keys("C-d");
    const screen = await t.waitFor("[exited 0]");
    expect(screen).toContain(`Resume it with: threadline chat --resume ${id}`);
    expect(idIn(screen)).toBe(id);

    const db = await database();
    const session = await db.getSession(id);
    // Leaving (here Ctrl-D) ends the session, as hermes does (reason user_exit).
    expect(session).toMatchObject({ source: "cli", messageCount: 2, endReason: "user_exit" });
    expect(session!.endedAt).not.toBeNull();
    expect(session!.sessionKey).toBe(`agent:main:cli:dm:${id}`);
    expect((await db.getMessages(id)).map((m) => m.content)).toEqual(["hello tmux", "Echo: hello tmux"]);
  });

  it("Ctrl-C clears a half-typed line, and leaves at an empty prompt", async () => {
    const t = await start(["chat"]);
    await t.waitFor(PROMPT);
    await t.line("kept");
    await t.waitFor("Echo: kept");
    await t.type("half typed");
    await t.waitFor(/^> half typed$/m);
    await t.keys("C-c");
    await t.waitFor((screen) => !screen.includes("half typed"));
    await t.keys("C-c");
    const screen = await t.waitFor("[exited 0]");
    expect(screen).not.toContain("Echo: half typed");
    const db = await database();
    expect((await db.getSession(idIn(screen)))!.messageCount).toBe(2);
  });

  it("refuses --continue with no terminal session yet, and --continue with --resume", async () => {
    const none = await runPipedStatus(home, ["chat", "--continue"], "");
    expect(none.status).toBe(3);
    expect(none.stderr).toContain('No terminal chat session to continue yet. Start one with "threadline chat".');
    const both = await runPipedStatus(home, ["chat", "--continue", "--resume", "x"], "");
    expect(both.status).toBe(2);
    expect(both.stderr).toContain("Use either --continue or --resume, not both.");
    const unknown = await runPipedStatus(home, ["chat", "--resume", "nope"], "");
    expect(unknown.status).toBe(3);
    expect(unknown.stderr).toMatch(/No session with the id, id prefix or title "nope"/);
  });

  it("--continue shows the recap of the most recent terminal session and continues it under the same id", async () => {
    const id = await seedChat(home, ["first thing", "second thing"]);
    // A newer session from another platform is not a terminal session.
    const db = await database();
    const other = await db.createSession({ source: "telegram" });
    await db.appendMessage(other.id, { role: "user", content: "from telegram" });

    const t = await start(["chat", "--continue"]);
    const recap = await t.waitFor(PROMPT);
    expect(recap).toContain(`╭─ Previous conversation · `);
    expect(recap).toContain(id);
    expect(recap).toMatch(/│ You: first thing$/m);
    expect(recap).toMatch(/│ Assistant: Echo: second thing$/m);
    expect(recap).toContain(`Resumed session ${id}.`);
    expect(recap).not.toContain("from telegram");
    await t.line("third thing");
    await t.waitFor("Echo: third thing");
    await t.line("/exit");
    const screen = await t.waitFor("[exited 0]");
    expect(idIn(screen)).toBe(id);

    const session = await db.getSession(id);
    expect(session!.messageCount).toBe(6);
    expect((await db.listSessions({ sources: ["cli"] })).items.map((s) => s.id)).toEqual([id]);
  });

  it("trims a long recap to the last 10 exchanges; resumeDisplay minimal prints one line instead", async () => {
    const id = await seedChat(
      home,
      Array.from({ length: 12 }, (_, i) => `m${i + 1}`),
    );
    const t = await start(["chat", "-c"]);
    const recap = await t.waitFor(PROMPT);
    expect(recap).toMatch(/│ \.\.\. 4 earlier messages \.\.\.$/m);
    expect(recap).not.toMatch(/You: m2$/m);
    expect(recap).toMatch(/You: m3$/m);
    expect(recap).toMatch(/Assistant: Echo: m12$/m);
    expect(recap).toContain("24 messages · last active just now");
    await t.line("/exit");
    await t.waitFor("[exited 0]");

    home.writeConfig("display:\n  resumeDisplay: minimal\n");
    const minimal = await start(["chat", "-c"]);
    const screen = await minimal.waitFor(PROMPT);
    // The heuristic titler named the session after its first message.
    expect(screen).toContain(`Resumed session ${id} "M1" (24 messages, last active just now).`);
    expect(screen).not.toContain("Previous conversation");
    expect(screen).not.toContain("You: m12");
  });

  it("--resume <title> (and --continue <title>) opens the session holding exactly that title, not a look-alike '#2'", async () => {
    const first = await seedChat(home, ["/title Project", "alpha"]);
    const second = await seedChat(home, ["/title Project #2", "beta"]);
    const unrelated = await seedChat(home, ["/title Other", "gamma"]);
    expect(new Set([first, second, unrelated]).size).toBe(3);

    const t = await start(["chat", "--resume", "Project"]);
    const recap = await t.waitFor(PROMPT);
    expect(recap).toContain(`took the session titled exactly "Project" (${first}); also like it: "Project #2" (${second})`);
    expect(recap).toContain(`Previous conversation · Project (${first})`);
    expect(recap).toMatch(/You: alpha$/m);
    await t.line("delta");
    await t.waitFor("Echo: delta");
    await t.line("/quit");
    expect(idIn(await t.waitFor("[exited 0]"))).toBe(first);

    expect(idIn(await runPiped(home, ["chat", "--continue", "Project"], ""))).toBe(first);
    expect(idIn(await runPiped(home, ["chat", "--resume", "Project #2"], ""))).toBe(second);
    const db = await database();
    expect((await db.getSession(first))!.messageCount).toBe(4);
    expect((await db.getSession(second))!.messageCount).toBe(2);
  });

  it("/handoff telegram without a home channel is refused with the config key to set, and the chat goes on", async () => {
    const t = await start(["chat"]);
    await t.waitFor(PROMPT);
    await t.line("/handoff telegram");
    await t.waitFor("Nothing to hand off yet: send a message first.");
    await t.line("hi");
    await t.waitFor("Echo: hi");
    await t.line("/handoff telegram");
    const refused = await t.waitFor("homeChannels.telegram.chatId");
    expect(refused).toContain(`No home channel is configured for telegram. Set homeChannels.telegram.chatId in ${join(home.home, "config.yaml")}`);
    expect(refused).toContain("threadline config set homeChannels.telegram.chatId <id>");
    expect(refused).not.toContain("waiting for a running gateway");
    await t.line("still here");
    await t.waitFor("Echo: still here");
    await t.line("/exit");
    const screen = await t.waitFor("[exited 0]");
    const db = await database();
    expect((await db.getSession(idIn(screen)))!.messageCount).toBe(4);
  });

  it("/handoff webhook with a running gateway moves the session to the home channel and says how to take it back", async () => {
    const callback = await startCallbackServer(SECRET);
    home.writeConfig(
      stringify({
        adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
        homeChannels: { webhook: { chatId: "home-chat" } },
      }),
    );
    await spawnGateway({ home: home.home });
    const t = await start(["chat"]);
    await t.waitFor(PROMPT);
    await t.line("/title Release plan");
    await t.line("plan the release");
    await t.waitFor("Echo: plan the release");
    await t.line("/handoff webhook");
    await t.waitFor("waiting for a running gateway (threadline serve)");
    const screen = await t.waitFor("[exited 0]", { timeoutMs: 30_000 });
    expect(screen).toContain("Handed off to webhook (chat home-chat): the session continues there with the same id.");
    const id = new RegExp(
      `Session (${CLI_ID.source}) "Release plan" continues on webhook\\. Take it back to the terminal with: threadline chat --resume (${CLI_ID.source})`,
    ).exec(screen);
    expect(id).not.toBeNull();
    expect(id![2]).toBe(id![1]);
    const summary = await callback.waitFor((d) => d.body.chatId === "home-chat", "the handoff summary");
    expect(summary.body.sessionId).toBe(id![1]);
    // The session goes on at the home channel: leaving the terminal did not end it.
    const db = await database();
    expect(await db.getSession(id![1]!)).toMatchObject({ endedAt: null });
  });

  it("sessions browse filters as you type, Esc clears the filter, arrows move and Enter resumes the chat", async () => {
    await seedChat(home, ["/title Alpha project", "first"]);
    const beta = await seedChat(home, ["/title Beta launch", "second"]);
    await seedChat(home, ["/title Gamma notes", "third"]);

    const t = await start(["sessions", "browse"]);
    await t.waitFor(/^3 sessions$/m, { visibleOnly: true });
    await t.type("launch");
    let screen = await t.waitFor(/^1 of 3 sessions$/m, { visibleOnly: true });
    expect(screen).toMatch(/^Filter: launch$/m);
    expect(screen).toMatch(new RegExp(`^> Beta launch .*${beta}$`, "m"));
    expect(screen).not.toContain("Gamma notes");

    await t.keys("Escape");
    screen = await t.waitFor(/^3 sessions$/m, { visibleOnly: true });
    expect(screen).toMatch(/^Filter:\s*$/m);
    expect(screen).toMatch(/^> Gamma notes /m);
    await t.keys("Down", "Down");
    await t.waitFor(/^> Alpha project /m, { visibleOnly: true });
    await t.keys("Up");
    await t.waitFor(/^> Beta launch /m, { visibleOnly: true });
    await t.keys("Enter");

    screen = await t.waitFor(PROMPT);
    expect(screen).toContain(`Previous conversation · Beta launch (${beta})`);
    expect(screen).toMatch(/You: second$/m);
    await t.line("more");
    await t.waitFor("Echo: more");
    await t.line("/exit");
    expect(idIn(await t.waitFor("[exited 0]"))).toBe(beta);
    const db = await database();
    expect((await db.getSession(beta))!.messageCount).toBe(4);
  });

  it("sessions browse needs a terminal, and says so when there is nothing to pick", async () => {
    // No database yet: refused (exit 3) naming it, nothing created.
    const missing = await runPipedStatus(home, ["sessions", "browse"], "");
    expect(missing.status).toBe(3);
    expect(missing.stderr).toContain(home.dbPath);
    await (await openSessionDB(home.dbPath)).close();
    const empty = await runPipedStatus(home, ["sessions", "browse"], "");
    expect(empty.status).toBe(0);
    expect(empty.stdout).toContain('No sessions yet. Start one with "threadline chat".');
    await seedChat(home, ["hello"]);
    const piped = await runPipedStatus(home, ["sessions", "browse"], "");
    expect(piped.status).toBe(2);
    expect(piped.stderr).toContain("sessions browse needs an interactive terminal");
  });

  it("sessions browse: Esc with an empty filter leaves without resuming anything", async () => {
    await seedChat(home, ["hello"]);
    const t = await start(["sessions", "browse"]);
    await t.waitFor(/^1 session$/m, { visibleOnly: true });
    await t.type("zzz");
    await t.waitFor(/^0 of 1 sessions$/m, { visibleOnly: true });
    await t.keys("Escape");
    await t.waitFor(/^1 session$/m, { visibleOnly: true });
    await t.keys("Escape");
    const screen = await t.waitFor("[exited 0]");
    expect(screen).not.toContain("Previous conversation");
  });
});
