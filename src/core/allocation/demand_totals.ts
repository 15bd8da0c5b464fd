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
  /**
   * By place in `named`, the report's stretch of own demand among
   * `stretchesOf` (see {@link DemandTotals.ownSum}), but for the places in
   * `unplaced`, whose times changed since.
   */
  stretches: Uint8Array<ArrayBuffer>;
  /** The breaks `stretches` are of; undefined while they are of none. */
  stretchesOf: Float64Array<ArrayBuffer> | undefined;
  /** Places in `named` whose stretch is not in `stretches` (some maybe twice, or past the end). */
  readonly unplaced: number[];
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
          total = {
            id,
            sum: 0,
            reports: 0,
            named: [],
            madeAtMs: new Float64Array(8),
            stretches: new Uint8Array(8),
            stretchesOf: undefined,
            unplaced: [],
          };
          this.#totals.set(id, total);
        }
        d = { id, demand: value, madeMs, stamp, total, at: total.named.length };
        total.named.push(d);
        if (d.at >= total.madeAtMs.length) {
          total.madeAtMs = grown(total.madeAtMs);
          total.stretches = grown(total.stretches);
        }
        total.madeAtMs[d.at] = madeMs;
        unplace(total, d.at);
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
   *
   * Finding each report's stretch (the first break at or before it) was
   * most of what was left: three quarters of 10 to 30 µs a call over 1000
   * reports, at 1000 nodes. So each report's stretch is kept
   * (`total.stretches`) with the breaks it is of. The breaks move on by a
   * round start at a time, latest first: moved on by `s`, a report made
   * before the latest `s` of them is `s` stretches further (or in the
   * last), and only the others and those taken since (`total.unplaced`) are
   * walked. The stretches are those of the walk, summed in the same order,
   * so the sums are the same to the bit. Breaks out of order, or not moved
   * on from the last ones, are walked for every report.
   */
  ownSum(total: Total, own: OwnDemandAt, sinceMs: number, ownSum: number): number {
    const breaks = own.breaksMs ?? NO_BREAKS;
    const last = breaks.length;
    const segments = last + 1;
    if (this.#segmentN.length < segments) {
      this.#segmentN = new Float64Array(segments);
      this.#segmentSum = new Float64Array(segments);
    }
    const segN = this.#segmentN.fill(0, 0, segments);
    const segSum = this.#segmentSum.fill(0, 0, segments);
    const namedAtMs = total.madeAtMs;
    const stretches = total.stretches;
    const reports = total.reports;
    // A stretch kept must fit its byte, and be found from where it was only on breaks in order.
    const kept = last < 256 && latestFirst(breaks);
    const shift = kept ? shiftSince(total.stretchesOf, breaks) : -1;
    if (shift >= 0) {
      // Those taken since, among the breaks the others are of.
      const then = total.stretchesOf!;
      for (const at of total.unplaced) {
        if (at < reports) stretches[at] = stretchOf(then, namedAtMs[at]);
      }
    }
    total.unplaced.length = 0;
    const latestNew = shift > 0 ? breaks[shift - 1] : -Infinity;
    let before = 0;
    for (let i = 0; i < reports; i++) {
      const made = namedAtMs[i];
      let k: number;
      if (shift === 0) k = stretches[i];
      else if (shift > 0 && made < latestNew) {
        k = stretches[i] + shift;
        if (k > last) k = last;
        stretches[i] = k;
      } else {
        k = stretchOf(breaks, made);
        stretches[i] = k;
      }
      segN[k]++;
      segSum[k] += made;
      if (made < sinceMs) before++;
    }
    for (let k = 0; k < segments; k++) {
      if (segN[k] > 0) ownSum += segN[k] * own.ownAt(segSum[k] / segN[k]);
    }
    if (kept) {
      if (total.stretchesOf?.length !== last) total.stretchesOf = new Float64Array(last);
      total.stretchesOf.set(breaks);
    } else total.stretchesOf = undefined;
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
      total.stretches[d.at] = total.stretches[last.at];
      // It may have been unplaced at its old place.
      unplace(total, d.at);
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
 * Whether `breaks` go from latest to earliest (equal neighbours allowed, no
 * NaN), as {@link DemandTotals.ownSum}'s walk from a kept stretch needs.
 */
function latestFirst(breaks: ArrayLike<number>): boolean {
  for (let k = 1; k < breaks.length; k++) if (!(breaks[k - 1] >= breaks[k])) return false;
  return breaks.length === 0 || breaks[0] === breaks[0];
}

/** A demand's new figure, of a report made at `madeMs`, in its key's total. */
function recount(d: Demand, demand: number, madeMs: number): void {
  d.total.sum += demand - d.demand;
  d.demand = demand;
  d.madeMs = madeMs;
  d.total.madeAtMs[d.at] = madeMs;
  unplace(d.total, d.at);
}

/**
 * Marks the stretch at `at` in `total` as not known. While more are unplaced
 * than held (a key summed rarely or never here), none are: the next sum walks
 * them all.
 */
function unplace(total: Total, at: number): void {
  if (total.stretchesOf === undefined) return;
  if (total.unplaced.length < total.reports) total.unplaced.push(at);
  else {
    total.stretchesOf = undefined;
    total.unplaced.length = 0;
  }
}

/**
 * How many breaks `now` has moved on from `then` (each later round's start
 * put first, the earliest dropped), 0 if they are the same; -1 if neither.
 */
function shiftSince(then: ArrayLike<number> | undefined, now: ArrayLike<number>): number {
  if (then === undefined || then.length !== now.length) return -1;
  const n = now.length;
  for (let s = 0; s < n; s++) {
    let same = true;
    for (let j = 0; j + s < n && same; j++) same = now[j + s] === then[j];
    if (same) return s;
  }
  return n === 0 ? 0 : -1;
}

/** The first of `breaks` at or before `made`, or their count if none is. */
function stretchOf(breaks: ArrayLike<number>, made: number): number {
  let k = 0;
  while (k < breaks.length && !(breaks[k] <= made)) k++;
  return k;
}

/** `a` in an array of its kind twice its length. */
export function grown<A extends Float64Array<ArrayBuffer> | Uint8Array<ArrayBuffer>>(a: A): A {
  const b = new (a.constructor as new (length: number) => A)(2 * a.length);
  b.set(a);
  return b;
}
