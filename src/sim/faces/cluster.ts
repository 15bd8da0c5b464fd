/**
 * A cluster of membership nodes on virtual time over an in-memory network,
 * every random choice drawn from one seed: the same seed, the same run. A
 * thin layer over the simulator's driver, which owns time, the network and
 * the faults; the cluster starts membership nodes and reports what they
 * observe.
 *
 * @module
 */

import {
  type Address,
  type MemberChange,
  type MembershipOptions,
  type MemberState,
  Node,
} from "../../core/membership/mod.ts";
import { Driver } from "../driver/driver.ts";
import type { SimOptions } from "../driver/face.ts";
import { addressOf, type SeedLookup } from "../driver/names.ts";
import type { NetworkFaults, Topology, Traffic } from "../driver/network.ts";

/** How a cluster starts. */
export interface ClusterOptions extends SimOptions {
  /**
   * Nodes started at time 0, each joining through node 0 (node 0 through node 1).
   *
   * @default {0}
   */
  readonly size?: number;
  /**
   * Options of every node; `seed`, `seeds` and `extension` are the simulator's.
   *
   * @default {the defaults of MembershipOptions}
   */
  readonly membership?: Omit<MembershipOptions, "seed" | "seeds" | "extension">;
}

/** A change seen by one node, as the simulator reports it. */
export interface Observed {
  /** Virtual time. */
  readonly atMs: number;
  /** Index of the node that changed its mind. */
  readonly observer: number;
  /** The change. */
  readonly change: MemberChange;
}

/**
 * A deterministic cluster.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Cluster } from "@rateguard/guard/sim";
 * const cluster = new Cluster({ seed: 1, size: 3 });
 * cluster.runUntil(3_000);
 * assert(cluster.converged());
 * ```
 */
export class Cluster {
  readonly #driver: Driver<Node>;
  readonly #listeners: ((observed: Observed) => void)[] = [];

  /**
   * A cluster of `size` nodes, all started at time 0: node 0 joins through
   * node 1, the others through node 0.
   *
   * @throws {RangeError} if `size` or `clockDrift` is out of range.
   *
   * @param options The seed, the size, the faults and the membership tunables.
   */
  constructor(options: ClusterOptions) {
    const membership = options.membership ?? {};
    this.#driver = new Driver<Node>(options, {
      start: (observer, address, seeds, seed) =>
        new Node(address, {
          ...membership,
          seed,
          seeds,
          extension: {
            memberChanged: (change) => {
              const atMs = this.#driver.nowMs;
              for (const listener of this.#listeners) listener({ atMs, observer, change });
            },
          },
        }),
    });
    this.#driver.populate(options.size ?? 0);
  }

  /** Virtual time, in milliseconds. */
  get nowMs(): number {
    return this.#driver.nowMs;
  }

  /** Nodes ever added, running or not. */
  get size(): number {
    return this.#driver.size;
  }

  /** Partitions and one-way links. */
  get topology(): Topology {
    return this.#driver.topology;
  }

  /**
   * Replaces the network's faults.
   *
   * @param faults The faults from now on.
   */
  setFaults(faults: NetworkFaults): void {
    this.#driver.faults = faults;
  }

  /**
   * Calls `listener` on every change of mind of every node.
   *
   * @param listener Called with the node, the time and the change.
   */
  onChange(listener: (observed: Observed) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * The address of node `index`: 10.0.x.y:7946.
   *
   * @param index The node's index.
   * @returns Its address.
   */
  static addressOf(index: number): Address {
    return addressOf(index);
  }

  /**
   * Starts a node now, joining through `seeds`, which it is given by name
   * and looks up as `seedLookup` says (default: the cluster's).
   *
   * @param options `seeds`: the indexes it joins through (default node 0); `seedLookup`: how its lookups are answered.
   * @returns Its index.
   */
  addNode(options: { seeds?: readonly number[]; seedLookup?: SeedLookup } = {}): number {
    return this.#driver.add(options);
  }

  /**
   * The node at `index`, if it is running (not crashed, not gone).
   *
   * @param index The node's index.
   * @returns The node, or `undefined` when it does not run.
   */
  node(index: number): Node | undefined {
    return this.#driver.node(index);
  }

  /**
   * Whether node `index` runs: started, not crashed, not left. Paused nodes run.
   *
   * @param index The node's index.
   * @returns Whether it runs.
   */
  isRunning(index: number): boolean {
    return this.#driver.node(index) !== undefined;
  }

  /**
   * Runs `run` at virtual time `atMs`.
   *
   * @param atMs The virtual time, ms.
   * @param run What to do then.
   */
  at(atMs: number, run: () => void): void {
    this.#driver.at(atMs, run);
  }

  /**
   * Runs every event due until `untilMs`, then sets the clock there.
   *
   * @param untilMs The virtual time to stop at, ms.
   */
  runUntil(untilMs: number): void {
    this.#driver.runUntil(untilMs);
  }

  /**
   * Runs for `durationMs` more.
   *
   * @param durationMs How long, ms of virtual time.
   */
  runFor(durationMs: number): void {
    this.#driver.runUntil(this.#driver.nowMs + durationMs);
  }

  /**
   * Stops node `index` at once, as a crash: no word to anyone.
   *
   * @param index The node's index.
   */
  crash(index: number): void {
    this.#driver.crash(index);
  }

  /**
   * Starts a fresh node at the address of node `index`, which must not run.
   *
   * @throws {RangeError} if node `index` runs.
   *
   * @param index The node's index.
   */
  restart(index: number): void {
    this.#driver.restart(index);
  }

  /**
   * Node `index` says goodbye and stops.
   *
   * @param index The node's index.
   */
  leave(index: number): void {
    this.#driver.leave(index);
  }

  /**
   * Pauses node `index` for `durationMs`, like a long GC: it hears and does
   * nothing, then works through what queued up meanwhile.
   *
   * @param index The node's index.
   * @param durationMs How long it hears and does nothing, ms.
   */
  pause(index: number, durationMs: number): void {
    this.#driver.pause(index, durationMs);
  }

  /**
   * Hands node `index` a datagram as if it came from `from` (a stranger, say).
   *
   * @param index The receiving node's index.
   * @param from The source address it sees.
   * @param bytes The datagram, any bytes.
   */
  inject(index: number, from: Address, bytes: Uint8Array): void {
    this.#driver.inject(index, from, bytes);
  }

  /**
   * What node `index` believes of every member, itself included ("alive").
   *
   * @param index The node's index.
   * @returns Each member's address, as text, with its state.
   */
  view(index: number): Map<string, MemberState> {
    const node = this.#driver.node(index);
    const view = new Map<string, MemberState>();
    if (!node) return view;
    view.set(node.address.toString(), "alive");
    for (const member of node.members()) view.set(member.address.toString(), member.state);
    return view;
  }

  /**
   * Whether every running node sees exactly the running nodes alive.
   *
   * @returns Whether the views agree with what runs.
   */
  converged(): boolean {
    const running: string[] = [];
    for (let i = 0; i < this.size; i++) {
      if (this.isRunning(i)) running.push(addressOf(i).toString());
    }
    for (let i = 0; i < this.size; i++) {
      if (!this.isRunning(i)) continue;
      const view = this.view(i);
      const alive = [...view].filter(([, state]) => state === "alive").map(([key]) => key);
      if (alive.length !== running.length || running.some((key) => view.get(key) !== "alive")) {
        return false;
      }
    }
    return true;
  }

  /**
   * What node `index` sent since the last `resetTraffic`.
   *
   * @param index The node's index.
   * @returns Its counters.
   */
  traffic(index: number): Traffic {
    return this.#driver.traffic(index);
  }

  /**
   * What all nodes together sent to `address` since the last `resetTraffic`, node or not.
   *
   * @param address The address, any: a member's or a stranger's.
   * @returns What the nodes sent there.
   */
  trafficTo(address: Address): Traffic {
    return this.#driver.trafficTo(address);
  }

  /** Zeroes every node's traffic counters. */
  resetTraffic(): void {
    this.#driver.resetTraffic();
  }
}
