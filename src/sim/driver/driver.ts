/**
 * The simulator's one driver: virtual time, the event heap, the in-memory
 * network and its faults, each node's own clock (which may drift), crashes,
 * restarts, pauses, leaves, late joins, datagrams handed in from outside and
 * the lookups of seed names, for any node with the core's sans-I/O face
 * (`SimNode`). Its one face is `Simulation` (src/sim/faces/simulation.ts),
 * which `Cluster` (membership nodes), `Fleet` (fleet nodes and their
 * traffic) and `RulesFleet` extend, each saying only how a node starts and
 * what it does beside the protocol. The same seed gives the same run.
 *
 * @module
 */

import {
  type Address,
  MAX_DATAGRAM_BYTES,
  Prng,
  type ResolveRequest,
  type Transmit,
} from "../../core/membership/mod.ts";
import type { DriverHooks, SimNode, SimOptions } from "./face.ts";
import { EventHeap } from "./heap.ts";
import { addressOf, answer, type SeedLookup, seedName } from "./names.ts";
import {
  deliveryDelays,
  type NetworkFaults,
  Topology,
  type Traffic,
  TrafficLog,
} from "./network.ts";

interface Slot<N> {
  readonly index: number;
  readonly address: Address;
  node: N | undefined;
  readonly seeds: readonly number[];
  readonly seedLookup: SeedLookup;
  /** How fast its clock runs against virtual time. */
  readonly rate: number;
  pausedUntilMs: number;
  inbox: { from: Address; bytes: Uint8Array }[];
  wakeAtMs: number;
  /** The node's deadline, on its own clock, that `wakeAtMs` stands for. */
  wakeLocalMs: number;
  /** The node's clock never runs backwards, rounding included. */
  lastLocalMs: number;
  /** Counts lives, so that what an earlier life scheduled is not done to a later one. */
  generation: number;
}

/**
 * What the heap holds, each at its time: a datagram's arrival, a node's
 * timer, or something to run (pushed as the function itself, since most
 * events of a fleet with traffic are its requests).
 */
type SimEvent =
  | { kind: "deliver"; to: number; from: Address; bytes: Uint8Array }
  | { kind: "wake"; node: number; generation: number }
  | (() => void);

/** The most nodes a driver runs: their addresses count up from 10.0.0.1. */
const MAX_NODES = 60_000;

/** Nodes on virtual time over an in-memory network, driven through the core's face. */
export class Driver<N extends SimNode> {
  readonly #slots: Slot<N>[] = [];
  readonly #byAddress = new Map<string, number>();
  readonly #events = new EventHeap<SimEvent>();
  readonly #prng: Prng;
  readonly #netPrng: Prng;
  readonly #hooks: DriverHooks<N>;
  readonly #seedLookup: SeedLookup;
  readonly #clockDrift: number;
  readonly #topology = new Topology();
  readonly #traffic = new TrafficLog();
  #faults: NetworkFaults;
  #nowMs = 0;

  /**
   * A driver with no nodes yet.
   *
   * @throws {RangeError} if `clockDrift` is out of range.
   */
  constructor(options: SimOptions, hooks: DriverHooks<N>) {
    const drift = options.clockDrift ?? 0;
    if (!(drift >= 0 && drift < 0.5)) {
      throw new RangeError(`clockDrift must be from 0 to 0.5, got ${drift}`);
    }
    this.#prng = new Prng(options.seed);
    this.#netPrng = this.#prng.fork();
    this.#hooks = hooks;
    this.#seedLookup = options.seedLookup ?? {};
    this.#faults = options.faults ?? {};
    this.#clockDrift = drift;
  }

  /**
   * Starts `size` nodes at time 0: node 0 joins through node 1, the others through node 0.
   *
   * @throws {RangeError} if `size` is not an integer from 0 to 60000.
   */
  populate(size: number): void {
    if (!Number.isInteger(size) || size < 0 || size > MAX_NODES) {
      throw new RangeError(`size must be an integer from 0 to ${MAX_NODES}, got ${size}`);
    }
    for (let i = 0; i < size; i++) this.add({ seeds: i > 0 ? [0] : size > 1 ? [1] : [] });
  }

  /** Virtual time, ms. */
  get nowMs(): number {
    return this.#nowMs;
  }

  /** Nodes ever added, running or not. */
  get size(): number {
    return this.#slots.length;
  }

  /** Partitions and one-way links. */
  get topology(): Topology {
    return this.#topology;
  }

  /** The network's faults now. */
  get faults(): NetworkFaults {
    return this.#faults;
  }

  set faults(faults: NetworkFaults) {
    this.#faults = faults;
  }

  /** A generator of the layer's own, split from the run's seed. */
  fork(): Prng {
    return this.#prng.fork();
  }

  /**
   * Starts a node now, joining through `seeds` (indexes, by default node 0),
   * which it is given by name and looks up as `seedLookup` says (default:
   * the driver's). Returns its index.
   *
   * @throws {RangeError} past 60000 nodes.
   */
  add(options: { seeds?: readonly number[]; seedLookup?: SeedLookup } = {}): number {
    const index = this.#slots.length;
    if (index >= MAX_NODES) throw new RangeError(`at most ${MAX_NODES} nodes`);
    const address = addressOf(index);
    const drift = (this.#prng.nextFloat() * 2 - 1) * this.#clockDrift;
    this.#slots.push({
      index,
      address,
      node: undefined,
      seeds: (options.seeds ?? [0]).filter((s) => s !== index),
      seedLookup: options.seedLookup ?? this.#seedLookup,
      rate: 1 + drift,
      pausedUntilMs: -Infinity,
      inbox: [],
      wakeAtMs: Infinity,
      wakeLocalMs: Infinity,
      lastLocalMs: 0,
      generation: 0,
    });
    this.#byAddress.set(address.toString(), index);
    this.#boot(this.#slots[index]);
    return index;
  }

  /** Node `index`, if it runs (not crashed, not left); paused nodes run. */
  node(index: number): N | undefined {
    return this.#slot(index).node;
  }

  /** Whether node `index` is paused now. */
  isPaused(index: number): boolean {
    return this.#nowMs < this.#slot(index).pausedUntilMs;
  }

  /**
   * Node `index`'s clock now: virtual time, run fast or slow by its drift;
   * woken for a deadline, it reads at least that deadline, whatever the
   * rounding of the conversion.
   */
  localMs(index: number, atLeastMs = 0): number {
    const slot = this.#slot(index);
    slot.lastLocalMs = Math.max(slot.lastLocalMs, this.#nowMs * slot.rate, atLeastMs);
    return slot.lastLocalMs;
  }

  /** Runs `run` at virtual time `atMs` (now, if that has passed). */
  at(atMs: number, run: () => void): void {
    this.#events.push(Math.max(atMs, this.#nowMs), run);
  }

  /** Runs every event due by `untilMs`, then sets the clock there. */
  runUntil(untilMs: number): void {
    const events = this.#events;
    for (
      let atMs = events.peekAtMs();
      atMs <= untilMs && events.size > 0;
      atMs = events.peekAtMs()
    ) {
      const event = events.pop()!;
      this.#nowMs = atMs;
      this.#process(event);
    }
    this.#nowMs = Math.max(this.#nowMs, untilMs);
  }

  /** Stops node `index` at once, as a crash: no word to anyone, state lost. */
  crash(index: number): void {
    const slot = this.#slot(index);
    slot.node = undefined;
    slot.inbox = [];
    slot.generation++;
  }

  /**
   * Starts a fresh node at the address of node `index`, which must not run.
   *
   * @throws {RangeError} if it runs.
   */
  restart(index: number): void {
    const slot = this.#slot(index);
    if (slot.node) throw new RangeError(`node ${index} is running; crash it first`);
    slot.pausedUntilMs = -Infinity;
    this.#boot(slot);
  }

  /** Node `index` says goodbye and stops. */
  leave(index: number): void {
    const slot = this.#slot(index);
    if (!slot.node) return;
    slot.node.leave();
    this.flush(index);
    this.crash(index);
  }

  /**
   * Pauses node `index` for `durationMs`, like a long GC: it hears and does
   * nothing, then works through what queued up meanwhile.
   */
  pause(index: number, durationMs: number): void {
    const slot = this.#slot(index);
    slot.pausedUntilMs = Math.max(slot.pausedUntilMs, this.#nowMs + durationMs);
    const generation = slot.generation;
    this.at(this.#nowMs + durationMs, () => {
      // A later pause still holds it, or this life is over.
      if (slot.generation !== generation || !slot.node || this.isPaused(index)) return;
      const inbox = slot.inbox;
      slot.inbox = [];
      for (const { from, bytes } of inbox) {
        slot.node?.handleDatagram(this.localMs(index), from, bytes);
      }
      if (!slot.node) return;
      slot.node.handleTimeout(this.localMs(index));
      this.#hooks.resumed?.(index);
      this.flush(index);
    });
  }

  /**
   * Hands node `index` a datagram that has passed its `receive` hook: at
   * once, or when its pause ends.
   */
  hand(index: number, from: Address, bytes: Uint8Array): void {
    const slot = this.#slot(index);
    if (!slot.node) return;
    if (this.isPaused(index)) {
      slot.inbox.push({ from, bytes });
      return;
    }
    slot.node.handleDatagram(this.localMs(index), from, bytes);
    this.flush(index);
  }

  /**
   * Sends what node `index` has to send, asks what it has to look up, and
   * schedules its next timeout: after anything that called into the node.
   *
   * @throws {Error} if the node sent a datagram larger than `MAX_DATAGRAM_BYTES`.
   */
  flush(index: number): void {
    const slot = this.#slot(index);
    const node = slot.node;
    if (!node) return;
    for (let r = node.pollResolve(); r; r = node.pollResolve()) this.#lookUp(slot, node, r);
    for (let t = node.pollTransmit(); t; t = node.pollTransmit()) this.#transmit(slot, t);
    this.#reschedule(slot);
  }

  /** What node `index` sent since the last `resetTraffic`. */
  traffic(index: number): Traffic {
    return this.#traffic.from(this.#slot(index).index);
  }

  /** What all nodes together sent to `address` since the last `resetTraffic`, node or not. */
  trafficTo(address: Address): Traffic {
    return this.#traffic.to(address.toString());
  }

  /** Zeroes every node's traffic counters. */
  resetTraffic(): void {
    this.#traffic.reset();
  }

  #slot(index: number): Slot<N> {
    const slot = this.#slots[index];
    if (!slot) throw new RangeError(`no node ${index} (there are ${this.#slots.length})`);
    return slot;
  }

  #boot(slot: Slot<N>): void {
    slot.generation++;
    const seeds = slot.seeds.map(seedName);
    slot.node = this.#hooks.start(slot.index, slot.address, seeds, this.#prng.nextU32());
    slot.wakeAtMs = Infinity;
    this.#reschedule(slot);
  }

  #process(event: SimEvent): void {
    if (typeof event === "function") return event();
    const index = event.kind === "wake" ? event.node : event.to;
    const slot = this.#slots[index];
    if (!slot.node) return;
    if (event.kind === "deliver") {
      const receive = this.#hooks.receive;
      const bytes = receive ? receive(index, event.from, event.bytes) : event.bytes;
      if (bytes !== undefined) this.hand(index, event.from, bytes);
      return;
    }
    if (event.generation !== slot.generation || this.#nowMs !== slot.wakeAtMs) return;
    slot.wakeAtMs = Infinity;
    // Paused, it sleeps through its timers: the pause's end runs them.
    if (this.isPaused(index)) return;
    slot.node.handleTimeout(this.localMs(index, slot.wakeLocalMs));
    this.flush(index);
  }

  #lookUp(slot: Slot<N>, node: N, r: ResolveRequest): void {
    const { name } = r;
    const { atMs, ips } = answer(slot.seedLookup, this.#nowMs, r.host);
    const deliver = () => {
      if (slot.node !== node) return; // asked by an earlier life
      if (this.isPaused(slot.index)) return this.at(slot.pausedUntilMs, deliver);
      if (ips === undefined) node.handleResolveFailed(this.localMs(slot.index), name);
      else node.handleResolved(this.localMs(slot.index), name, ips);
      this.flush(slot.index);
    };
    this.at(atMs, deliver);
  }

  #transmit(slot: Slot<N>, t: Transmit): void {
    const key = t.to.toString();
    const bytes = this.#hooks.send?.(slot.index, t.bytes, t.to) ?? t.bytes;
    if (bytes.length > MAX_DATAGRAM_BYTES) {
      throw new Error(`node ${slot.index} sent ${bytes.length} bytes`);
    }
    this.#traffic.count(slot.index, key, bytes.length);
    const to = this.#byAddress.get(key);
    if (to === undefined || !this.#topology.connected(slot.index, to)) return;
    for (const delayMs of deliveryDelays(this.#faults, this.#netPrng, slot.index, to)) {
      this.#events.push(this.#nowMs + delayMs, { kind: "deliver", to, from: slot.address, bytes });
    }
  }

  #reschedule(slot: Slot<N>): void {
    const deadline = slot.node?.pollTimeout();
    if (deadline === undefined) return;
    const atMs = Math.max(this.#nowMs, deadline / slot.rate);
    if (atMs === slot.wakeAtMs) return;
    slot.wakeAtMs = atMs;
    slot.wakeLocalMs = deadline;
    this.#events.push(atMs, { kind: "wake", node: slot.index, generation: slot.generation });
  }
}
