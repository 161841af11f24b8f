/**
 * `threadline serve` sweeps stored media nothing refers to: at start and then hourly, with the
 * inbound-claims prune. A blob past the grace period that no message refers to goes; a fresh
 * one (a turn may be about to refer to it) and a referenced one stay; the count is logged.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../src/index.js";
import { parseServeConfig, startGateway, type RunningGateway } from "../../src/serve/index.js";
import { MEDIA_GRACE_SECONDS } from "../../src/store/index.js";
import { pngBytes } from "../cli/sessions/media-fixtures.js";
import { waitFor } from "../support/wait-for.js";

let home: string | null = null;
let gateway: RunningGateway | null = null;
afterEach(async () => {
  await gateway?.stop();
  gateway = null;
  if (home !== null) rmSync(home, { recursive: true, force: true });
  home = null;
});

describe("serve: the media sweep", { timeout: 60_000 }, () => {
  it("removes a blob past the grace period that nothing refers to, keeps a fresh one and a referenced one, and logs the count", async () => {
    home = mkdtempSync(join(tmpdir(), "threadline-media-sweep-"));
    const target = join(home, "state.db");
    const old = Date.now() / 1000 - MEDIA_GRACE_SECONDS - 600;
    const db = await openSessionDB(target);
    const [orphan, fresh, kept] = [pngBytes(3000), pngBytes(3001), pngBytes(3002)];
    const orphanSha = (await db.putMedia({ bytes: orphan }, { mimeType: "image/png", at: old })).sha256;
    const freshSha = (await db.putMedia({ bytes: fresh }, { mimeType: "image/png" })).sha256;
    const keptSha = (await db.putMedia({ bytes: kept }, { mimeType: "image/png", at: old })).sha256;
    const session = await db.createSession({ source: "telegram" });
    await db.appendMessage(session.id, {
      role: "user",
      content: [{ type: "attachment", attachment: { sha256: keptSha, kind: "image", mimeType: "image/png", size: kept.length } }],
    });
    await db.close();

    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const env: NodeJS.ProcessEnv = { THREADLINE_HOME: home, PATH: process.env["PATH"] ?? "" };
    const config = parseServeConfig({ gateway: { host: "127.0.0.1", port: 0 } }, { env });
    gateway = await startGateway({ config, logger, env, database: target });
    const running = gateway;
    await waitFor(async () => (await running.db.getMedia(orphanSha)) === null, { what: "the orphaned blob to be swept" });
    const logged = await waitFor(() => lines.find((l) => l["msg"] === "media sweep removed blobs nothing refers to"), { what: "the sweep's log line" });
    expect(logged["removed"]).toBe(1);
    expect(await running.db.getMedia(freshSha)).not.toBeNull();
    expect(await running.db.getMedia(keptSha)).not.toBeNull();
    expect(lines.filter((l) => l["msg"] === "media sweep failed")).toEqual([]);
  });
});
