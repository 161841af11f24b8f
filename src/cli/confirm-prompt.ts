/**
 * Yes/no questions on the terminal: asked on stderr (stdout stays clean for pipes and
 * `--json`), answered on the command's stdin. Only a terminal can answer; commands refuse
 * instead of waiting on a pipe.
 *
 * @module
 */
import { createInterface } from "node:readline";
import type { CliIo } from "./cli-output.js";

/** Whether a person can answer a question: stdin is a terminal. */
export function canPrompt(io: CliIo): boolean {
  return io.stdin.isTTY === true;
}

/**
 * Asks `question` (e.g. `Delete session 'x' and all its messages? [y/N]`) on stderr and
 * resolves `true` only for `y` or `yes` (any case). Enter, any other answer and end of input
 * (Ctrl-D) resolve `false`; Ctrl-C interrupts the process as usual.
 *
 * @example
 * if (!canPrompt(io)) throw new CliError("TL_ERR_CONFIRMATION_REQUIRED", "Pass --yes.");
 * if (!(await confirm(io, "Delete it? [y/N]"))) return;
 */
export async function confirm(io: CliIo, question: string): Promise<boolean> {
  // Not in readline's terminal mode: the terminal's own line editing and echo are enough for
  // a y/N answer, and no cursor-control sequences are written.
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  return new Promise<boolean>((resolve) => {
    let answered = false;
    const finish = (yes: boolean): void => {
      if (answered) return;
      answered = true;
      rl.close();
      resolve(yes);
    };
    rl.on("close", () => {
      if (!answered) io.stderr.write("\n");
      finish(false);
    });
    rl.question(`${question} `, (answer) => finish(/^y(es)?$/iu.test(answer.trim())));
  });
}
