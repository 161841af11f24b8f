/**
 * `threadline service logs` follows the journal until Ctrl-C: it runs `journalctl --user -u
 * threadline.service -n 50 --no-pager -f` (a fake that prints two lines and then waits, like
 * the real one), passes its output through, and on SIGINT stops it and exits 0. In process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startInProcess } from "../cli-run.js";
import { fakeSystemd } from "./fake-systemd.js";

const root = mkdtempSync(join(tmpdir(), "threadline-service-logs-"));
const fake = fakeSystemd();
afterEach(() => {
  fake.remove();
  rmSync(root, { recursive: true, force: true });
});

it("follows the journal until Ctrl-C, then stops journalctl and exits 0", async () => {
  const run = startInProcess(["service", "logs"], { ...fake.env, HOME: root, XDG_CONFIG_HOME: join(root, ".config"), THREADLINE_HOME: join(root, "data") });
  await run.waitFor("the journal's lines", () => run.stdout().includes("gateway log line two\n"));
  expect(fake.calls()).toEqual(["systemctl --user show-environment", "journalctl --user -u threadline.service -n 50 --no-pager -f"]);
  run.signals.emit("SIGINT");
  expect(await run.done).toEqual({ code: 0, stdout: "gateway log line one\ngateway log line two\n", stderr: "" });
});
