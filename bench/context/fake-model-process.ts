/** Starts bench/context/fake-model.ts as a child process and reads its figures. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { FakeModelSettings, FakeModelStats } from "./fake-model.js";

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY = fileURLToPath(new URL("./fake-model.ts", import.meta.url));

/** A running fake model. */
export interface FakeModelProcess {
  pid: number;
  /** `http://127.0.0.1:<port>/v1`. */
  url: string;
  stats(): Promise<FakeModelStats>;
  stop(): Promise<void>;
}

export async function startFakeModel(settings: FakeModelSettings): Promise<FakeModelProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", ENTRY, JSON.stringify(settings)], {
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const nl = buffered.indexOf("\n");
      if (nl >= 0) resolve((JSON.parse(buffered.slice(0, nl)) as { url: string }).url);
    });
    void exited.then(() => reject(new Error("the fake model exited before listening")));
    setTimeout(() => reject(new Error("the fake model did not listen within 30 s")), 30_000).unref();
  });
  const statsUrl = `${url.replace(/\/v1$/u, "")}/bench/stats`;
  return {
    pid: child.pid!,
    url,
    async stats(): Promise<FakeModelStats> {
      const response = await fetch(statsUrl, { signal: AbortSignal.timeout(30_000) });
      if (!response.ok) throw new Error(`the fake model's stats: HTTP ${response.status}`);
      return (await response.json()) as FakeModelStats;
    },
    async stop(): Promise<void> {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
