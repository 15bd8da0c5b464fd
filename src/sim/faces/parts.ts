/**
 * What the faces of fleet nodes (`Fleet`, `RulesFleet`) make each node of,
 * as a guard makes it: the node over its limit book and enforcer at the
 * guard's defaults, and the signing of its gossip with the simulator's
 * synchronous HMAC.
 *
 * @module
 */

import { type AuthConfig, authConfig, judge, seal, type Verdict } from "../../core/auth.ts";
import { Enforcer } from "../../core/enforcer.ts";
import { type HashKey, PUBLIC_HASH_KEY } from "../../core/hash.ts";
import type { Limit } from "../../core/limit.ts";
import { FleetNode } from "../../core/fleet_node.ts";
import type { FleetNodeOptions } from "../../core/fleet_options.ts";
import { COLD_FRACTION, DEFAULT_PARTITION_POLICY, GUARD_BOUNDS } from "../../core/options.ts";
import type { PartitionPolicy } from "../../core/partition.ts";
import { LimitBook } from "../../core/rules.ts";
import { syncMac } from "./hmac.ts";

/** Datagrams a node refused for their signature, by reason. */
export interface Rejected {
  /** Unsigned, where a signature is required. */
  unsigned: number;
  /** Signed with no secret the node holds. */
  badTag: number;
}

/** A fresh fleet node's options, its limits left to {@link guardNode}. */
export type GuardNodeOptions = Omit<FleetNodeOptions, "book" | "enforcer" | "policy"> & {
  /** The default class's limit. */
  readonly limit: Limit;
  /** The node's partition policy. @default {DEFAULT_PARTITION_POLICY} */
  readonly policy?: PartitionPolicy;
  /** The most key limits its book holds. @default {GUARD_BOUNDS.maxKeyLimits.default} */
  readonly maxKeyLimits?: number;
  /** The key of its key hashes. @default {PUBLIC_HASH_KEY} */
  readonly hashKey?: HashKey;
};

/**
 * A fresh fleet node as a guard builds one: a book starting at `limit`, an
 * enforcer over it with the guard's bounds, and the node over both.
 *
 * @param options The node's options, its limit and its bounds.
 * @returns The node, its book and its enforcer.
 */
export function guardNode(
  options: GuardNodeOptions,
): { node: FleetNode; book: LimitBook; enforcer: Enforcer } {
  const { limit, policy, maxKeyLimits, hashKey, ...rest } = options;
  const book = new LimitBook(limit, {
    maxClasses: GUARD_BOUNDS.maxClasses.default,
    maxKeyLimits: maxKeyLimits ?? GUARD_BOUNDS.maxKeyLimits.default,
  });
  const enforcer = new Enforcer(book, {
    capacity: 2 * GUARD_BOUNDS.trackedKeys.default,
    overflowScale: COLD_FRACTION,
    fleet: { hashKey: hashKey ?? PUBLIC_HASH_KEY },
  });
  const node = new FleetNode({
    ...rest,
    book,
    enforcer,
    policy: policy ?? DEFAULT_PARTITION_POLICY,
  });
  return { node, book, enforcer };
}

/** How each node signs and checks datagrams, and what each refused. */
export class Signing {
  readonly #fallback: AuthConfig;
  readonly #auth: AuthConfig[] = [];
  readonly #rejected: Rejected[] = [];

  /**
   * Every node signing as `auth` until told otherwise.
   *
   * @param auth How nodes sign (default off).
   */
  constructor(auth: AuthConfig = authConfig("off")) {
    this.#fallback = auth;
  }

  /**
   * Node `index` signs as `auth` from now on.
   *
   * @param index The node's index.
   * @param auth Its signing.
   */
  set(index: number, auth: AuthConfig): void {
    this.#auth[index] = auth;
  }

  /**
   * What node `index` puts on the wire for `bytes`.
   *
   * @param index The node's index.
   * @param bytes The datagram.
   * @returns It, signed as the node signs.
   */
  seal(index: number, bytes: Uint8Array): Uint8Array {
    return seal(this.#auth[index] ?? this.#fallback, bytes, syncMac) as Uint8Array;
  }

  /**
   * Node `index`'s check of a datagram, counted when it refuses.
   *
   * @param index The node's index.
   * @param bytes The datagram.
   * @returns The verdict.
   */
  open(index: number, bytes: Uint8Array): Verdict {
    const verdict = judge(this.#auth[index] ?? this.#fallback, bytes, syncMac) as Verdict;
    if (!verdict.accept) (this.#rejected[index] ??= { unsigned: 0, badTag: 0 })[verdict.reason]++;
    return verdict;
  }

  /**
   * What node `index` refused, by reason.
   *
   * @param index The node's index.
   * @returns A copy of its counts.
   */
  rejected(index: number): Rejected {
    return { ...(this.#rejected[index] ?? { unsigned: 0, badTag: 0 }) };
  }
}
