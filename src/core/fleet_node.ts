/**
 * One instance of a fleet, sans I/O: membership, allocation and enforcement
 * behind the same face as a membership node (datagrams and timeouts in,
 * datagrams out), plus the request path. The runtime puts sockets and a
 * clock under it; the simulator, an in-memory network and virtual time.
 *
 * @module
 */

import { type AllocationStats, Allocator, type HotKeyView } from "./allocation/allocator.ts";
import type { BatchDecision, BatchItem, Enforcer, EnforcerCounters, Traced } from "./enforcer.ts";
import type { Decision } from "./decision.ts";
import {
  type MemberInfo,
  type MembershipOptions,
  type MembershipStats,
  Node,
  type ResolveRequest,
  type Transmit,
} from "./membership/mod.ts";
import type { Address } from "../proto/mod.ts";
import type { PartitionPolicy } from "./partition.ts";
import type { LimitBook } from "./rules.ts";
import { GUARD_BOUNDS } from "./options.ts";

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
   * Peers to join through, `ip:port`, `[v6]:port` or `host:port`: see
   * `MembershipOptions.seeds`. While joining, every key is held at the floor.
   *
   * @default {none: a fleet of one that others may join}
   */
  readonly seeds?: readonly string[];
  /**
   * Membership's tunables; `extension` is the allocator's.
   *
   * @default {the defaults of MembershipOptions}
   */
  readonly membership?: Omit<MembershipOptions, "extension" | "seeds">;
}

/** Everything a fleet node can tell about itself. */
export interface FleetStats extends EnforcerCounters, AllocationStats, MembershipStats {
  /** Keys holding state. */
  readonly trackedKeys: number;
}

/** Allocation ticks this many times a protocol period: stats are at most this stale. */
const TICKS_PER_PERIOD = 4;

/** See the module doc. */
export class FleetNode {
  readonly #node: Node;
  readonly #allocator: Allocator;
  readonly #enforcer: Enforcer;
  readonly #tickMs: number;
  readonly #maxMembers: number;
  #nextTickMs = 0;

  /**
   * A node that has not yet joined anyone: drive it, and do the lookups of
   * seed names it asks for ({@link FleetNode.pollResolve}).
   *
   * @param options Its address, seeds, limits, enforcer, partition policy and tunables.
   * @throws {TypeError} if a seed is not `ip:port` or `host:port`.
   * @throws {RangeError} when a membership tunable is out of its range.
   */
  constructor(options: FleetNodeOptions) {
    const periodMs = options.membership?.protocolPeriodMs ?? GUARD_BOUNDS.protocolPeriodMs.default;
    this.#enforcer = options.enforcer;
    this.#allocator = new Allocator(options.book, options.enforcer, {
      id: options.address.id,
      life: () => this.#node.life,
    }, {
      policy: options.policy,
      hotKeys: options.hotKeys ?? GUARD_BOUNDS.hotKeys.default,
      protocolPeriodMs: periodMs,
      relay: options.relay,
    });
    this.#node = new Node(options.address, {
      ...options.membership,
      seeds: options.seeds,
      extension: this.#allocator,
    });
    this.#tickMs = periodMs / TICKS_PER_PERIOD;
    this.#maxMembers = options.membership?.maxMembers ?? GUARD_BOUNDS.maxMembers.default;
  }

  /** Where the other members reach this node. */
  get address(): Address {
    return this.#node.address;
  }

  /** Still joining: seeds that may name a peer, and no live member reached yet. */
  get joining(): boolean {
    return this.#node.joining;
  }

  /**
   * The next seed name to look up, if one is due; see `Node.pollResolve`.
   *
   * @returns The name and its host, or `undefined` when no lookup is due.
   */
  pollResolve(): ResolveRequest | undefined {
    return this.#node.pollResolve();
  }

  /**
   * The IP addresses (text) seed `name` resolved to; see `Node.handleResolved`.
   *
   * @param nowMs The time, ms.
   * @param name The seed, as configured.
   * @param ips What it resolved to.
   * @throws {RangeError} if `name` is not one of the node's seeds.
   */
  handleResolved(nowMs: number, name: string, ips: readonly string[]): void {
    this.#node.handleResolved(nowMs, name, ips);
  }

  /**
   * The lookup of seed `name` failed; see `Node.handleResolveFailed`.
   *
   * @param nowMs The time, ms.
   * @param name The seed, as configured.
   * @throws {RangeError} if `name` is not one of the node's seeds.
   */
  handleResolveFailed(nowMs: number, name: string): void {
    this.#node.handleResolveFailed(nowMs, name);
  }

  /**
   * Checks a request; synchronous, no I/O, whatever the cluster's state.
   *
   * @param className The key's class (`""`: the default class).
   * @param key The key, a non-empty string.
   * @param cost What the request costs, a whole number ≥ 1.
   * @param nowMs The time, ms.
   * @returns The decision.
   * @throws {TypeError} when `key` is not a non-empty string or the class not a string.
   * @throws {RangeError} when `cost` is out of range.
   */
  check(className: string, key: string, cost: number, nowMs: number): Decision {
    return this.#enforcer.check(className, key, cost, nowMs);
  }

  /**
   * As {@link check}, with the shadow's decision.
   *
   * @param className The key's class.
   * @param key The key.
   * @param cost What the request costs.
   * @param nowMs The time, ms.
   * @returns The decision and the shadow's.
   * @throws {TypeError} as {@link FleetNode.check}.
   * @throws {RangeError} as {@link FleetNode.check}.
   */
  checkTraced(className: string, key: string, cost: number, nowMs: number): Traced {
    return this.#enforcer.checkTraced(className, key, cost, nowMs);
  }

  /**
   * Several checks, all or nothing.
   *
   * @param items The checks.
   * @param nowMs The time, ms.
   * @returns The batch's decision.
   * @throws {TypeError} when an item is malformed or appears twice.
   */
  checkAll(items: readonly BatchItem[], nowMs: number): BatchDecision {
    return this.#enforcer.checkAll(items, nowMs);
  }

  /**
   * A datagram from `from`.
   *
   * @param nowMs The time, ms.
   * @param from The packet's source address.
   * @param bytes The datagram; malformed ones are counted and dropped.
   */
  handleDatagram(nowMs: number, from: Address, bytes: Uint8Array): void {
    this.#node.handleDatagram(nowMs, from, bytes);
  }

  /**
   * Holds every key at the floor from now on: the driver of this node has failed.
   *
   * @param nowMs The time, ms.
   */
  fail(nowMs: number): void {
    const m = this.#node.stats(nowMs);
    this.#allocator.fail(nowMs, {
      joining: m.joining,
      membersFull: m.membersFull,
      maxMembers: this.#maxMembers,
    });
  }

  /**
   * Runs what is due: membership's timers, and allocation's tick.
   *
   * @param nowMs The time, ms; a spurious call is harmless.
   */
  handleTimeout(nowMs: number): void {
    this.#node.handleTimeout(nowMs);
    if (nowMs >= this.#nextTickMs) {
      const m = this.#node.stats(nowMs);
      this.#allocator.tick(nowMs, {
        joining: m.joining,
        membersFull: m.membersFull,
        maxMembers: this.#maxMembers,
      });
      this.#nextTickMs = nowMs + this.#tickMs;
    }
  }

  /**
   * The next datagram to send.
   *
   * @returns The datagram and where to send it, or `undefined` when there is none.
   */
  pollTransmit(): Transmit | undefined {
    return this.#node.pollTransmit();
  }

  /**
   * When {@link handleTimeout} is next due.
   *
   * @returns The time, ms, or `undefined` when nothing is due.
   */
  pollTimeout(): number | undefined {
    const membership = this.#node.pollTimeout();
    return membership === undefined ? undefined : Math.min(membership, this.#nextTickMs);
  }

  /** Tells the peers this node is going; drain {@link pollTransmit} afterwards. */
  leave(): void {
    this.#node.leave();
  }

  /**
   * The rate a key is admitted at here now, per second: its share, before the burst.
   *
   * @param className The key's class.
   * @param key The key.
   * @returns Requests a second.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  share(className: string, key: string): number {
    return this.#enforcer.currentRate(className, key);
  }

  /**
   * The members this node holds, itself excluded, the dead not yet forgotten included.
   *
   * @returns One entry per member.
   */
  members(): MemberInfo[] {
    return this.#node.members();
  }

  /**
   * The hot keys and how each is split among the members, as this node sees it.
   *
   * @returns One view per hot key.
   */
  hotKeys(): HotKeyView[] {
    return this.#allocator.hotKeys();
  }

  /**
   * A snapshot of what this node did and sees.
   *
   * @param nowMs The time, ms.
   * @returns The figures.
   */
  stats(nowMs: number): FleetStats {
    return {
      ...this.#enforcer.counters,
      ...this.#allocator.stats(nowMs),
      ...this.#node.stats(nowMs),
      trackedKeys: this.#enforcer.table.size,
    };
  }
}
