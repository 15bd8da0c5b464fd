/**
 * What the builder hands the guard: the running parts `assemble` makes from
 * the checked options. Internal, as the underscore says: no entry point
 * exports it, and `Guard` takes it only through its private constructor, so
 * no part (the enforcer, the book, the gossip task, the clock) reaches a
 * public signature.
 *
 * @module
 */

import type { Enforcer } from "../core/enforcer.ts";
import type { LimitBook } from "../core/rules.ts";
import type { PartitionPolicy } from "../core/partition.ts";
import type { AuthConfig } from "../core/auth.ts";
import type { HashKey } from "../core/hash.ts";
import type { Clock } from "./clock.ts";
import type { GossipTask } from "./gossip.ts";

/**
 * Where a guard's `reset` and `block` go, decided once as the guard is put
 * together: in a fleet its `FleetNode` (which also ends or shares the
 * key's fleet block when rules are shared), else its {@link Enforcer}.
 */
export interface KeyOperations {
  /** Forgets what the key owes, a block included (`Enforcer.reset`). */
  reset(className: string, key: string, nowMs: number): boolean;
  /** Blocks the key for `ms` (`Enforcer.block`). */
  block(className: string, key: string, ms: number, nowMs: number): boolean;
}

/** What the builder hands the guard. */
export interface GuardParts {
  /** The limits. */
  readonly book: LimitBook;
  /** The request path. */
  readonly enforcer: Enforcer;
  /** Where reset and block go: the fleet node in a fleet, else the enforcer. */
  readonly operations: KeyOperations;
  /** The monotonic clock. */
  readonly clock: Clock;
  /** The partition policy, applied once the guard gossips. */
  readonly partitionPolicy: PartitionPolicy;
  /** The background task, for a guard in a fleet; none for a standalone guard. */
  readonly gossip?: GossipTask;
  /** How gossip is signed. */
  readonly auth: AuthConfig;
  /** How long `stats().mostDenied` is. */
  readonly mostDenied: number;
  /** The key of the 64-bit key hashes: the salt's, or the public one. */
  readonly hashKey: HashKey;
}
