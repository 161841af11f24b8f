/**
 * How many terminal columns text takes. Text of characters that are surely one column each
 * (printable ASCII, Latin letters and signs, the common punctuation such as `…`, `–`, `“`) is
 * measured here; anything else (East Asian wide characters, emoji, combining marks, zero-width
 * joiners, variation selectors) by `string-width`, which loads only when such text is measured:
 * {@link loadDisplayWidth} (every action runs after it unless it says it loads it itself, see
 * action-loading.ts) or {@link withDisplayWidth} (renders once, and again after loading it when
 * the text needed it).
 *
 * @module
 */
import { InternalError } from "../store/errors.js";

/** `string-width`, once loaded. */
let fullWidth: ((text: string) => number) | undefined;

/**
 * Characters one column wide whatever the terminal: printable ASCII, Latin-1 and the Latin
 * extensions up to the spacing modifiers (not the soft hyphen, which takes none), and the
 * dashes, quotes, bullets, `…`, `‰`, primes and `※` of General Punctuation. `string-width`
 * gives each of them 1 (checked by test/cli/display-width.test.ts).
 */
const ONE_COLUMN_EACH = /^[\u0020-\u007E\u00A0-\u00AC\u00AE-\u02FF\u2010-\u2027\u2030-\u203B]*$/u;

/** Thrown when text needs `string-width` before it was loaded ({@link withDisplayWidth} catches it). */
class DisplayWidthNotLoaded extends InternalError {
  constructor() {
    super("display width measured before string-width was loaded: await loadDisplayWidth() (or render inside withDisplayWidth) first.");
  }
}

/** Whether every character of `text` is one column wide (then its width is its length). */
export function isOneColumnEach(text: string): boolean {
  return ONE_COLUMN_EACH.test(text);
}

/** Loads `string-width` (once) for the text {@link isOneColumnEach} does not cover. */
export async function loadDisplayWidth(): Promise<void> {
  fullWidth ??= (await import("string-width")).default;
}

/**
 * How many terminal columns `text` takes: East Asian wide characters and emoji count 2,
 * combining marks, zero-width joiners and variation selectors 0 (`string-width`).
 *
 * @throws {InternalError} when `text` needs `string-width` and {@link loadDisplayWidth} has not run.
 */
export function displayWidth(text: string): number {
  if (ONE_COLUMN_EACH.test(text)) return text.length;
  if (fullWidth === undefined) throw new DisplayWidthNotLoaded();
  return fullWidth(text);
}

/**
 * Runs `render` (a pure function that measures text with {@link displayWidth}); when the text
 * needed `string-width` and it was not loaded yet, loads it and runs `render` again.
 *
 * @example
 * io.stdout.write(`${await withDisplayWidth(() => sessionTable(items, { now, color }))}\n`);
 */
export async function withDisplayWidth<T>(render: () => T): Promise<T> {
  try {
    return render();
  } catch (error) {
    if (!(error instanceof DisplayWidthNotLoaded)) throw error;
  }
  await loadDisplayWidth();
  return render();
}
