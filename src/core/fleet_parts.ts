/**
 * A fleet node's parts, made from its options and joined: membership's
 * `Node`, the allocator, and, with fleet rules, rule sharing. Membership
 * has one extension slot; the allocator's demand reports and rule sharing's
 * pages ride it side by side, and an observer of member changes hears each
 * change after both. `FleetNode` is the face over what this makes.
 *
 * @module
 */

import { Allocator } from "./allocation/allocator.ts";
import type { FleetNodeOptions } from "./fleet_options.ts";
import { type HashKey, hashKey } from "./hash.ts";
import { checkSeed } from "./membership/config.ts";
import { type MemberChange, type MembershipExtension, Node } from "./membership/mod.ts";
import { GUARD_BOUNDS } from "./options.ts";
import { Prng } from "./prng.ts";
import { type RulesSync, rulesSyncFor } from "./rules_sync/mod.ts";

/** Allocation ticks this many times a protocol period: stats are at most this stale. */
const TICKS_PER_PERIOD = 4;

/** What a fleet node is made of, joined. */
export interface FleetParts {
  /** Membership, with the others on its extension. */
  readonly node: Node;
  /** Allocation. */
  readonly allocator: Allocator;
  /** Rule sharing, with fleet rules. */
  readonly rules: RulesSync | undefined;
  /** How often allocation ticks, ms. */
  readonly tickMs: number;
  /** The member table's bound. */
  readonly maxMembers: number;
}

/**
 * The parts of a node made with `options`; `refused` hears each peer's rule
 * change the book refused (its bounds).
 *
 * @throws {TypeError} if a seed is not `ip:port` or `host:port`.
 * @throws {RangeError} when a membership tunable is out of its range.
 * @throws {TypeError} when `membership.seed` is missing or not an integer.
 */
export function fleetParts(options: FleetNodeOptions, refused: () => void): FleetParts {
  // First, so that a caller without types hears what is missing.
  const seed = checkSeed(options.membership?.seed);
  const periodMs = options.membership.protocolPeriodMs ?? GUARD_BOUNDS.protocolPeriodMs.default;
  const allocator = new Allocator(options.book, options.enforcer, {
    id: options.address.id,
    // Read once the node exists: its reports carry the node's life.
    life: (): number => node.life,
  }, {
    policy: options.policy,
    hotKeys: options.hotKeys ?? GUARD_BOUNDS.hotKeys.default,
    protocolPeriodMs: periodMs,
    relay: options.relay,
    sharedBurst: options.sharedBurst,
  });
  const rules = options.fleetRules
    ? rulesSyncFor({
      self: { hi: options.address.id.hi, lo: options.address.id.lo },
      book: options.book,
      enforcer: options.enforcer,
      protocolPeriodMs: periodMs,
      wallOffsetMs: options.wallOffsetMs ?? 0,
      ticketKey: options.ticketKey ?? seededKey(seed),
      learning: (options.seeds?.length ?? 0) > 0,
    }, refused)
    : undefined;
  const node: Node = new Node(options.address, {
    ...options.membership,
    seeds: options.seeds,
    extension: extensionOf(allocator, rules, options.memberChanged),
  });
  return {
    node,
    allocator,
    rules,
    tickMs: periodMs / TICKS_PER_PERIOD,
    maxMembers: options.membership.maxMembers ?? GUARD_BOUNDS.maxMembers.default,
  };
}

/**
 * The membership node's extension: the allocator's, with rule sharing's
 * beside it and `observe` told of member changes after both, when given.
 */
function extensionOf(
  allocator: Allocator,
  rules: RulesSync | undefined,
  observe: ((change: MemberChange) => void) | undefined,
): MembershipExtension {
  if (!rules && !observe) return allocator;
  return {
    outgoing: (nowMs, to, maxBytes) => allocator.outgoing(nowMs, to, maxBytes),
    incoming: (nowMs, from, bytes) => allocator.incoming(nowMs, from, bytes),
    memberChanged: (change) => {
      allocator.memberChanged(change);
      rules?.memberChanged(change);
      observe?.(change);
    },
    ...(rules && {
      outgoingRules: (nowMs, to, maxBytes) => rules.outgoingRules(nowMs, to, maxBytes),
      incomingRules: (nowMs, from, bytes) => rules.incomingRules(nowMs, from, bytes),
    }),
  };
}

/** A hash key drawn from `seed`: what the simulator's nodes draw tickets under. */
function seededKey(seed: number): HashKey {
  const prng = new Prng(seed ^ 0x5eed_7001);
  return hashKey(new Uint8Array(Array.from({ length: 16 }, () => prng.nextU32() & 0xff)));
}
