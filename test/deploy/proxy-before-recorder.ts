/**
 * The two shipped proxy examples, each run in front of a recording upstream for the tests of one
 * `describe` block: {@link SHIPPED_PROXIES} to iterate over, {@link proxyBeforeRecorder} to start
 * both in `beforeAll` and stop them in `afterAll`.
 *
 * @module
 */
import { afterAll, beforeAll } from "vitest";
import { startCaddy } from "./proxy-caddy-process.js";
import { startNginx } from "./proxy-nginx-process.js";
import type { ProxyProcess } from "./proxy-process.js";
import { startRecordingUpstream, type RecordingUpstream } from "./proxy-recording-upstream.js";

/** How a proxy example is started in front of an upstream port. */
export type StartProxy = (upstreamPort: number) => Promise<ProxyProcess>;

/** The shipped examples by name, for `describe.each`. */
export const SHIPPED_PROXIES: ReadonlyArray<readonly [string, StartProxy]> = [
  ["nginx", startNginx],
  ["caddy", startCaddy],
];

/** A proxy and the recording upstream behind it; both set once `beforeAll` has run. */
export interface ProxySite {
  upstream: RecordingUpstream;
  proxy: ProxyProcess;
}

/** Starts a recording upstream and `start`'s proxy in front of it for the enclosing `describe` block. */
export function proxyBeforeRecorder(start: StartProxy): ProxySite {
  const site = {} as ProxySite;
  beforeAll(async () => {
    site.upstream = await startRecordingUpstream();
    site.proxy = await start(site.upstream.port);
  });
  afterAll(async () => {
    await site.proxy?.stop();
    await site.upstream?.close();
  });
  return site;
}
