/**
 * Per-person memory of the store core ({@link StoreCore}), as functions of the dialect.
 *
 * @module
 */
import type { ListMemoriesOptions, MemoryKind, MemoryOwner, MemoryRecord, MemoryWrite, Page } from "../contract.js";
import { checkListMemories, checkMemoryKind, checkMemoryOwner, checkMemoryWrite } from "../memory-input.js";
import * as memory from "./memory-steps.js";
import type { StoreDialect } from "./store-dialect.js";

export async function getMemory(d: StoreDialect<unknown>, owner: MemoryOwner, kind: MemoryKind): Promise<MemoryRecord | null> {
  const who = checkMemoryOwner(owner);
  const k = checkMemoryKind(kind);
  return d.read("reading a memory", () => memory.getMemory(who, k));
}

export async function writeMemory(d: StoreDialect<unknown>, write: MemoryWrite): Promise<MemoryRecord | null> {
  const checked = checkMemoryWrite(write);
  return d.writeStatement(`writing the ${checked.kind} memory of ${checked.owner.platform}:${checked.owner.userId}`, () => memory.writeMemory(checked));
}

export async function clearMemory(d: StoreDialect<unknown>, owner: MemoryOwner, kind?: MemoryKind): Promise<number> {
  const who = checkMemoryOwner(owner);
  const k = kind === undefined ? null : checkMemoryKind(kind);
  return d.writeStatement(`clearing the memory of ${who.platform}:${who.userId}`, () => memory.clearMemory(who, k));
}

export async function listMemories(d: StoreDialect<unknown>, options?: ListMemoriesOptions): Promise<Page<MemoryRecord>> {
  const checked = checkListMemories(options);
  return d.read("listing memories", () => memory.listMemories(checked));
}
