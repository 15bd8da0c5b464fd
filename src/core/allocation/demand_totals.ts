/**
 * Each key's demand summed over the reports held that name it, kept as the
 * reports come and go (summing a thousand peers' reports at every tick of
 * every node was most of a large simulated fleet's time), and this node's
 * own demand as of the times those reports were made, summed to weigh
 * against theirs like for like ({@link DemandTotals.ownSum}).
 *
 * @module
 */

import { hashIdOf } from "../hash.ts";
import type { GroupReader } from "./report.ts";

/**
 * A key's demand summed over every report held that names it, how many
 * reports name it, and the demands themselves with the times their
 * reports were made, for the walk that weighs this node's own demand
 * against theirs.
 */
export interface Total {
  readonly id: number;
  sum: number;
  reports: number;
  readonly named: Demand[];
  /**
   * By place in `named`, when the report was made: the walk reads these
   * numbers, side by side in memory, not the demands and reports, which a
   * large fleet scatters over its heap.
   */
  madeAtMs: Float64Array<ArrayBuffer>;
}

/** One report's demand of one key, as counted in the key's total. */
export interface Demand {
  readonly id: number;
  demand: number;
  /** When the report that named it was made, as counted in the total. */
  madeMs: number;
  /** The count of the report that last named it, to tell what a new one left out. */
  stamp: number;
  readonly total: Total;
  /** Its place in its total's `named`. */
  at: number;
}

/** This node's own demand of a key, for {@link DemandTotals.ownSum}. */
export interface OwnDemandAt {
  /** This node's own demand of the key as of a time. */
  readonly ownAt: (ms: number) => number;
  /**
   * Times, newest first, between which `ownAt` is linear (and from the
   * first on, and before the last): none if it is linear throughout.
   */
  readonly breaksMs?: ArrayLike<number>;
}

const NO_BREAKS: ArrayLike<number> = [];

/** The totals by key hash's number; see the module doc. */
export class DemandTotals {
  readonly #totals = new Map<number, Total>();
  /** A report's demands while the next one of its origin is read: the two swap. */
  #spare: Demand[] = [];
  /** Counts reports taken, to stamp the demands each names. */
  #stamp = 0;
  /** Scratch for `ownSum`: reports, and the sum of their times, by own demand's segment. */
  #segmentN = new Float64Array(17);
  #segmentSum = new Float64Array(17);
  /** How many of the reports the last {@link DemandTotals.ownSum} walked were made before its `sinceMs`. */
  madeBefore = 0;

  /** The total of the key hash's number `id`, while some report held names it. */
  get(id: number): Total | undefined {
    return this.#totals.get(id);
  }

  /**
   * The demands of `group`, a report made at `madeMs`, in the place of
   * `held`, its origin's last: each key's figure and time updated in its
   * total, keys no longer named taken out.
   *
   * @returns The report's demands now: `held` itself, updated, when the group names the same keys.
   */
  replace(held: Demand[], group: GroupReader, madeMs: number): Demand[] {
    if (sameKeys(held, group)) {
      // The same keys in the same order, as an origin's rounds mostly are: in place.
      for (let i = 0; i < group.records; i++) recount(held[i], group.demand(i), madeMs);
      return held;
    }
    const old = held;
    const fresh = this.#spare;
    const stamp = ++this.#stamp;
    for (let i = 0; i < group.records; i++) {
      const id = hashIdOf(group.hashHi(i), group.hashLo(i));
      const value = group.demand(i);
      // An origin lists its hot keys in the same order round after round:
      // the key at the same place is the one to look at first.
      let d: Demand | undefined = old[i]?.id === id ? old[i] : undefined;
      d ??= old.find((x) => x.id === id) ?? fresh.find((x) => x.id === id);
      if (d?.stamp === stamp) {
        // Named twice in a group (or two keys sharing a number): the last figure counts.
        recount(d, value, madeMs);
        continue;
      }
      if (d !== undefined) {
        recount(d, value, madeMs);
        d.stamp = stamp;
      } else {
        let total = this.#totals.get(id);
        if (total === undefined) {
          total = { id, sum: 0, reports: 0, named: [], madeAtMs: new Float64Array(8) };
          this.#totals.set(id, total);
        }
        d = { id, demand: value, madeMs, stamp, total, at: total.named.length };
        total.named.push(d);
        if (d.at >= total.madeAtMs.length) total.madeAtMs = grown(total.madeAtMs);
        total.madeAtMs[d.at] = madeMs;
        total.reports++;
        total.sum += value;
      }
      fresh.push(d);
    }
    for (const d of old) if (d.stamp !== stamp) this.#remove(d);
    old.length = 0;
    this.#spare = old;
    return fresh;
  }

  /** Takes a report's demands out of their keys' totals: the report is forgotten. */
  removeAll(demands: readonly Demand[]): void {
    for (const d of demands) this.#remove(d);
  }

  /**
   * `ownSum` plus this node's own demand (`own.ownAt`) as of the time each
   * report in `total` was made; counts in {@link DemandTotals.madeBefore}
   * those made before `sinceMs`.
   *
   * Walked by the times alone: the reports themselves, walked for each key
   * at every tick, were most of a 200-node fleet's time. Own demand is
   * linear between breaks, so its sum over the times between two is their
   * count times its value at their mean: asked for each report, it was a
   * tenth of a 1000-node fleet's time.
   */
  ownSum(total: Total, own: OwnDemandAt, sinceMs: number, ownSum: number): number {
    const breaks = own.breaksMs ?? NO_BREAKS;
    const segments = breaks.length + 1;
    if (this.#segmentN.length < segments) {
      this.#segmentN = new Float64Array(segments);
      this.#segmentSum = new Float64Array(segments);
    }
    const segN = this.#segmentN.fill(0, 0, segments);
    const segSum = this.#segmentSum.fill(0, 0, segments);
    const namedAtMs = total.madeAtMs;
    // A report's stretch is the first break at or before its time. Walked
    // from the first break, that took several steps a report (the breaks
    // are a round apart, and reports are relayed for rounds); the walk
    // starts instead below the stretch: never past it, as no two breaks
    // are further apart than `widest`, so the same stretch.
    const skip = skipRate(breaks);
    const first = breaks[0];
    let before = 0;
    for (let i = 0; i < total.reports; i++) {
      const made = namedAtMs[i];
      let k = 0;
      const behind = (first - made) * skip.perMs;
      if (behind >= 2) k = Math.min(Math.floor(behind) - 1, skip.finite);
      while (k < breaks.length && !(breaks[k] <= made)) k++;
      segN[k]++;
      segSum[k] += made;
      if (made < sinceMs) before++;
    }
    for (let k = 0; k < segments; k++) {
      if (segN[k] > 0) ownSum += segN[k] * own.ownAt(segSum[k] / segN[k]);
    }
    this.madeBefore = before;
    return ownSum;
  }

  /** Takes one report's demand of a key out of the key's total. */
  #remove(d: Demand): void {
    const total = d.total;
    const last = total.named.pop()!;
    if (last !== d) {
      total.named[d.at] = last;
      total.madeAtMs[d.at] = last.madeMs;
      last.at = d.at;
    }
    total.reports--;
    total.sum = total.reports === 0 ? 0 : total.sum - d.demand;
    if (total.reports === 0) this.#totals.delete(total.id);
  }
}

/** Whether `group` names the keys `held` does, in its order. */
function sameKeys(held: readonly Demand[], group: GroupReader): boolean {
  if (held.length !== group.records) return false;
  for (let i = 0; i < held.length; i++) {
    if (held[i].id !== hashIdOf(group.hashHi(i), group.hashLo(i))) return false;
  }
  return true;
}

/**
 * How far to start the walk for a report's stretch in `breaks`: `perMs`, the
 * breaks a millisecond before the first that may be passed over, and
 * `finite`, how many breaks are times (the rest are -Infinity). `perMs` is
 * 0, so that every walk starts at the first break, unless the breaks are
 * times, latest first, then -Infinity, and some two of them differ: then
 * no stretch between two breaks is wider than `1 / perMs`, and a report
 * `m` ms before the first break is past at least `m × perMs - 1` of them
 * (one less for the rounding of the product).
 */
function skipRate(breaks: ArrayLike<number>): { perMs: number; finite: number } {
  let finite = 0;
  let widest = 0;
  while (finite < breaks.length && breaks[finite] > -Infinity) {
    if (finite > 0) {
      const gap = breaks[finite - 1] - breaks[finite];
      if (!(gap >= 0 && gap < Infinity)) return { perMs: 0, finite };
      if (gap > widest) widest = gap;
    }
    finite++;
  }
  for (let j = finite; j < breaks.length; j++) {
    if (breaks[j] !== -Infinity) return { perMs: 0, finite };
  }
  return { perMs: widest > 0 && breaks[0] < Infinity ? 1 / widest : 0, finite };
}

/** A demand's new figure, of a report made at `madeMs`, in its key's total. */
function recount(d: Demand, demand: number, madeMs: number): void {
  d.total.sum += demand - d.demand;
  d.demand = demand;
  d.madeMs = madeMs;
  d.total.madeAtMs[d.at] = madeMs;
}

/** `a` in an array twice its length. */
export function grown(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const b = new Float64Array(2 * a.length);
  b.set(a);
  return b;
}
