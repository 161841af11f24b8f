/**
 * A process id that no process has: the pid of a child that has run and exited (barring reuse
 * by the system in the meantime).
 *
 * @module
 */
import { spawn } from "node:child_process";

/** Runs an empty Node process to its end and returns its pid. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid!;
  await new Promise((resolve) => child.once("exit", resolve));
  return pid;
}
