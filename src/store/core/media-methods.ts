/**
 * The {@link MediaStore} methods, once for every backend (see `../contract/media.ts`).
 *
 * PLACEHOLDER: the media-store branch replaces every function here.
 *
 * @module
 */
import type { MediaCheck, MediaInput, PutMediaOptions, SessionAttachment, StoredMedia, SweepMediaOptions } from "../contract.js";
import type { StoreDialect } from "./store-dialect.js";

const todo = (): never => {
  throw new Error("media store: not implemented yet");
};

export async function putMedia(_d: StoreDialect<unknown>, _input: MediaInput, _options: PutMediaOptions): Promise<StoredMedia> {
  return todo();
}
export async function getMedia(_d: StoreDialect<unknown>, _sha256: string): Promise<StoredMedia | null> {
  return todo();
}
export async function readMedia(_d: StoreDialect<unknown>, _sha256: string): Promise<Uint8Array | null> {
  return todo();
}
export async function streamMedia(_d: StoreDialect<unknown>, _sha256: string): Promise<AsyncIterable<Uint8Array> | null> {
  return todo();
}
export async function listAttachments(_d: StoreDialect<unknown>, _sessionId: string): Promise<SessionAttachment[]> {
  return todo();
}
export async function findAttachment(_d: StoreDialect<unknown>, _sessionId: string, _sha256: string): Promise<SessionAttachment | null> {
  return todo();
}
export async function sweepMedia(_d: StoreDialect<unknown>, _options: SweepMediaOptions): Promise<number> {
  return todo();
}
export async function checkMedia(_d: StoreDialect<unknown>, _options: { verify?: boolean }): Promise<MediaCheck> {
  return todo();
}
