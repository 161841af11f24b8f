/**
 * The `SessionDB` contract suite: written once against the public contract and run for
 * every backend through a {@link SessionDBTestInitializer}.
 *
 * @example
 * runContract({ name: "sqlite", createStore: () => openSessionDB(tempFile()) });
 *
 * @module
 */

import { afterAll, beforeAll, describe, it } from "vitest";
import type { SessionDBTestInitializer } from "./session-db-test-initializer.js";
import { continuationTests } from "./spec/continuation.js";
import { edgeRulesTests } from "./spec/edge-rules.js";
import { errorsTests } from "./spec/errors.js";
import { executionsTests } from "./spec/executions.js";
import { exportImportTests } from "./spec/export-import.js";
import { gatewayStateTests } from "./spec/gateway-state.js";
import { handoffsTests } from "./spec/handoffs.js";
import { identityScopeTests } from "./spec/identity-scope.js";
import { inboundClaimsTests } from "./spec/inbound-claims.js";
import { insightsTests } from "./spec/insights.js";
import { leasesTests } from "./spec/leases.js";
import { lineageTests } from "./spec/lineage.js";
import { listingTests } from "./spec/listing.js";
import { mediaTests } from "./spec/media.js";
import { memoryTests } from "./spec/memory.js";
import { messagesTests } from "./spec/messages.js";
import { pairingTests } from "./spec/pairing.js";
import { retentionTests } from "./spec/retention.js";
import { rewindTests } from "./spec/rewind.js";
import { searchTests } from "./spec/search.js";
import { sessionsTests } from "./spec/sessions.js";
import { statsMetaTests } from "./spec/stats-meta.js";
import { titlesTests } from "./spec/titles.js";
import { usageTests } from "./spec/usage.js";
import { userScopeTests } from "./spec/user-scope.js";

export type { SessionDBTestInitializer } from "./session-db-test-initializer.js";

/** Every area of the suite, by the name `only` takes. */
export const CONTRACT_AREAS = {
  sessions: sessionsTests,
  usage: usageTests,
  messages: messagesTests,
  rewind: rewindTests,
  titles: titlesTests,
  lineage: lineageTests,
  continuation: continuationTests,
  listing: listingTests,
  search: searchTests,
  "export-import": exportImportTests,
  retention: retentionTests,
  "stats-meta": statsMetaTests,
  insights: insightsTests,
  "edge-rules": edgeRulesTests,
  errors: errorsTests,
  "gateway-state": gatewayStateTests,
  leases: leasesTests,
  handoffs: handoffsTests,
  executions: executionsTests,
  "user-scope": userScopeTests,
  pairing: pairingTests,
  "identity-scope": identityScopeTests,
  memory: memoryTests,
  "inbound-claims": inboundClaimsTests,
  media: mediaTests,
} as const satisfies Record<string, (init: SessionDBTestInitializer) => void>;

/** An area of the contract suite. */
export type ContractArea = keyof typeof CONTRACT_AREAS;

/**
 * Registers the contract suite for one backend. `only` narrows it to some areas;
 * `THREADLINE_STORES=sqlite,postgres` narrows the backends that run.
 */
export function runContract(init: SessionDBTestInitializer, options: { only?: string[] } = {}): void {
  const selected = process.env.THREADLINE_STORES?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (selected && selected.length > 0 && !selected.includes(init.name)) {
    describe(`SessionDB contract: ${init.name}`, () => {
      it.skip(`not selected by THREADLINE_STORES=${process.env.THREADLINE_STORES}`, () => {});
    });
    return;
  }
  const only = options.only;
  if (only) {
    const unknown = only.filter((area) => !(area in CONTRACT_AREAS));
    if (unknown.length > 0) throw new Error(`runContract: unknown area(s) ${unknown.join(", ")}`);
  }

  describe(`SessionDB contract: ${init.name}`, () => {
    if (init.beforeAll) beforeAll(() => init.beforeAll!(), init.beforeAllTimeoutMs);
    if (init.afterAll) afterAll(() => init.afterAll!());
    for (const [area, register] of Object.entries(CONTRACT_AREAS)) {
      if (!only || only.includes(area)) register(init);
    }
  });
}
