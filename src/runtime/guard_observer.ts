/**
 * What a guard tells about itself, behind its methods of the same names
 * (whose documentation says what each returns): the snapshot of `stats()`,
 * the fleet's picture, one key's figures, and the one-line answers
 * (`isJoining`, `rulesOutOfStep`, ...) that spare computing the rest. It
 * reads the guard's parts and changes nothing.
 *
 * @module
 */

import type { Enforcer } from "../core/enforcer.ts";
import { type HashKey, keyHash } from "../core/hash.ts";
import type { KeyOptions } from "../core/options.ts";
import type { PartitionPolicy } from "../core/partition.ts";
import type { LimitBook } from "../core/rules.ts";
import type { GuardParts } from "./_parts.ts";
import type { Clock } from "./clock.ts";
import { type FleetView, fleetViewOf } from "./fleet_view.ts";
import type { GossipCounters, GossipTask } from "./gossip.ts";
import type { GuardLife } from "./guard_life.ts";
import { type KeyStats, keyStatsOf, mostDenied } from "./keystats.ts";
import { collectStats, type Stats } from "./stats.ts";

/** A guard's observation: see the module doc. */
export class GuardObserver {
  readonly #book: LimitBook;
  readonly #enforcer: Enforcer;
  readonly #clock: Clock;
  readonly #gossip: GossipTask | undefined;
  readonly #hashKey: HashKey;
  readonly #mostDenied: number;
  readonly #policy: PartitionPolicy;
  readonly #life: GuardLife;

  constructor(parts: GuardParts, life: GuardLife) {
    this.#book = parts.book;
    this.#enforcer = parts.enforcer;
    this.#clock = parts.clock;
    this.#gossip = parts.gossip;
    this.#hashKey = parts.hashKey;
    this.#mostDenied = parts.mostDenied;
    this.#policy = parts.partitionPolicy;
    this.#life = life;
  }

  stats(): Stats {
    const nowMs = this.#clock();
    return collectStats({
      nowMs,
      enforcer: this.#enforcer,
      fleet: this.#gossip?.node.stats(nowMs),
      gossip: this.#gossip?.counters(),
      running: this.#life.isRunning(),
      gossipAuth: this.#life.gossipAuth(),
      most: mostDenied(this.#enforcer, { k: this.#mostDenied, nowMs, hashKey: this.#hashKey }),
    });
  }

  fleetView(): FleetView {
    const named = mostDenied(this.#enforcer, {
      k: this.#mostDenied,
      nowMs: this.#clock(),
      hashKey: this.#hashKey,
      named: true,
    });
    return fleetViewOf(this.#gossip?.node, named);
  }

  keyStats(key: string, options: KeyOptions | undefined): KeyStats | undefined {
    const className = options?.class ?? "";
    this.#book.checkKey(className, key, "keyStats");
    const nowMs = this.#clock();
    const stats = keyStatsOf({ enforcer: this.#enforcer, book: this.#book }, className, key, nowMs);
    return stats && { ...stats, blockedForMs: this.#enforcer.blockedForMs(className, key, nowMs) };
  }

  keyHash(key: string, options: KeyOptions | undefined): bigint {
    const className = options?.class ?? "";
    this.#book.checkKey(className, key, "keyHash");
    return keyHash(this.#hashKey, className, key);
  }

  maxKeyBytes(): number {
    return this.#book.maxKeyBytes;
  }

  partitionPolicy(): PartitionPolicy {
    return this.#policy;
  }

  isJoining(): boolean {
    return this.#gossip?.node.joining ?? false;
  }

  rulesOutOfStep(): string {
    return this.#gossip?.node.rulesOutOfStep(this.#clock()) ?? "";
  }

  joinBlocked(): string {
    return this.#gossip?.node.joinBlocked(this.#clock()) ?? "";
  }

  rulesTableFull(): string {
    return this.#gossip?.node.rulesTableFull() ?? "";
  }

  clusterSize(): number {
    return this.#gossip ? this.#gossip.node.stats(this.#clock()).clusterSize : 1;
  }

  traffic(): GossipCounters | undefined {
    return this.#gossip?.counters();
  }

  address(): string | undefined {
    return this.#gossip?.node.address.toString();
  }
}
