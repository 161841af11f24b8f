/** Starts driver.ts as its own process (node + tsx) and hands it jobs over IPC, one at a time. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PROJECT_ROOT } from "./gateway-child.js";
import type { DriverJob, DriverReply, DriverResult } from "./protocol.js";

const DRIVER = fileURLToPath(new URL("./driver.ts", import.meta.url));

export interface DriverHandle {
  pid: number;
  run(job: DriverJob): Promise<DriverResult>;
  stop(): Promise<void>;
}

export function startDriver(): DriverHandle {
  const child = spawn(process.execPath, ["--import", "tsx", DRIVER], { cwd: PROJECT_ROOT, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let current: { resolve: (r: DriverResult) => void; reject: (e: Error) => void } | null = null;
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = true;
      current?.reject(new Error(`the driver exited (${code ?? signal}) during a job`));
      current = null;
      resolve();
    }),
  );
  child.on("message", (raw) => {
    const reply = raw as DriverReply;
    const waiting = current;
    current = null;
    if (waiting === null) return;
    if (reply.ok) waiting.resolve(reply.result);
    else waiting.reject(new Error(`driver: ${reply.error}`));
  });
  return {
    pid: child.pid!,
    run(job: DriverJob): Promise<DriverResult> {
      if (current !== null) return Promise.reject(new Error("the driver runs one job at a time"));
      if (exited) return Promise.reject(new Error("the driver has exited"));
      return new Promise<DriverResult>((resolve, reject) => {
        current = { resolve, reject };
        child.send(job);
      });
    },
    async stop(): Promise<void> {
      if (!exited) child.kill("SIGTERM");
      await exit;
    },
  };
}
