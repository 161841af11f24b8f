/**
 * What the documentation example tests share: reading the fenced code blocks of a Markdown page, and running
 * an example's command with a deadline.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { withDeadline } from "../support/wait-for.js";

/** One fenced code block of a Markdown page. */
export interface Block {
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The `## ` section it is in. */
  section: string;
}

/** The fenced code blocks of a Markdown text, also those indented inside a list item (the indent removed). */
export function codeBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const out: Block[] = [];
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (text.startsWith("## ")) section = text.slice(3).trim();
    const fence = /^( *)```(\w*)\s*$/u.exec(text);
    if (fence === null) continue;
    const indent = fence[1]!.length;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^ *```\s*$/u.test(lines[i]!); i++) body.push(lines[i]!.slice(indent));
    out.push({ lang: fence[2] ?? "", code: body.join("\n"), line: start + 1, section });
  }
  return out;
}

/** What {@link run} resolves with. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command; resolves with its exit code and output (SIGKILL and an error after `timeoutMs`, default 60 s). */
export async function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunResult> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const closed = new Promise<RunResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  try {
    return await withDeadline(closed, {
      timeoutMs: options.timeoutMs ?? 60_000,
      what: `${command} ${args.join(" ")} to finish`,
      describe: () => `stdout: ${stdout}\nstderr: ${stderr}`,
    });
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}
