/**
 * A cluster of membership nodes on virtual time over an in-memory network,
 * every random choice drawn from one seed: the same seed, the same run.
 *
 * @module
 */

import {
  Address,
  MAX_DATAGRAM_BYTES,
  type MemberChange,
  type MembershipOptions,
  type MemberState,
  Node,
  Prng,
} from "../core/membership/mod.ts";
import { EventHeap } from "./heap.ts";
import { answer, type SeedLookup, seedName } from "./names.ts";
import { deliveryDelays, type NetworkFaults, Topology } from "./network.ts";

/** How a cluster starts. */
export interface ClusterOptions {
  /** Decides the whole run. */
  readonly seed: number;
  /** Nodes started at time 0, each joining through node 0 (node 0 through node 1). Default 0. */
  readonly size?: number;
  /** Options of every node; `seed`, `seeds` and `extension` are the simulator's. */
  readonly membership?: Omit<MembershipOptions, "seed" | "seeds" | "extension">;
  /** How the nodes' lookups of their seed names are answered (default: at once, with the address). */
  readonly seedLookup?: SeedLookup;
  /** Network faults from the start. */
  readonly faults?: NetworkFaults;
  /** Largest clock drift of a node, as a fraction: 0.01 lets clocks run 1% fast or slow. */
  readonly clockDrift?: number;
}

/** What a node sent since the counters were last reset. */
export interface Traffic {
  /** Datagrams sent. */
  readonly datagrams: number;
  /** Bytes sent. */
  readonly bytes: number;
  /** The largest datagram. */
  readonly largestBytes: number;
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

const EMPTY_TRAFFIC: Traffic = { datagrams: 0, bytes: 0, largestBytes: 0 };

interface Slot {
  readonly index: number;
  readonly address: Address;
  node: Node | undefined;
  seeds: number[];
  readonly seedLookup: SeedLookup;
  readonly rate: number;
  pausedUntilMs: number;
  inbox: { from: Address; bytes: Uint8Array }[];
  wakeAtMs: number;
  /** The node's deadline, on its own clock, that `wakeAtMs` stands for. */
  wakeLocalMs: number;
  /** The node's clock never runs backwards, rounding included. */
  lastLocalMs: number;
  generation: number;
  traffic: { datagrams: number; bytes: number; largestBytes: number };
}

type SimEvent =
  | { atMs: number; kind: "deliver"; to: number; from: Address; bytes: Uint8Array }
  | { atMs: number; kind: "wake"; node: number; generation: number }
  | { atMs: number; kind: "do"; run: () => void };

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
  readonly #slots: Slot[] = [];
  readonly #byAddress = new Map<string, number>();
  readonly #events = new EventHeap<SimEvent>();
  readonly #prng: Prng;
  readonly #netPrng: Prng;
  readonly #membership: Omit<MembershipOptions, "seed" | "seeds" | "extension">;
  readonly #seedLookup: SeedLookup;
  readonly #clockDrift: number;
  readonly #topology = new Topology();
  readonly #listeners: ((observed: Observed) => void)[] = [];
  /** What every node together sent to each address, a stranger's included. */
  #sentTo = new Map<string, { datagrams: number; bytes: number; largestBytes: number }>();
  #faults: NetworkFaults;
  #nowMs = 0;

  /**
   * A cluster of `size` nodes, all started at time 0.
   *
   * @throws {RangeError} if `size` or `clockDrift` is out of range.
   */
  constructor(options: ClusterOptions) {
    const size = options.size ?? 0;
    if (!Number.isInteger(size) || size < 0 || size > 60_000) {
      throw new RangeError(`size must be an integer from 0 to 60000, got ${size}`);
    }
    const drift = options.clockDrift ?? 0;
    if (!(drift >= 0 && drift < 0.5)) {
      throw new RangeError(`clockDrift must be from 0 to 0.5, got ${drift}`);
    }
    this.#prng = new Prng(options.seed);
    this.#netPrng = this.#prng.fork();
    this.#membership = options.membership ?? {};
    this.#seedLookup = options.seedLookup ?? {};
    this.#faults = options.faults ?? {};
    this.#clockDrift = drift;
    for (let i = 0; i < size; i++) this.addNode({ seeds: [i === 0 ? 1 : 0] });
  }

  /** Virtual time, in milliseconds. */
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

  /** Replaces the network's faults. */
  setFaults(faults: NetworkFaults): void {
    this.#faults = faults;
  }

  /** Calls `listener` on every change of mind of every node. */
  onChange(listener: (observed: Observed) => void): void {
    this.#listeners.push(listener);
  }

  /** The address of node `index`: 10.0.x.y:7946. */
  static addressOf(index: number): Address {
    const n = index + 1;
    return Address.of(new Uint8Array([10, 0, (n >> 8) & 0xff, n & 0xff]), 7946);
  }

  /**
   * Starts a node now, joining through `seeds` (indices; default node 0),
   * which it is given by name and looks up as `seedLookup` says (default:
   * the cluster's).
   *
   * @returns Its index.
   */
  addNode(options: { seeds?: readonly number[]; seedLookup?: SeedLookup } = {}): number {
    const index = this.#slots.length;
    const address = Cluster.addressOf(index);
    const drift = (this.#prng.nextFloat() * 2 - 1) * this.#clockDrift;
    this.#slots.push({
      index,
      address,
      node: undefined,
      seeds: [...(options.seeds ?? [0])].filter((s) => s !== index),
      seedLookup: options.seedLookup ?? this.#seedLookup,
      rate: 1 + drift,
      pausedUntilMs: -Infinity,
      inbox: [],
      wakeAtMs: Infinity,
      wakeLocalMs: Infinity,
      lastLocalMs: 0,
      generation: 0,
      traffic: { ...EMPTY_TRAFFIC },
    });
    this.#byAddress.set(address.toString(), index);
    this.#boot(this.#slots[index]);
    return index;
  }

  /** The node at `index`, if it is running (not crashed, not gone). */
  node(index: number): Node | undefined {
    return this.#slot(index).node;
  }

  /** Whether node `index` runs: started, not crashed, not left. Paused nodes run. */
  isRunning(index: number): boolean {
    return this.#slot(index).node !== undefined;
  }

  /** Runs `run` at virtual time `atMs`. */
  at(atMs: number, run: () => void): void {
    this.#events.push({ atMs: Math.max(atMs, this.#nowMs), kind: "do", run });
  }

  /** Runs every event due until `untilMs`, then sets the clock there. */
  runUntil(untilMs: number): void {
    for (
      let event = this.#events.peek();
      event && event.atMs <= untilMs;
      event = this.#events.peek()
    ) {
      this.#events.pop();
      this.#nowMs = event.atMs;
      this.#process(event);
    }
    this.#nowMs = Math.max(this.#nowMs, untilMs);
  }

  /** Runs for `durationMs` more. */
  runFor(durationMs: number): void {
    this.runUntil(this.#nowMs + durationMs);
  }

  /** Stops node `index` at once, as a crash: no word to anyone. */
  crash(index: number): void {
    const slot = this.#slot(index);
    slot.node = undefined;
    slot.inbox = [];
    slot.generation++;
  }

  /** Starts a fresh node at the address of node `index`, which must not run. */
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
    this.#flush(slot);
    this.crash(index);
  }

  /**
   * Pauses node `index` for `durationMs`, like a long GC: it hears and does
   * nothing, then works through what queued up meanwhile.
   */
  pause(index: number, durationMs: number): void {
    const slot = this.#slot(index);
    slot.pausedUntilMs = this.#nowMs + durationMs;
    const generation = slot.generation;
    this.at(slot.pausedUntilMs, () => {
      if (slot.generation !== generation || !slot.node) return;
      const inbox = slot.inbox;
      slot.inbox = [];
      for (const { from, bytes } of inbox) {
        slot.node?.handleDatagram(this.#localMs(slot), from, bytes);
      }
      slot.node.handleTimeout(this.#localMs(slot));
      this.#flush(slot);
    });
  }

  /** Hands node `index` a datagram as if it came from `from` (a stranger, say). */
  inject(index: number, from: Address, bytes: Uint8Array): void {
    this.#events.push({ atMs: this.#nowMs, kind: "deliver", to: index, from, bytes });
  }

  /** What node `index` believes of every member, itself included ("alive"). */
  view(index: number): Map<string, MemberState> {
    const slot = this.#slot(index);
    const view = new Map<string, MemberState>();
    if (!slot.node) return view;
    view.set(slot.address.toString(), "alive");
    for (const member of slot.node.members()) view.set(member.address.toString(), member.state);
    return view;
  }

  /** Whether every running node sees exactly the running nodes alive. */
  converged(): boolean {
    const running = this.#slots.filter((s) => s.node).map((s) => s.address.toString());
    return this.#slots.every((slot) => {
      if (!slot.node) return true;
      const view = this.view(slot.index);
      const alive = [...view].filter(([, state]) => state === "alive").map(([key]) => key);
      return alive.length === running.length && running.every((key) => view.get(key) === "alive");
    });
  }

  /** What node `index` sent since the last `resetTraffic`. */
  traffic(index: number): Traffic {
    return { ...this.#slot(index).traffic };
  }

  /** What all nodes together sent to `address` since the last `resetTraffic`, node or not. */
  trafficTo(address: Address): Traffic {
    return { ...(this.#sentTo.get(address.toString()) ?? EMPTY_TRAFFIC) };
  }

  /** Zeroes every node's traffic counters. */
  resetTraffic(): void {
    for (const slot of this.#slots) slot.traffic = { ...EMPTY_TRAFFIC };
    this.#sentTo = new Map();
  }

  #slot(index: number): Slot {
    const slot = this.#slots[index];
    if (!slot) throw new RangeError(`no node ${index} (the cluster has ${this.#slots.length})`);
    return slot;
  }

  #boot(slot: Slot): void {
    slot.generation++;
    const observer = slot.index;
    const node = new Node(slot.address, {
      ...this.#membership,
      seed: this.#prng.nextU32(),
      seeds: slot.seeds.map(seedName),
      extension: {
        memberChanged: (change) => {
          for (const listener of this.#listeners) listener({ atMs: this.#nowMs, observer, change });
        },
      },
    });
    slot.node = node;
    slot.wakeAtMs = Infinity;
    this.#reschedule(slot);
  }

  /**
   * A node's own clock, which may run fast or slow; woken for a deadline, it
   * reads at least that deadline, whatever the rounding of the conversion.
   */
  #localMs(slot: Slot, atLeastMs = 0): number {
    slot.lastLocalMs = Math.max(slot.lastLocalMs, this.#nowMs * slot.rate, atLeastMs);
    return slot.lastLocalMs;
  }

  #process(event: SimEvent): void {
    if (event.kind === "do") return event.run();
    const slot = this.#slots[event.kind === "wake" ? event.node : event.to];
    if (!slot.node) return;
    if (event.kind === "wake") {
      if (event.generation !== slot.generation || event.atMs !== slot.wakeAtMs) return;
      slot.wakeAtMs = Infinity;
      if (this.#nowMs < slot.pausedUntilMs) return;
      slot.node.handleTimeout(this.#localMs(slot, slot.wakeLocalMs));
    } else if (this.#nowMs < slot.pausedUntilMs) {
      slot.inbox.push({ from: event.from, bytes: event.bytes });
      return;
    } else {
      slot.node.handleDatagram(this.#localMs(slot), event.from, event.bytes);
    }
    this.#flush(slot);
  }

  /** Sends what the node has to send, and schedules its next timeout. */
  #flush(slot: Slot): void {
    const node = slot.node;
    if (!node) return;
    for (let r = node.pollResolve(); r; r = node.pollResolve()) {
      const { name } = r;
      const { atMs, ips } = answer(slot.seedLookup, this.#nowMs, r.host, Cluster.addressOf);
      const deliver = () => {
        if (slot.node !== node) return; // asked by an earlier life
        if (this.#nowMs < slot.pausedUntilMs) return this.at(slot.pausedUntilMs, deliver);
        if (ips === undefined) node.handleResolveFailed(this.#localMs(slot), name);
        else node.handleResolved(this.#localMs(slot), name, ips);
        this.#flush(slot);
      };
      this.at(atMs, deliver);
    }
    for (let t = node.pollTransmit(); t; t = node.pollTransmit()) {
      const key = t.to.toString();
      let toward = this.#sentTo.get(key);
      if (!toward) this.#sentTo.set(key, toward = { ...EMPTY_TRAFFIC });
      for (const traffic of [slot.traffic, toward]) {
        traffic.datagrams++;
        traffic.bytes += t.bytes.length;
        traffic.largestBytes = Math.max(traffic.largestBytes, t.bytes.length);
      }
      if (t.bytes.length > MAX_DATAGRAM_BYTES) {
        throw new Error(`node ${slot.index} sent ${t.bytes.length} bytes`);
      }
      const to = this.#byAddress.get(key);
      if (to === undefined || !this.#topology.connected(slot.index, to)) continue;
      for (const delayMs of deliveryDelays(this.#faults, this.#netPrng)) {
        this.#events.push({
          atMs: this.#nowMs + delayMs,
          kind: "deliver",
          to,
          from: slot.address,
          bytes: t.bytes,
        });
      }
    }
    this.#reschedule(slot);
  }

  #reschedule(slot: Slot): void {
    const deadline = slot.node?.pollTimeout();
    if (deadline === undefined) return;
    const atMs = Math.max(this.#nowMs, deadline / slot.rate);
    if (atMs === slot.wakeAtMs) return;
    slot.wakeAtMs = atMs;
    slot.wakeLocalMs = deadline;
    this.#events.push({ atMs, kind: "wake", node: slot.index, generation: slot.generation });
  }
}
