/**
 * The simulator's in-memory network: what happens to a datagram between two
 * nodes, decided by seeded randomness and named faults.
 *
 * @module
 */

import type { Prng } from "../core/prng.ts";

/** Faults of the whole network; each defaults to none. */
export interface NetworkFaults {
  /** Share of datagrams lost, 0 to 1. */
  readonly lossRate?: number;
  /** Share of datagrams delivered twice, 0 to 1. */
  readonly duplicateRate?: number;
  /** Share of datagrams held back by up to `delayMaxMs` more, which reorders them. */
  readonly delayRate?: number;
  /** The longest extra delay. Default 0. */
  readonly delayMaxMs?: number;
  /** One-way latency of every datagram. Default 1. */
  readonly latencyMs?: number;
  /** Uniform jitter added to the latency. Default 1. */
  readonly jitterMs?: number;
}

/** Who may talk to whom: partitions into groups and links cut one way. */
export class Topology {
  #group = new Map<number, number>();
  readonly #cut = new Set<string>();

  /**
   * Splits the nodes into `groups`; nodes in different groups do not hear
   * each other, nodes in no group hear everyone.
   *
   * @param groups The sides: each a list of node indexes.
   */
  partition(groups: readonly (readonly number[])[]): void {
    this.#group = new Map();
    groups.forEach((members, g) => members.forEach((node) => this.#group.set(node, g)));
  }

  /**
   * Cuts the link from `from` to `to`, one way only.
   *
   * @param from The sender's index.
   * @param to The receiver's index.
   */
  cut(from: number, to: number): void {
    this.#cut.add(`${from}>${to}`);
  }

  /** Lifts every partition and cut. */
  heal(): void {
    this.#group = new Map();
    this.#cut.clear();
  }

  /**
   * Whether a datagram from `from` can reach `to`.
   *
   * @param from The sender's index.
   * @param to The receiver's index.
   * @returns Whether datagrams from `from` reach `to`.
   */
  connected(from: number, to: number): boolean {
    // Asked of every datagram: most runs cut nothing, and the key is text.
    if (this.#group.size === 0 && this.#cut.size === 0) return true;
    const a = this.#group.get(from);
    const b = this.#group.get(to);
    if (a !== undefined && b !== undefined && a !== b) return false;
    return !this.#cut.has(`${from}>${to}`);
  }
}

/**
 * The delays after which copies of one datagram arrive: none when it is
 * lost, two when it is duplicated.
 */
export function deliveryDelays(faults: NetworkFaults, prng: Prng): number[] {
  if (prng.nextFloat() < (faults.lossRate ?? 0)) return [];
  const copies = prng.nextFloat() < (faults.duplicateRate ?? 0) ? 2 : 1;
  const delays: number[] = [];
  for (let i = 0; i < copies; i++) {
    let delayMs = (faults.latencyMs ?? 1) + prng.nextFloat() * (faults.jitterMs ?? 1);
    if (prng.nextFloat() < (faults.delayRate ?? 0)) {
      delayMs += prng.nextFloat() * (faults.delayMaxMs ?? 0);
    }
    delays.push(delayMs);
  }
  return delays;
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

type Counter = { datagrams: number; bytes: number; largestBytes: number };
const EMPTY_TRAFFIC: Traffic = { datagrams: 0, bytes: 0, largestBytes: 0 };

function add(traffic: Counter, bytes: number): void {
  traffic.datagrams++;
  traffic.bytes += bytes;
  traffic.largestBytes = Math.max(traffic.largestBytes, bytes);
}

/** What each node sent, and what all of them sent to each address, a stranger's included. */
export class TrafficLog {
  #from: Counter[] = [];
  #to = new Map<string, Counter>();

  /** Counts a datagram of `bytes` bytes from node `from` to the address `to` (as text). */
  count(from: number, to: string, bytes: number): void {
    let toward = this.#to.get(to);
    if (!toward) this.#to.set(to, toward = { ...EMPTY_TRAFFIC });
    add(this.#from[from] ??= { ...EMPTY_TRAFFIC }, bytes);
    add(toward, bytes);
  }

  /** What node `index` sent. */
  from(index: number): Traffic {
    return { ...(this.#from[index] ?? EMPTY_TRAFFIC) };
  }

  /** What all nodes sent to `address` (as text). */
  to(address: string): Traffic {
    return { ...(this.#to.get(address) ?? EMPTY_TRAFFIC) };
  }

  /** Zeroes every counter. */
  reset(): void {
    this.#from = [];
    this.#to = new Map();
  }
}
