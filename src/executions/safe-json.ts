/**
 * Safe serialisation of run results: turns any value into a JSON value without ever
 * throwing, so a save never fails (and never leaves a half-written record) because a result
 * holds an exception, a cycle, a BigInt or a getter that throws.
 *
 * @module
 */

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** An error as stored in a result. */
export interface SerializedError {
  name: string;
  message: string;
  /** `error.code` when it has one. */
  code?: JsonValue;
  /** The serialised `cause`. */
  cause?: JsonValue;
  /** Other own enumerable properties of the error object. */
  [key: string]: JsonValue | undefined;
}

const MAX_DEPTH = 64;

/**
 * A JSON value for anything:
 * - an `Error` (or anything with `name` and `message` that is an instance of Error) → `{ name, message, code?, cause?, …own props }`
 *   (no stack: results are shown to API clients);
 * - a cycle → `"[Circular]"`; deeper than 64 levels → `"[Too deep]"`;
 * - a BigInt → its decimal string; `NaN`/`Infinity` → `null`;
 * - `undefined`, functions and symbols → left out of objects, `null` in arrays;
 * - `toJSON()` is honoured (a `Date` becomes its ISO string); a `Map` becomes an object, a `Set` an array;
 * - a property (or `toJSON`) that throws → `"[Unserializable: <message>]"`;
 * - lone surrogates in strings and keys → U+FFFD.
 */
export function toJsonSafe(value: unknown): JsonValue {
  return convert(value, new Set<object>(), 0) ?? null;
}

/** An error (or any thrown value) as stored in a result. */
export function serializeError(error: unknown): JsonValue {
  return toJsonSafe(error);
}

function unserializable(error: unknown): string {
  let message: string;
  try {
    message = error instanceof Error ? error.message : String(error);
  } catch {
    message = "unknown error";
  }
  return `[Unserializable: ${message.toWellFormed()}]`;
}

function convert(value: unknown, seen: Set<object>, depth: number): JsonValue | undefined {
  switch (typeof value) {
    case "string":
      return value.toWellFormed();
    case "number":
      return Number.isFinite(value) ? value : null;
    case "boolean":
      return value;
    case "bigint":
      return value.toString();
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return null;
  const object = value as object;
  if (seen.has(object)) return "[Circular]";
  if (depth >= MAX_DEPTH) return "[Too deep]";
  seen.add(object);
  try {
    if (object instanceof Error) return convertError(object, seen, depth);
    let toJSON: unknown;
    try {
      toJSON = (object as { toJSON?: unknown }).toJSON;
    } catch (error) {
      return unserializable(error);
    }
    if (typeof toJSON === "function") {
      let replaced: unknown;
      try {
        replaced = (toJSON as () => unknown).call(object);
      } catch (error) {
        return unserializable(error);
      }
      return replaced === object ? convertPlain(object, seen, depth) : convert(replaced, seen, depth + 1);
    }
    if (Array.isArray(object)) return object.map((item) => convert(item, seen, depth + 1) ?? null);
    if (object instanceof Map) {
      const out: JsonObject = {};
      for (const [key, item] of object) {
        const converted = convert(item, seen, depth + 1);
        if (converted !== undefined) out[keyOf(key)] = converted;
      }
      return out;
    }
    if (object instanceof Set) return [...object].map((item) => convert(item, seen, depth + 1) ?? null);
    if (ArrayBuffer.isView(object) && !(object instanceof DataView)) {
      return Array.from(object as unknown as ArrayLike<number | bigint>, (n) => (typeof n === "bigint" ? n.toString() : n));
    }
    return convertPlain(object, seen, depth);
  } finally {
    seen.delete(object);
  }
}

function keyOf(key: unknown): string {
  if (typeof key === "string") return key.toWellFormed();
  try {
    return String(key).toWellFormed();
  } catch {
    return "[key]";
  }
}

function convertPlain(object: object, seen: Set<object>, depth: number): JsonObject {
  const out: JsonObject = {};
  let keys: string[];
  try {
    keys = Object.keys(object);
  } catch (error) {
    return { error: unserializable(error) };
  }
  for (const key of keys) {
    let item: unknown;
    try {
      item = (object as Record<string, unknown>)[key];
    } catch (error) {
      out[key.toWellFormed()] = unserializable(error);
      continue;
    }
    const converted = convert(item, seen, depth + 1);
    if (converted !== undefined) out[key.toWellFormed()] = converted;
  }
  return out;
}

function convertError(error: Error, seen: Set<object>, depth: number): JsonObject {
  const read = (key: string): unknown => {
    try {
      return (error as unknown as Record<string, unknown>)[key];
    } catch (cause) {
      return unserializable(cause);
    }
  };
  const name = read("name");
  const message = read("message");
  const out: JsonObject = {
    name: typeof name === "string" ? name.toWellFormed() : "Error",
    message: typeof message === "string" ? message.toWellFormed() : String(convert(message, seen, depth + 1) ?? ""),
  };
  const own = convertPlain(error, seen, depth);
  delete own["stack"];
  for (const [key, item] of Object.entries(own)) if (!(key in out)) out[key] = item;
  for (const key of ["code", "cause"]) {
    if (key in out) continue;
    const item = read(key);
    const converted = item === undefined ? undefined : convert(item, seen, depth + 1);
    if (converted !== undefined) out[key] = converted;
  }
  if (error instanceof AggregateError && !("errors" in out)) {
    out["errors"] = convert(read("errors"), seen, depth + 1) ?? null;
  }
  return out;
}
