/**
 * An async iterable read from now on: its first item is asked for at once, and the rest as the
 * consumer asks. The store core loads its import path with `import()` (issue 31), which puts a
 * pause between `importSessions(lines)` and the first read of `lines`; a source that emits as
 * soon as it exists (a `readline` interface over a stream) would lose its first lines in that
 * pause. Started at once, the source is attached before the pause, as it was when the import
 * code was loaded with the store.
 *
 * @module
 */

/** The lines of an import: read from now on if they are asynchronous (an array needs nothing). */
export interface StartedLines<T> {
  lines: AsyncIterable<T> | Iterable<T>;
  /** Lets go of the source when the import stops before reading it to the end. */
  close(): Promise<void>;
}

/** `source`, its reading started (see the module). */
export function startReading<T>(source: AsyncIterable<T> | Iterable<T>): StartedLines<T> {
  if (!(Symbol.asyncIterator in source)) return { lines: source, close: async () => {} };
  const iterator = source[Symbol.asyncIterator]();
  let first: Promise<IteratorResult<T>> | null = iterator.next();
  // A failure of the first read is met by the consumer's first next(); not unhandled meanwhile.
  first.catch(() => {});
  let finished = false;
  const next = async (): Promise<IteratorResult<T>> => {
    const pending = first ?? iterator.next();
    first = null;
    const result = await pending;
    if (result.done === true) finished = true;
    return result;
  };
  const close = async (): Promise<void> => {
    if (finished) return;
    finished = true;
    await iterator.return?.();
  };
  const lines: AsyncIterable<T> = {
    [Symbol.asyncIterator]: () => ({
      next,
      return: async (value?: unknown) => {
        await close();
        return { done: true, value } as IteratorResult<T>;
      },
    }),
  };
  return { lines, close };
}
