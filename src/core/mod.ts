/**
 * The whole protocol without the I/O: enforcement, allocation, membership
 * and the wire format. No sockets, no timers, no clock: time is passed in
 * and randomness is seeded, so a node is a state machine the runtime (or a
 * simulator) drives with datagrams and timeouts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Address, Enforcer, FleetNode, LimitBook, PartitionPolicy, PUBLIC_HASH_KEY } from "@rateguard/guard/core";
 * import { Limit } from "@rateguard/guard";
 *
 * const book = new LimitBook(Limit.perSecond(1_000), { maxClasses: 64, maxKeyLimits: 4_096 });
 * const enforcer = new Enforcer(book, { capacity: 8_192, overflowScale: 0.5, fleet: { hashKey: PUBLIC_HASH_KEY } });
 * const node = new FleetNode({
 *   address: Address.parse("10.0.0.3:7946"),
 *   book,
 *   enforcer,
 *   policy: PartitionPolicy.holdDown(),
 *   hotKeys: 64,
 *   seeds: ["10.0.0.1:7946"],
 *   membership: { seed: 42 },
 * });
 * node.handleTimeout(0); // from your own timer; then send what pollTransmit() gives
 * assert(node.pollTransmit()?.to.toString() === "10.0.0.1:7946");
 * assert(node.check("", "tenant:42", 1, 0).allowed);
 * ```
 *
 * @module
 */

export * from "./membership/mod.ts";
export { FleetNode, type FleetNodeOptions, type FleetStats } from "./fleet_node.ts";
export {
  type BatchDecision,
  type BatchItem,
  Enforcer,
  type EnforcerCounters,
  type FleetOptions,
  type Traced,
} from "./enforcer.ts";
export { LimitBook, type LimitBookOptions, type Rule } from "./rules.ts";
export {
  type AllocationStats,
  Allocator,
  type AllocatorOptions,
  type Holds,
} from "./allocation/allocator.ts";
export {
  decodeReports,
  type DemandGroup,
  type DemandRecord,
  encodeReports,
} from "./allocation/report.ts";
export { type Hash64, type HashKey, hashKey, keyHash, PUBLIC_HASH_KEY } from "./hash.ts";
export { PartitionPolicy } from "./partition.ts";
