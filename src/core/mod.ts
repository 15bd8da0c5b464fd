/**
 * A fleet node without the I/O (`@rateguard/guard/core`), for driving one
 * on your own sockets, timers and DNS: a {@link FleetNode} is a state machine
 * you feed datagrams, timeouts and lookups, and read datagrams to send from.
 * No sockets, no timers, no clock: time is passed in and randomness is
 * seeded. This entry exports what that takes and no more (under 40 names,
 * counted by `tests/layout/exports_test.ts`), each below with why; the
 * protocol's parts (membership, allocation, rule sharing, the wire codec)
 * are the node's own, and the library's runtime and simulator import them
 * by their paths.
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

// The node and what it is made of.
/** The state machine to drive: datagrams and timeouts in, datagrams out. */
export { FleetNode } from "./fleet_node.ts";
/** What it is made of and how it is tuned: its constructor's one argument. */
export type { FleetNodeOptions } from "./fleet_options.ts";
/** `FleetNodeOptions.membership`: the seed of its choices and its tunables. */
export type { MembershipOptions } from "./membership/config.ts";
/** The request path a node holds, made first and handed to it. */
export { Enforcer, type EnforcerOptions } from "./enforcer.ts";
/** The limits the enforcer reads, changed live. */
export { LimitBook, type LimitBookOptions } from "./rules.ts";
/** The limits themselves. */
export { KeyLimit } from "./key_limit.ts";
export { Limit } from "./limit.ts";
/** What a partition does to the shares: a node's option. */
export { PartitionPolicy } from "./partition.ts";
/** Every option's default and bounds, and the enforcer's overflow scale. */
export { COLD_FRACTION, GUARD_BOUNDS } from "./options.ts";
/**
 * The key of the 64-bit key hashes (the public one, or one from a salt of
 * your own), and a key's hash under it: how `hotKeys()` and the wire name a key.
 */
export { type HashKey, hashKey, keyHash, PUBLIC_HASH_KEY } from "./hash.ts";

// Your I/O: what goes in and out of the node.
/** Where a datagram comes from and goes to (`handleDatagram`, `pollTransmit`), and its bound. */
export { Address, MAX_DATAGRAM_BYTES } from "../proto/mod.ts";
/** A member's ID (`Address.id`), its name on the wire and in `members()`, with its state. */
export { MemberId, type MemberState, type Peer } from "../proto/mod.ts";
/** A datagram to send, from `pollTransmit()`. */
export type { Transmit } from "./membership/node.ts";
/** A seed name to look up, from `pollResolve()`; its answer goes to `handleResolved`. */
export type { ResolveRequest, UnresolvedSeed } from "./membership/seeds.ts";

// What its checks answer.
/** A check's answer, and a traced check's with its shadow's. */
export { Decision } from "./decision.ts";
/** `checkTraced`, `checkAll`: the traced answer, a batch's items and its answer. */
export type { BatchDecision, Traced } from "./enforcer.ts";
export type { BatchItem } from "./options.ts";

// What it tells about itself.
/** `stats(nowMs)`: the enforcer's, the allocator's, the membership's and the rules' figures. */
export type { FleetStats } from "./fleet_node.ts";
export type { EnforcerCounters, EnforcerStats } from "./enforcer.ts";
export type { AllocationStats, HotKeyView, MemberShare } from "./allocation/allocator.ts";
export type { MembershipStats } from "./membership/stats.ts";
export type { FleetRulesStats } from "./rules_sync/mod.ts";
/** `members()`: each member as this node sees it. */
export type { MemberInfo } from "./membership/extension.ts";

// What it throws.
/** A refusal of a call (a full table, an unknown class), with its code. */
export { RateguardError, type RateguardErrorCode } from "./errors.ts";
