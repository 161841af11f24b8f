import { spawn } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { ToolCall } from "../src/index.js";
import { log } from "./log.js";

/** `meta.json` of a generated dataset. */
export interface DatasetMeta {
  size: string;
  sessions: number;
  messages: number;
  /** The fixed "now" of the data, epoch seconds. */
  clock: number;
}

/** A `{"type":"session",…}` line. */
export interface SessionLine {
  type: "session";
  id: string;
  source: string;
  user_id: string | null;
  model: string | null;
  title: string | null;
  parent_session_id: string | null;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
}

/** A `{"type":"message",…}` line. */
export interface MessageLine {
  type: "message";
  session_id: string;
  role: string;
  content: string;
  tool_calls?: ToolCall[];
  tool_name?: string;
  tool_call_id?: string;
  timestamp: number;
  token_count: number | null;
  finish_reason?: string | null;
}

/** A `{"type":"end",…}` line. */
export interface EndLine {
  type: "end";
  session_id: string;
  ended_at: number;
  end_reason: string;
}

export type DatasetLine = SessionLine | MessageLine | EndLine;

/** Where a dataset lives and what it holds. */
export interface Dataset {
  /** The size argument it was generated with (`small`, …, or a count). */
  size: string;
  dir: string;
  jsonlPath: string;
  queriesPath: string;
  meta: DatasetMeta;
}

/** Sessions of the file in file order: ids, and the non-null titles. */
export interface SessionIndex {
  ids: string[];
  titles: string[];
}

/**
 * The dataset of `size` in `<projectRoot>/bench-data/<size>/`, generated with
 * `../shared/bench/gen-dataset.mjs` unless its `meta.json` (written last) exists.
 */
export async function ensureDataset(projectRoot: string, size: string): Promise<Dataset> {
  const dir = resolve(projectRoot, "bench-data", size);
  const metaPath = join(dir, "meta.json");
  if (existsSync(metaPath)) {
    log(`reusing dataset ${dir}`);
  } else {
    const generator = resolve(projectRoot, "../shared/bench/gen-dataset.mjs");
    if (!existsSync(generator))
      throw new Error(
        `The dataset generator ${generator} is missing: the shared folder (bench/, fixtures/) must sit beside this checkout, as ../shared. Put it there (a copy or a symlink), or generate bench-data/${size}/ elsewhere and copy it in.`,
      );
    log(`generating dataset ${size} into ${dir}`);
    await mkdir(dir, { recursive: true });
    await runGenerator(generator, size, dir);
  }
  const meta = JSON.parse(await readFile(metaPath, "utf8")) as DatasetMeta;
  return { size, dir, jsonlPath: join(dir, "dataset.jsonl"), queriesPath: join(dir, "queries.json"), meta };
}

/** Runs the generator with its stdout sent to our stderr (stdout carries only the result). */
function runGenerator(generator: string, size: string, dir: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [generator, size, dir], { stdio: ["ignore", 2, 2] });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`gen-dataset.mjs failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/** Parses one dataset line, checking its `type`. */
export function parseLine(text: string, lineNo: number): DatasetLine {
  const value: unknown = JSON.parse(text);
  const type = (value as { type?: unknown } | null)?.type;
  if (type === "session" || type === "message" || type === "end") return value as DatasetLine;
  throw new Error(`dataset.jsonl line ${lineNo}: unknown line type ${JSON.stringify(type)}`);
}

/** The lines of dataset.jsonl in order, streamed (readline pauses the file when we are slow). */
export async function* readLines(path: string): AsyncGenerator<DatasetLine> {
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNo = 0;
  try {
    for await (const text of rl) {
      lineNo++;
      if (text.length > 0) yield parseLine(text, lineNo);
    }
  } finally {
    rl.close();
  }
}

/** Session ids and non-null titles in file order (a second, untimed pass over the file). */
export async function readSessionIndex(path: string): Promise<SessionIndex> {
  const ids: string[] = [];
  const titles: string[] = [];
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const text of rl) {
    lineNo++;
    if (!text.startsWith('{"type":"session"')) continue;
    const line = parseLine(text, lineNo);
    if (line.type !== "session") continue;
    ids.push(line.id);
    if (line.title !== null) titles.push(line.title);
  }
  return { ids, titles };
}

/** The 200 search queries. */
export async function readQueries(path: string): Promise<string[]> {
  const value: unknown = JSON.parse(await readFile(path, "utf8"));
  if (!Array.isArray(value) || !value.every((q) => typeof q === "string")) {
    throw new Error(`${path}: expected a JSON array of strings`);
  }
  return value;
}
