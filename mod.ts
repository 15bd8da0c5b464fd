/**
 * rateguard: one rate limit per key across a whole fleet of service
 * instances. Each instance decides locally, from memory, in well under a
 * microsecond; nothing on the request path talks to anyone.
 *
 * A guard runs standalone, every key enforced by GCRA on the instance that
 * checks it, or joins a fleet over UDP gossip and takes a share of each
 * limit in proportion to its demand; with classes, limits for single keys,
 * shadow limits and a dry run either way.
 *
 * @example
 * ```ts
 * import { Guard, Limit } from "@rateguard/guard";
 *
 * const guard = await Guard.builder()
 *   .defaultLimit(Limit.perMinute(1_000))
 *   .class("pro", Limit.perSecond(100))
 *   .spawn();
 *
 * const decision = guard.check("tenant:42");
 * if (!decision.allowed) {
 *   console.log(`retry in ${Math.ceil(decision.retryAfterMs / 1000)} s`);
 * }
 * ```
 *
 * @module
 */
export { Guard, GuardBuilder } from "./src/runtime/guard.ts";
export {
  COLD_FRACTION,
  DEFAULT_PARTITION_POLICY,
  FLOOR_FRACTION,
  GUARD_BOUNDS,
  HTTP_BOUNDS,
} from "./src/core/options.ts";
export type {
  BatchItem,
  CheckOptions,
  GuardOptions,
  KeyOptions,
  NumericOption,
  OptionBounds,
} from "./src/core/options.ts";
export type { FleetRulesStats, RejectedDatagrams, Stats } from "./src/runtime/stats.ts";
export type { DeniedKey, KeyStats } from "./src/runtime/keystats.ts";
export type { AcquireOptions } from "./src/runtime/acquire.ts";
export type {
  FleetView,
  HotKeyView,
  MemberShare,
  MemberView,
  NamedDeniedKey,
} from "./src/runtime/fleet_view.ts";
export type { GossipCounters } from "./src/runtime/gossip.ts";
export { KeyLimit } from "./src/core/key_limit.ts";
export { Limit, MAX_BURST } from "./src/core/limit.ts";
export { Decision } from "./src/core/decision.ts";
export type { BatchDecision, Traced } from "./src/core/enforcer.ts";
export type { ClassEntry, KeyLimitEntry, KeyLimitSpec, ShadowEntry } from "./src/core/rules.ts";
export { PartitionPolicy } from "./src/core/partition.ts";
export type { PartitionPolicyKind } from "./src/core/partition.ts";
export { OperationalError, RateguardError } from "./src/core/errors.ts";
export { GossipAuth, Secret } from "./src/core/auth.ts";
export type { GossipAuthMode } from "./src/core/auth.ts";
export type { RateguardErrorCode } from "./src/core/errors.ts";
export { saltHashKey } from "./src/runtime/salt.ts";
export type { HashKey } from "./src/core/hash.ts";
