/**
 * The {@link GatewayState} role: everything a chat gateway keeps beside the transcripts, made of
 * the routing, alias, queue, lease, handoff and pairing roles. Part of the storage contract (see
 * `./index.ts`).
 *
 * @module
 */
import type { AliasStore } from "./aliases.js";
import type { HandoffStore } from "./handoffs.js";
import type { InboundClaimStore } from "./inbound-claims.js";
import type { LeaseStore } from "./leases.js";
import type { PairingStore } from "./pairing.js";
import type { QueueStore } from "./queue.js";
import type { RouteStore } from "./routes.js";

/**
 * Everything a chat gateway keeps beside the transcripts: routing entries, identity
 * aliases, inbound queues, leases, handoffs, pairing and inbound claims.
 */
export interface GatewayState extends RouteStore, AliasStore, QueueStore, LeaseStore, HandoffStore, PairingStore, InboundClaimStore {}
