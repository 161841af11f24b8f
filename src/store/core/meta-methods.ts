/**
 * Small named values (meta) of the store core ({@link StoreCore}), as functions of the dialect.
 *
 * @module
 */
import { InvalidInputError } from "../errors.js";
import { checkId, optionalText } from "../input-validation.js";
import { run, value } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";

export async function getMeta(d: StoreDialect<unknown>, key: string): Promise<string | null> {
  checkId(key, "key");
  return d.read("reading meta", function* () {
    const stored = yield* value<string>("SELECT value FROM meta WHERE key = ?", [key]);
    return stored === undefined ? null : d.decodeText(stored);
  });
}

export async function setMeta(d: StoreDialect<unknown>, key: string, value: string): Promise<void> {
  checkId(key, "key");
  if (optionalText(value, "value") === null) throw new InvalidInputError("value must be a string.", { field: "value" });
  const stored = d.encodeText(value);
  await d.write("writing meta", () => run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, stored]));
}

export async function deleteMeta(d: StoreDialect<unknown>, key: string): Promise<boolean> {
  checkId(key, "key");
  return d.write("deleting meta", function* () {
    return (yield* run("DELETE FROM meta WHERE key = ?", [key])) > 0;
  });
}
