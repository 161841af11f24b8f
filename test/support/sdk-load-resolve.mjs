// The resolve hook registered by sdk-load-hook.mjs (runs on the loader thread).
import { appendFileSync } from "node:fs";

const SDK =
  /^(grammy|@grammyjs\/|discord\.js|@discordjs\/|@slack\/|matrix-js-sdk|matrix-widget-api|matrix-events-sdk|@matrix-org\/|ws$|@modelcontextprotocol\/)/u;
let log = null;

export function initialize(data) {
  log = data?.log ?? null;
}

export async function resolve(specifier, context, next) {
  if (log !== null && SDK.test(specifier)) appendFileSync(log, `${specifier}\n`);
  return next(specifier, context);
}
