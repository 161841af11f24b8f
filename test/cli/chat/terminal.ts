/**
 * Driving `threadline` in a real terminal: a tmux server on its own socket (`-L`) running
 * the built bin (checked to be current: {@link builtCli}), keys sent with send-keys, the screen read with
 * capture-pane; plus a temp THREADLINE_HOME with a SQLite database, and piped (non-terminal)
 * runs in process for set-up.
 *
 * @module
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { builtCli, runInProcess, shellQuote } from "../cli-run.js";

const run = promisify(execFile);

/** Session ids of terminal chats. */
export const CLI_ID = /\d{8}_\d{6}_[0-9a-f]{6}/;

/** A temp data home: THREADLINE_HOME, its SQLite database and an environment without model settings. */
export interface TempHome {
  dir: string;
  home: string;
  dbPath: string;
  env: NodeJS.ProcessEnv;
  /** Writes `config.yaml` in the home. */
  writeConfig(yaml: string): void;
  remove(): void;
}

/** Makes a temp home (no provider settings leak in from the outer environment). */
export function tempHome(): TempHome {
  const dir = mkdtempSync(join(tmpdir(), "tl-chat-"));
  const home = join(dir, "home");
  const dbPath = join(home, "state.db");
  const env: NodeJS.ProcessEnv = {};
  for (const name of ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, { THREADLINE_HOME: home, THREADLINE_DB: dbPath, NO_COLOR: "1", LANG: process.env["LANG"] ?? "C.UTF-8" });
  execFileSync("mkdir", ["-p", home]);
  return {
    dir,
    home,
    dbPath,
    env,
    writeConfig: (yaml) => writeFileSync(join(home, "config.yaml"), yaml),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs `threadline <args>` in process with piped stdin (no terminal); returns stdout, failing on a non-zero exit. */
export async function runPiped(home: TempHome, args: string[], input: string): Promise<string> {
  const result = await runInProcess(args, home.env, { input, timeoutMs: 20_000 });
  if (result.code !== 0) throw new Error(`threadline ${args.join(" ")} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result.stdout;
}

/** Runs `threadline <args>` in process with piped stdin and reports the exit code and both streams. */
export async function runPipedStatus(home: TempHome, args: string[], input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const result = await runInProcess(args, home.env, { input, timeoutMs: 20_000 });
  return { status: result.code, stdout: result.stdout, stderr: result.stderr };
}

/** One tmux server with one window running a command. */
export class Terminal {
  readonly socket: string;
  #killed = false;

  private constructor(socket: string) {
    this.socket = socket;
  }

  /**
   * Starts `threadline <args>` (the built bin) in a fresh tmux server
   * (200×50). When the command ends the pane prints `[exited <code>]` and stays open.
   */
  static async start(home: TempHome, args: string[], size: { width?: number; height?: number } = {}): Promise<Terminal> {
    const socket = `tl-test-${process.pid}-${randomBytes(4).toString("hex")}`;
    const terminal = new Terminal(socket);
    // After the command the pane stays open, its screen readable, until kill().
    const command = `${[...builtCli(), ...args].map(shellQuote).join(" ")}; echo "[exited $?]"; exec tail -f /dev/null`;
    await run(
      "tmux",
      ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", String(size.width ?? 200), "-y", String(size.height ?? 50), command],
      { env: { ...home.env, TERM: "xterm-256color" } },
    );
    return terminal;
  }

  async #tmux(args: string[]): Promise<string> {
    const { stdout } = await run("tmux", ["-L", this.socket, ...args]);
    return stdout;
  }

  /** Types text literally (no Enter). */
  async type(text: string): Promise<void> {
    await this.#tmux(["send-keys", "-t", "main", "-l", text]);
  }

  /** Sends tmux key names (`Enter`, `Escape`, `Up`, `C-d`, …). */
  async keys(...names: string[]): Promise<void> {
    await this.#tmux(["send-keys", "-t", "main", ...names]);
  }

  /** Types a line and presses Enter. */
  async line(text: string): Promise<void> {
    await this.type(text);
    await this.keys("Enter");
  }

  /** The screen and its scrollback, wrapped lines joined. */
  async screen(): Promise<string> {
    return this.#tmux(["capture-pane", "-p", "-J", "-S", "-", "-t", "main"]);
  }

  /** The visible screen only. */
  async visible(): Promise<string> {
    return this.#tmux(["capture-pane", "-p", "-J", "-t", "main"]);
  }

  /**
   * Polls the screen until `expected` shows (a string, a pattern, or a predicate over the
   * text); returns the screen. Fails with the last screen after `timeoutMs`.
   */
  async waitFor(expected: string | RegExp | ((screen: string) => boolean), options: { timeoutMs?: number; visibleOnly?: boolean } = {}): Promise<string> {
    const test =
      typeof expected === "function" ? expected : typeof expected === "string" ? (s: string) => s.includes(expected) : (s: string) => expected.test(s);
    const deadline = Date.now() + (options.timeoutMs ?? 15_000);
    let last = "";
    for (;;) {
      last = options.visibleOnly ? await this.visible() : await this.screen();
      if (test(last)) return last;
      if (Date.now() > deadline) throw new Error(`terminal never showed ${String(expected)}; the screen was:\n${last}`);
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
  }

  /** Kills the tmux server and removes its socket file. */
  async kill(): Promise<void> {
    if (this.#killed) return;
    this.#killed = true;
    const path = (await this.#tmux(["display-message", "-p", "#{socket_path}"]).catch(() => "")).trim();
    await this.#tmux(["kill-server"]).catch(() => {});
    if (path !== "") rmSync(path, { force: true });
  }
}
