/**
 * What a fleet node is made of and how it is tuned: the one options type
 * of a `FleetNode`, which the runtime's builder and the simulator fill in,
 * each option's default beside it (or in `GUARD_BOUNDS`, where the guard
 * has an option of that name).
 *
 * @module
 */

import type { Address } from "../proto/mod.ts";
import type { Enforcer } from "./enforcer.ts";
import type { HashKey } from "./hash.ts";
import type { MemberChange, MembershipOptions } from "./membership/mod.ts";
import type { PartitionPolicy } from "./partition.ts";
import type { LimitBook } from "./rules.ts";

/** What a fleet node is made of and how it is tuned. */
export interface FleetNodeOptions {
  /** Where the other members reach this one. */
  readonly address: Address;
  /** The limits. */
  readonly book: LimitBook;
  /** The request path; built with `fleet` options so keys are hashed. */
  readonly enforcer: Enforcer;
  /** What a lost member still counts for. */
  readonly policy: PartitionPolicy;
  /**
   * Keys coordinated at once, 1 to 64 (the records a demand report holds),
   * as the guard's option of that name; a `RangeError` otherwise.
   *
   * @default {64}
   */
  readonly hotKeys?: number;
  /**
   * Whether allocation relays other nodes' reports.
   *
   * @default {true}
   */
  readonly relay?: boolean;
  /**
   * Whether each key's burst follows this node's share of its limit, as the
   * guard's option of that name (`GuardOptions.sharedBurst`); unset, as
   * the fleet's size says.
   *
   * @default {undefined}
   */
  readonly sharedBurst?: boolean;
  /**
   * Peers to join through, `ip:port`, `[v6]:port` or `host:port`: see
   * `MembershipOptions.seeds`. While joining, every key is held at the floor.
   *
   * @default {none: a fleet of one that others may join}
   */
  readonly seeds?: readonly string[];
  /**
   * Share rule changes with the fleet (see `rules_sync/mod.ts`): changes
   * made here go in through `FleetNode.shareRule`, and the peers'
   * are applied to `book` and the enforcer's dry run.
   *
   * @default {false}
   */
  readonly fleetRules?: boolean;
  /**
   * Wall-clock milliseconds at `nowMs` 0, read by the runtime once: fleet
   * rules are versioned in wall-clock time, which must agree across the
   * fleet within a minute.
   *
   * @default {0}
   */
  readonly wallOffsetMs?: number;
  /**
   * The key this node draws the tickets of its rule-page requesters under
   * (`rules_sync/serve.ts`): 16 random bytes, its own, never shared. A
   * ticket proves only that its holder receives at its address.
   *
   * @default {drawn from `membership.seed`: as secret as that seed is}
   */
  readonly ticketKey?: HashKey;
  /**
   * Membership's seed (required: the core draws no randomness of its own,
   * see `MembershipOptions.seed`) and tunables; `extension` is the
   * allocator's.
   */
  readonly membership: Omit<MembershipOptions, "extension" | "seeds">;
  /**
   * Hears every change of this node's mind about a member, after allocation
   * (and rule sharing) have: for a count of false deaths, say. It must not
   * call back into the node.
   *
   * @default {none}
   * @internal For the simulator's count of false deaths (`src/sim/faces/fleet.ts`).
   */
  readonly memberChanged?: (change: MemberChange) => void;
}
