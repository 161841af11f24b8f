/**
 * One writer of the concurrent-ingest mode: ingests its slice of the dataset and
 * prints `{ messages, seconds }`. argv: <dataset.jsonl> <db target> <index> <writers>
 */
import { openSessionDB } from "../src/index.js";
import { runIngest } from "./phases/ingest.js";

const [jsonl, target, index, of] = process.argv.slice(2);
const db = await openSessionDB(target!);
try {
  const result = await runIngest(db, jsonl!, { index: Number(index), of: Number(of) });
  process.stdout.write(`${JSON.stringify({ messages: result.messages, seconds: result.seconds })}\n`);
} finally {
  await db.close();
}
