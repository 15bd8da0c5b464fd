/**
 * The simulator's one face over its driver, written and documented once:
 * virtual time (`nowMs`, `at`, `runUntil`, `runFor`), the network
 * (`topology`, `faults`, `inject`, `traffic`), and the nodes' lives (`add`,
 * `node`, `isRunning`, `crash`, `restart`, `leave`, `pause`). `Cluster`
 * (membership nodes), `Fleet` (fleet nodes with traffic) and `RulesFleet`
 * (fleet nodes sharing rules) extend it with only what is theirs: how a
 * node starts, how its datagrams are signed and checked, and what they
 * measure.
 *
 * @module
 */

import type { Verdict } from "../../core/auth.ts";
import type { Address } from "../../core/membership/mod.ts";
import { Driver } from "../driver/driver.ts";
import type { SimNode, SimOptions } from "../driver/face.ts";
import { addressOf, type SeedLookup } from "../driver/names.ts";
import type { NetworkFaults, Topology, Traffic } from "../driver/network.ts";

/** How a node added to a running simulation joins ({@link Simulation.add}). */
export interface AddOptions {
  /**
   * The indexes of the nodes it joins through, given to it by name.
   *
   * @default {[0]}
   */
  readonly seeds?: readonly number[];
  /**
   * How its lookups of its seeds' names are answered.
   *
   * @default {the simulation's `seedLookup`}
   */
  readonly seedLookup?: SeedLookup;
}

/**
 * What became of a datagram handed to a node ({@link Simulation.inject}):
 * taken, refused by its signature check (unsigned, or with a bad tag), or
 * not taken because the node does not run.
 */
export type Injected = "accepted" | "unsigned" | "badTag" | "down";

/** A datagram every node accepts: a simulation whose nodes do not sign. */
const UNSIGNED = (bytes: Uint8Array): Verdict => ({ accept: true, bytes });

/**
 * Nodes of type `N` on virtual time over an in-memory network with named
 * faults, every random choice drawn from one seed. Nodes are numbered from
 * 0 in the order they were added; node `index` lives at
 * {@link Simulation.addressOf}`(index)`, and a restart starts a fresh node
 * there.
 */
export abstract class Simulation<N extends SimNode> {
  /**
   * Time, the network and each node's clock.
   *
   * @internal For the faces, not their callers.
   */
  protected readonly driver: Driver<N>;

  /**
   * A simulation with no nodes yet: a face starts its first ones
   * (`driver.populate`) once its own fields are set.
   *
   * @throws {RangeError} if `clockDrift` is out of range.
   *
   * @param options The seed, the faults, the clock drift and the seed lookups.
   */
  protected constructor(options: SimOptions) {
    this.driver = new Driver<N>(options, {
      start: (index, address, seeds, seed) => this.startNode(index, address, seeds, seed),
      send: (index, bytes, to) => this.seal(index, bytes, to),
      receive: (index, _from, bytes) => {
        const verdict = this.open(index, bytes);
        return verdict.accept ? verdict.bytes : undefined;
      },
      resumed: (index) => this.resumed(index),
    });
  }

  /**
   * A fresh node `index` at `address`: at the start, on `add` and on `restart`.
   *
   * @internal For the faces, not their callers.
   *
   * @param index The node's index.
   * @param address Its address.
   * @param seeds The names it joins through.
   * @param seed Its randomness, drawn from the simulation's seed.
   * @returns The node.
   */
  protected abstract startNode(
    index: number,
    address: Address,
    seeds: string[],
    seed: number,
  ): N;

  /**
   * The bytes node `index` puts on the wire for a datagram to `to`: by
   * default the datagram itself.
   *
   * @internal For the faces, not their callers.
   *
   * @param _index The sending node's index.
   * @param bytes The datagram.
   * @param _to Where it goes.
   * @returns What is sent.
   */
  protected seal(_index: number, bytes: Uint8Array, _to: Address): Uint8Array {
    return bytes;
  }

  /**
   * Node `index`'s check of a datagram that reached it: by default every
   * datagram is taken as it is.
   *
   * @internal For the faces that sign, not their callers.
   *
   * @param _index The receiving node's index.
   * @param bytes The datagram.
   * @returns Whether it is taken, and what the node is handed.
   */
  protected open(_index: number, bytes: Uint8Array): Verdict {
    return UNSIGNED(bytes);
  }

  /**
   * Node `index` is back from a pause and has worked through what it
   * heard meanwhile: by default nothing more happens.
   *
   * @internal For the faces, not their callers.
   *
   * @param _index The node's index.
   */
  protected resumed(_index: number): void {}

  /**
   * The address of node `index`: 10.0.x.y:7946.
   *
   * @param index The node's index.
   * @returns Its address.
   */
  static addressOf(index: number): Address {
    return addressOf(index);
  }

  /** Virtual time, ms. */
  get nowMs(): number {
    return this.driver.nowMs;
  }

  /** Nodes ever added, running or not. */
  get size(): number {
    return this.driver.size;
  }

  /** Which node reaches which: partition, cut and heal links here. */
  get topology(): Topology {
    return this.driver.topology;
  }

  /** The network's faults now; set them to change them from now on. */
  get faults(): NetworkFaults {
    return this.driver.faults;
  }

  set faults(faults: NetworkFaults) {
    this.driver.faults = faults;
  }

  /**
   * Starts a node now, joining through `seeds`, which it is given by name
   * and looks up as `seedLookup` says.
   *
   * @throws {RangeError} past 60000 nodes.
   *
   * @param options The nodes it joins through, and how their names are answered.
   * @returns Its index.
   */
  add(options: AddOptions = {}): number {
    return this.driver.add(options);
  }

  /**
   * Node `index`, if it runs (not crashed, not left); a paused node runs.
   *
   * @throws {RangeError} if there never was a node `index`.
   *
   * @param index The node's index.
   * @returns The node, or `undefined` when it does not run.
   */
  node(index: number): N | undefined {
    return this.driver.node(index);
  }

  /**
   * Node `index`, which must run: for a face's calls into a node.
   *
   * @internal For the faces, not their callers.
   *
   * @throws {RangeError} if node `index` does not run.
   *
   * @param index The node's index.
   * @returns The node.
   */
  protected running(index: number): N {
    const node = this.driver.node(index);
    if (!node) throw new RangeError(`node ${index} does not run`);
    return node;
  }

  /**
   * Whether node `index` runs: started, not crashed, not left. A paused node runs.
   *
   * @throws {RangeError} if there never was a node `index`.
   *
   * @param index The node's index.
   * @returns Whether it runs.
   */
  isRunning(index: number): boolean {
    return this.driver.node(index) !== undefined;
  }

  /**
   * Runs `run` at virtual time `atMs` (now, if that has passed).
   *
   * @param atMs The virtual time, ms.
   * @param run What to do then.
   */
  at(atMs: number, run: () => void): void {
    this.driver.at(atMs, run);
  }

  /**
   * Runs every event due by `untilMs`, then sets the clock there.
   *
   * @param untilMs The virtual time to stop at, ms.
   */
  runUntil(untilMs: number): void {
    this.driver.runUntil(untilMs);
  }

  /**
   * Runs for `durationMs` more of virtual time.
   *
   * @param durationMs How long, ms.
   */
  runFor(durationMs: number): void {
    this.driver.runUntil(this.driver.nowMs + durationMs);
  }

  /**
   * Stops node `index` at once, as a crash: no word to anyone, its state
   * lost (a fleet's waiting callers too, unanswered).
   *
   * @throws {RangeError} if there never was a node `index`.
   *
   * @param index The node's index.
   */
  crash(index: number): void {
    this.driver.crash(index);
  }

  /**
   * Starts a fresh node at the address of node `index`, which must not run.
   *
   * @throws {RangeError} if node `index` runs.
   *
   * @param index The node's index.
   */
  restart(index: number): void {
    this.driver.restart(index);
  }

  /**
   * Node `index` says goodbye and stops; nothing if it does not run.
   *
   * @param index The node's index.
   */
  leave(index: number): void {
    this.driver.leave(index);
  }

  /**
   * Pauses node `index` for `durationMs` from now, like a long GC: it hears
   * and does nothing (a fleet's offered requests wait too), then works
   * through what queued up meanwhile.
   *
   * @param index The node's index.
   * @param durationMs How long it hears and does nothing, ms.
   */
  pause(index: number, durationMs: number): void {
    this.driver.pause(index, durationMs);
  }

  /**
   * Hands node `index` a datagram now as if `from` (a stranger, say) had
   * sent it: through the node's signature check, then to the node at once
   * (when its pause ends, if it is paused).
   *
   * @param index The receiving node's index.
   * @param from The source address it sees.
   * @param bytes The datagram, any bytes.
   * @returns What became of it.
   */
  inject(index: number, from: Address, bytes: Uint8Array): Injected {
    if (!this.driver.node(index)) return "down";
    const verdict = this.open(index, bytes);
    if (!verdict.accept) return verdict.reason;
    this.driver.hand(index, from, verdict.bytes);
    return "accepted";
  }

  /**
   * What node `index` sent since the last `resetTraffic`, after signing.
   *
   * @param index The node's index.
   * @returns Its counters.
   */
  traffic(index: number): Traffic {
    return this.driver.traffic(index);
  }

  /**
   * What all nodes together sent since the last `resetTraffic`.
   *
   * @returns The counters of every node, summed (`largestBytes`: the largest of any).
   */
  totalTraffic(): Traffic {
    let datagrams = 0, bytes = 0, largestBytes = 0;
    for (let i = 0; i < this.size; i++) {
      const t = this.driver.traffic(i);
      datagrams += t.datagrams;
      bytes += t.bytes;
      largestBytes = Math.max(largestBytes, t.largestBytes);
    }
    return { datagrams, bytes, largestBytes };
  }

  /**
   * What all nodes together sent to `address` since the last `resetTraffic`, node or not.
   *
   * @param address The address, any: a member's or a stranger's.
   * @returns What the nodes sent there.
   */
  trafficTo(address: Address): Traffic {
    return this.driver.trafficTo(address);
  }

  /** Zeroes every traffic counter. */
  resetTraffic(): void {
    this.driver.resetTraffic();
  }
}
