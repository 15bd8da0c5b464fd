/**
 * The simulator's in-memory network: what happens to a datagram between two
 * nodes, decided by seeded randomness and named faults.
 *
 * @module
 */

import type { Prng } from "../../core/prng.ts";

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
  /**
   * Where each node is and what lies between: with regions, a datagram's
   * latency and jitter are its link's (in the place of `latencyMs` and
   * `jitterMs`), and it is lost to the link's loss as well as to `lossRate`.
   */
  readonly regions?: Regions;
}

/** What a datagram meets from one region to another: each direction its own. */
export interface RegionLink {
  /** One-way delay, ms. */
  readonly delayMs: number;
  /** Uniform jitter added to the delay, ms. Default 0. */
  readonly jitterMs?: number;
  /** Share of datagrams lost, 0 to 1. Default 0. */
  readonly lossRate?: number;
}

/** Nodes placed in regions, and the link from each region to each (itself included). */
export interface Regions {
  /** The region of node `index`: an index into `links`. */
  readonly of: (index: number) => number;
  /** `links[a][b]`: from region a to region b; `links[a][a]`: inside region a. */
  readonly links: readonly (readonly RegionLink[])[];
}

/**
 * Regions whose links are the same both ways: `delayMs[a][b]` one way
 * between regions a and b (the diagonal: inside a region), every link
 * between two regions losing `lossRate`, jitter a share of each delay.
 *
 * @param of The region of each node index.
 * @param delayMs The one-way delays, a square matrix read only on and above its diagonal.
 * @param options `lossRate` between regions (default 0), `jitter` as a share of the delay (default 0).
 * @returns The regions.
 */
export function symmetricRegions(
  of: (index: number) => number,
  delayMs: readonly (readonly number[])[],
  options: { lossRate?: number; jitter?: number } = {},
): Regions {
  const links = delayMs.map((row, a) =>
    row.map((_, b) => {
      const d = delayMs[Math.min(a, b)][Math.max(a, b)];
      return {
        delayMs: d,
        jitterMs: d * (options.jitter ?? 0),
        lossRate: a === b ? 0 : options.lossRate ?? 0,
      };
    })
  );
  return { of, links };
}

/** Who may talk to whom: partitions into groups, a side cut off, and links cut one way. */
export class Topology {
  #group = new Map<number, number>();
  readonly #cut = new Set<string>();
  #side: ((index: number) => boolean) | undefined;

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

  /**
   * Cuts the nodes of which `side` holds (a region, say) off from the
   * others, both ways: nodes added later are on the side `side` says.
   *
   * @param side Whether node `index` is on the side cut off.
   */
  cutOff(side: (index: number) => boolean): void {
    this.#side = side;
  }

  /** Lifts every partition and cut. */
  heal(): void {
    this.#group = new Map();
    this.#cut.clear();
    this.#side = undefined;
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
    if (this.#group.size === 0 && this.#cut.size === 0 && this.#side === undefined) return true;
    if (this.#side && this.#side(from) !== this.#side(to)) return false;
    const a = this.#group.get(from);
    const b = this.#group.get(to);
    if (a !== undefined && b !== undefined && a !== b) return false;
    return !this.#cut.has(`${from}>${to}`);
  }
}

/**
 * The delays after which copies of one datagram from node `from` to node
 * `to` arrive: none when it is lost, two when it is duplicated.
 */
export function deliveryDelays(
  faults: NetworkFaults,
  prng: Prng,
  from = 0,
  to = 0,
): number[] {
  if (prng.nextFloat() < (faults.lossRate ?? 0)) return [];
  const regions = faults.regions;
  const link = regions?.links[regions.of(from)][regions.of(to)];
  // Drawn only with regions, so that a run without them draws as before.
  if (link && prng.nextFloat() < (link.lossRate ?? 0)) return [];
  const latencyMs = link ? link.delayMs : faults.latencyMs ?? 1;
  const jitterMs = link ? link.jitterMs ?? 0 : faults.jitterMs ?? 1;
  const copies = prng.nextFloat() < (faults.duplicateRate ?? 0) ? 2 : 1;
  const delays: number[] = [];
  for (let i = 0; i < copies; i++) {
    let delayMs = latencyMs + prng.nextFloat() * jitterMs;
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
