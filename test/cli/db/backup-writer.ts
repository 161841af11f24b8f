/**
 * A gateway's write load, as a process of its own (run with `node --import tsx`): appends
 * messages to a SQLite file through the store, a new session every 20 messages and a 32 KiB
 * attachment blob every 10, until its stdin closes, `maxMessages` are written or `maxSeconds`
 * pass (bounded either way). It prints `ready` once the first 200 messages are written, and
 * `done <messages>` at the end.
 *
 * Usage: backup-writer.ts <db file> [maxMessages] [maxSeconds]
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { openSessionDB } from "../../../src/index.js";

const [path, maxArg = "20000", secondsArg = "60"] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: backup-writer.ts <db file> [maxMessages] [maxSeconds]");
const maxMessages = Number(maxArg);
const deadline = Date.now() + Number(secondsArg) * 1000;

let stop = false;
process.stdin.on("end", () => (stop = true));
process.stdin.on("close", () => (stop = true));
process.stdin.resume();

const db = await openSessionDB(path);
let written = 0;
let session = "";
while (!stop && written < maxMessages && Date.now() < deadline) {
  if (written % 20 === 0) session = (await db.createSession({ source: "telegram", userId: "load" })).id;
  if (written % 10 === 0) await db.putMedia({ bytes: randomBytes(32 * 1024) }, { mimeType: "application/octet-stream" });
  await db.appendMessage(session, { role: written % 2 === 0 ? "user" : "assistant", content: `message ${written} ${"x".repeat(200)}` });
  written++;
  if (written === 200) process.stdout.write("ready\n");
}
await db.close();
process.stdout.write(`done ${written}\n`);
process.stdin.destroy();
