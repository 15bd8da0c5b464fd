/**
 * The whole protocol without the I/O (`@rateguard/guard/core`):
 * enforcement, allocation, membership, and the wire format (`encode`,
 * `decode`, `Address`, the message types), with the limits, decisions and
 * errors they speak in. No sockets, no timers, no clock: time is passed in
 * and randomness is seeded, so a node is a state machine the runtime (or a
 * simulator) drives with datagrams and timeouts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Address,
 *   COLD_FRACTION,
 *   Enforcer,
 *   FleetNode,
 *   GUARD_BOUNDS,
 *   Limit,
 *   LimitBook,
 *   PartitionPolicy,
 *   PUBLIC_HASH_KEY,
 * } from "@rateguard/guard/core";
 *
 * const book = new LimitBook(Limit.perSecond(1_000), {
 *   maxClasses: GUARD_BOUNDS.maxClasses.default,
 *   maxKeyLimits: GUARD_BOUNDS.maxKeyLimits.default,
 * });
 * const enforcer = new Enforcer(book, {
 *   capacity: 2 * GUARD_BOUNDS.trackedKeys.default,
 *   overflowScale: COLD_FRACTION,
 *   fleet: { hashKey: PUBLIC_HASH_KEY },
 * });
 * const node = new FleetNode({
 *   address: Address.parse("10.0.0.3:7946"),
 *   book,
 *   enforcer,
 *   policy: PartitionPolicy.holdDown(),
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

export * from "./membership/mod.ts"; // with the wire format, src/proto
export {
  FleetNode,
  type FleetNodeOptions,
  type FleetStats,
  type RuleChange,
} from "./fleet_node.ts";
export {
  BlockedUntil,
  type FleetRulesStats,
  type Origin,
  RULE_KINDS,
  type RuleEntry,
  type RuleKind,
  type RuleValue,
  type Version,
} from "./rules_sync/mod.ts";
export {
  type BatchDecision,
  Enforcer,
  type EnforcerCounters,
  type EnforcerOptions,
  type EnforcerStats,
  type Traced,
} from "./enforcer.ts";
export {
  type ClassEntry,
  type KeyLimitEntry,
  type KeyLimitSpec,
  LimitBook,
  type LimitBookOptions,
  type ShadowEntry,
} from "./rules.ts";
export type { Rule } from "./rule.ts";
export type { AllocationStats, HotKeyView, MemberShare } from "./allocation/allocator.ts";
export {
  decodeReports,
  type DemandGroup,
  type DemandRecord,
  encodeReports,
  type RelayedGroup,
  type ReportsResult,
} from "./allocation/report.ts";
export { type Hash64, type HashKey, hashKey, keyHash, PUBLIC_HASH_KEY } from "./hash.ts";
export { PartitionPolicy, type PartitionPolicyKind } from "./partition.ts";
export { KeyLimit, Limit, MAX_BURST } from "./limit.ts";
export { Decision } from "./decision.ts";
export type { Rate } from "./gcra.ts";
export { OperationalError, RateguardError, type RateguardErrorCode } from "./errors.ts";
export { type AuthConfig, authConfig, GossipAuth, type GossipAuthMode, Secret } from "./auth.ts";
export {
  type BatchItem,
  type CheckOptions,
  COLD_FRACTION,
  DEFAULT_PARTITION_POLICY,
  FLOOR_FRACTION,
  GUARD_BOUNDS,
  HTTP_BOUNDS,
  type KeyOptions,
  type NumericOption,
  type OptionBounds,
} from "./options.ts";
