// How a terminal chat's session ends: on /exit, /quit, end of input (Ctrl-D, a closed pipe),
// SIGINT, SIGTERM and SIGHUP (real child processes of the built bin) with reason `user_exit`, so
// retention can remove it; `-c`/`-r` reopen it; a chat killed with SIGKILL leaves its session
// live, and the next chat start ends it (reason `abandoned`) once it has been idle for a day.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB } from "../../../src/store/index.js";
import { builtCli, runInProcess, startInProcess } from "../cli-run.js";
import { waitFor, withDeadline } from "../../support/wait-for.js";
import { CLI_ID, runPiped, tempHome, type TempHome } from "./terminal.js";

function idIn(text: string): string {
  const match = new RegExp(`Resume it with: threadline chat --resume (${CLI_ID.source})`).exec(text);
  if (match === null) throw new Error(`no resume hint in:\n${text}`);
  return match[1]!;
}

/** `threadline chat <args>` as a child process of the built bin, on pipes, stdin left open. */
interface ChildChat {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnChat(home: TempHome, args: string[] = []): ChildChat {
  const [node, ...rest] = builtCli();
  const child = spawn(node!, [...rest, "chat", ...args], { env: home.env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stdin.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal }));
  });
  return { child, output: () => output, exited };
}

describe("the end of a terminal chat's session", { timeout: 60_000 }, () => {
  let home: TempHome;
  const children: ChildChat[] = [];
  const databases: SessionDB[] = [];

  const database = async (): Promise<SessionDB> => {
    const db = await openSessionDB(home.dbPath);
    databases.push(db);
    return db;
  };

  beforeEach(() => {
    home = tempHome();
  });

  afterEach(async () => {
    for (const chat of children.splice(0)) {
      if (chat.child.exitCode === null && chat.child.signalCode === null) chat.child.kill("SIGKILL");
      await withDeadline(chat.exited, { timeoutMs: 10_000, what: "a test chat to exit" });
    }
    for (const db of databases.splice(0)) await db.close();
    home.remove();
  });

  /** A chat process that has stored one exchange; returns it and its session id. */
  const chatting = async (): Promise<{ chat: ChildChat; id: string }> => {
    const chat = spawnChat(home);
    children.push(chat);
    chat.child.stdin.write("hello child\n/status\n");
    const id = await waitFor(() => new RegExp(`Session: (${CLI_ID.source})`).exec(chat.output())?.[1], {
      what: "the chat's /status",
      describe: () => chat.output(),
    });
    expect(chat.output()).toContain("Echo: hello child");
    return { chat, id };
  };

  it("/exit, /quit and end of input end the session with reason user_exit", async () => {
    for (const input of ["hello\n/exit\n", "hello\n/quit\n", "hello\n"]) {
      const id = idIn(await runPiped(home, ["chat"], input));
      const db = await database();
      const session = await db.getSession(id);
      expect(session, input).toMatchObject({ source: "cli", messageCount: 2, endReason: "user_exit" });
      expect(session!.endedAt).not.toBeNull();
    }
  });

  it("a session ended on exit is what sessions prune finds: --older-than 0 --dry-run lists it", async () => {
    const id = idIn(await runPiped(home, ["chat"], "prune me\n/exit\n"));
    const dry = await runInProcess(["sessions", "prune", "--older-than", "0", "--dry-run", "--json"], home.env);
    expect(dry.code).toBe(0);
    expect((JSON.parse(dry.stdout) as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id)).toEqual([id]);
  });

  it("-c and -r reopen a session ended on exit (live while chatting, same id) and end it again on the way out", async () => {
    const id = idIn(await runPiped(home, ["chat"], "first\n"));
    const db = await database();
    const firstEnd = (await db.getSession(id))!.endedAt;
    expect(firstEnd).not.toBeNull();
    for (const args of [["-c"], ["-r", id]]) {
      const run = startInProcess(["chat", ...args], home.env);
      run.stdin.write("again\n");
      await run.waitFor("the echo", () => run.stdout().includes("Echo: again"));
      expect(await db.getSession(id), args.join(" ")).toMatchObject({ endedAt: null, endReason: null });
      run.stdin.end();
      const result = await run.done;
      expect(result.code).toBe(0);
      expect(idIn(result.stdout)).toBe(id);
      expect(await db.getSession(id)).toMatchObject({ endReason: "user_exit" });
    }
    expect((await db.getSession(id))!.messageCount).toBe(6);
    expect((await db.listSessions({ sources: ["cli"] })).items.map((s) => s.id)).toEqual([id]);
  });

  it("two chats on one session: when one exits, the other keeps the session (it reopens it) and ends it when it exits", async () => {
    const first = startInProcess(["chat"], home.env);
    first.stdin.write("from the first\n/status\n");
    await first.waitFor("the first chat's /status", () => CLI_ID.test(first.stdout()) && first.stdout().includes("Session:"));
    const id = new RegExp(`Session: (${CLI_ID.source})`).exec(first.stdout())![1]!;
    const second = startInProcess(["chat", "-r", id], home.env);
    second.stdin.write("from the second\n");
    await second.waitFor("the second chat's echo", () => second.stdout().includes("Echo: from the second"));

    first.stdin.end();
    expect(idIn((await first.done).stdout)).toBe(id);
    const db = await database();
    expect(await db.getSession(id)).toMatchObject({ endReason: "user_exit" });

    second.stdin.write("still here\n/status\n");
    await second.waitFor("the second chat's /status", () => second.stdout().includes("Session:"));
    expect(second.stdout()).toContain(`Session: ${id}`);
    expect(await db.getSession(id)).toMatchObject({ endedAt: null, messageCount: 6 });
    second.stdin.end();
    expect(idIn((await second.done).stdout)).toBe(id);
    expect(await db.getSession(id)).toMatchObject({ endReason: "user_exit", messageCount: 6 });
    expect((await db.getMessages(id)).map((m) => m.content)).toContain("still here");
  });

  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    it(`${signal} ends the chat process (exit 0) and its session with reason user_exit`, async () => {
      const { chat, id } = await chatting();
      chat.child.kill(signal);
      const status = await withDeadline(chat.exited, { timeoutMs: 20_000, what: `the chat to exit on ${signal}`, describe: () => chat.output() });
      expect(status).toEqual({ code: 0, signal: null });
      expect(idIn(chat.output())).toBe(id);
      const db = await database();
      const session = await db.getSession(id);
      expect(session).toMatchObject({ messageCount: 2, endReason: "user_exit" });
      expect(session!.endedAt).not.toBeNull();
    });
  }

  it("SIGKILL leaves the session live; the next start leaves a recent one alone (another terminal may use it) and ends one idle for a day as abandoned", async () => {
    const { chat, id } = await chatting();
    chat.child.kill("SIGKILL");
    expect((await withDeadline(chat.exited, { timeoutMs: 20_000, what: "the killed chat to end" })).signal).toBe("SIGKILL");
    const db = await database();
    expect(await db.getSession(id)).toMatchObject({ endedAt: null, messageCount: 2 });

    // What a terminal killed two days ago left: a live cli session in its lane, idle since.
    const now = Date.now() / 1000;
    const lastActive = Math.floor(now - 2 * 86_400);
    const old = await db.createSession({
      id: "20260101_000000_abcdef",
      source: "cli",
      sessionKey: "agent:main:cli:dm:20260101_000000_abcdef",
      chatType: "dm",
      startedAt: lastActive - 60,
    });
    await db.appendMessage(old.id, { role: "user", content: "left behind", timestamp: lastActive });
    // And one from another platform, as idle: not a terminal session, never touched.
    const telegram = await db.createSession({ source: "telegram", startedAt: lastActive - 60 });
    await db.appendMessage(telegram.id, { role: "user", content: "on telegram", timestamp: lastActive });

    const next = idIn(await runPiped(home, ["chat"], "next\n"));
    expect(next).not.toBe(id);
    expect(await db.getSession(id)).toMatchObject({ endedAt: null });
    expect(await db.getSession(old.id)).toMatchObject({ endReason: "abandoned", endedAt: lastActive });
    expect(await db.getSession(telegram.id)).toMatchObject({ endedAt: null });
    // Ended, it is what retention removes; the recent live one is not.
    const dry = await runInProcess(["sessions", "prune", "--older-than", "1", "--dry-run", "--json"], home.env);
    expect((JSON.parse(dry.stdout) as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id)).toEqual([old.id]);

    // Resuming the abandoned session reopens it, as -r does for any ended session.
    const resumed = await runPiped(home, ["chat", "-r", old.id], "back again\n");
    expect(idIn(resumed)).toBe(old.id);
    expect(await db.getSession(old.id)).toMatchObject({ endReason: "user_exit", messageCount: 3 });
  });

  it("auto-prune at a chat's start removes terminal sessions that ended on exit", async () => {
    const id = idIn(await runPiped(home, ["chat"], "old news\n"));
    home.writeConfig("autoPrune:\n  enabled: true\n  retentionDays: 0\n  minIntervalHours: 0\n");
    const next = idIn(await runPiped(home, ["chat"], "fresh\n"));
    const db = await database();
    expect(await db.getSession(id)).toBeNull();
    expect(await db.getSession(next)).toMatchObject({ endReason: "user_exit" });
  });
});
