/**
 * A hot key as the allocator holds it on its slot, and this node's own
 * demand of it: smoothed from the slot's request counter, kept at the start
 * of each of the last rounds so that it can be weighed against the peers'
 * reports made at those times ({@link OwnDemand}), and the cool point below
 * which, here and at every peer, the key goes back to its cold share once
 * the cooldown has passed ({@link cooledDown}).
 *
 * @module
 */

import type { Hash64 } from "../hash.ts";
import type { HotShare, Slot } from "../keytable.ts";
import type { Rule } from "../rule.ts";
import type { Phase } from "./phase.ts";

/** A key coordinated with the peers: what the allocator keeps on its slot. */
export interface HotKey extends HotShare {
  rule: Rule;
  readonly slot: Slot;
  readonly hash: Hash64;
  /** The slot's request counter when demand was last measured. */
  seenRequests: number;
  /** Smoothed local demand, requests a second. */
  demand: number;
  /** The demand at the start of each of the last rounds, by round modulo its length. */
  readonly history: Float64Array;
  /**
   * Until when the key runs at its settling share, while the peers' reports
   * of it arrive: from when it turned hot here, or woke here (`quiet`).
   */
  settlingUntilMs: number;
  /** Whether this node's own demand of the key has sunk below the cool point. */
  quiet: boolean;
  /** Whether the key settles having woken here, rather than having just turned hot. */
  woke: boolean;
  /** The last reshare's figures, for `Allocator.hotKeys`: share, limit, and the split's inputs. */
  last: {
    share: number;
    limitPerSec: number;
    spare: number;
    floor: number;
    total: number;
    n: number;
  };
  /** Since when the key has been cool everywhere; undefined while busy. */
  coolSinceMs: number | undefined;
  /** Where this node's admissions of the key fall among its peers' (phase.ts). */
  readonly phase: Phase;
}

/**
 * Rounds of a hot key's own demand kept, to compare like with like: as far
 * back as the reports held can have been made. At 1000 nodes a datagram
 * relays some 40 of them, so each origin's news comes every 2 to 3 s and a
 * report held is often older than that; with 16 rounds (3.2 s) this node's
 * figure for those older times was the oldest kept, too high while demand
 * rose, and four seconds after a jump the fleet's shares added up to 1.1 R.
 */
const HISTORY_ROUNDS = 64;

/**
 * How long a hot key must stay cool, here and at every peer, before it is
 * demoted to its cold share: long enough to ride out a lull between bursts,
 * short enough that a key gone quiet frees its place in the hot set soon.
 */
export const COOLDOWN_MS = 5_000;

/**
 * The time constant of the smoothed demand: a step in a key's rate is 63%
 * in after this, 95% after three. Shorter follows faster and jitters more.
 */
export const DEMAND_TAU_MS = 1_000;

/**
 * A hot key is cool once its demand here and the others' are each below
 * this fraction of the cold share α·R/N. Below 1, so that a key nominated
 * for nearing its cold share is not cool the moment it turns hot: the gap
 * is the hysteresis that keeps keys from flapping between hot and cold.
 */
export const COOL_FRACTION = 0.5;

// Relations the constants above must keep, checked when the module loads.
if (!(COOL_FRACTION > 0 && COOL_FRACTION < 1)) {
  throw new Error("allocator: COOL_FRACTION must be in (0, 1), below the nomination point");
}
if (!(3 * DEMAND_TAU_MS <= COOLDOWN_MS)) {
  // A key that stops must look cool (95% decayed) within the cooldown.
  throw new Error("allocator: the demand estimate must settle within COOLDOWN_MS");
}

/**
 * The record of `slot` turned hot now, its demand starting at `demand`,
 * settling until `settlingUntilMs`; the caller puts it on the slot.
 */
export function newHotKey(
  slot: Slot,
  demand: number,
  settlingUntilMs: number,
  phase: Phase,
): HotKey {
  return {
    seenRequests: slot.requests,
    rule: slot.rule,
    slot,
    hash: slot.hash!,
    demand,
    history: new Float64Array(HISTORY_ROUNDS).fill(demand),
    settlingUntilMs,
    quiet: false,
    woke: false,
    coolSinceMs: undefined,
    phase,
    last: { share: 0, limitPerSec: 0, spare: 0, floor: 0, total: 0, n: 1 },
  };
}

/**
 * Whether `hot` has been cool everywhere (its demand here and `others`, the
 * peers', each below the cool point of `coldShare`) for `cooldownMs` by
 * `nowMs`, and goes back to its cold share; notes since when it is cool.
 */
export function cooledDown(
  hot: HotKey,
  others: number,
  coldShare: number,
  nowMs: number,
  cooldownMs: number,
): boolean {
  const threshold = COOL_FRACTION * coldShare;
  if (hot.demand < threshold && others < threshold) hot.coolSinceMs ??= nowMs;
  else hot.coolSinceMs = undefined;
  return hot.coolSinceMs !== undefined && nowMs - hot.coolSinceMs >= cooldownMs;
}

/**
 * The rounds of demand reports, one a protocol period, and this node's own
 * demand of its hot keys over them: measured at each tick, and kept at the
 * start of each of the last `HISTORY_ROUNDS` rounds.
 */
export class OwnDemand {
  readonly #periodMs: number;
  readonly #tauMs: number;
  /** Half the step one request puts in a key's smoothed demand, requests a second. */
  readonly halfStep: number;
  #round = 0;
  #lastRoundMs = -Infinity;
  /** When each of the last rounds started, the current one first. */
  readonly #roundsAtMs = new Float64Array(HISTORY_ROUNDS).fill(-Infinity);
  #lastTickMs: number | undefined;

  /** Rounds of `periodMs`, demand smoothed with the time constant `tauMs`. */
  constructor(periodMs: number, tauMs: number) {
    this.#periodMs = periodMs;
    this.#tauMs = tauMs;
    this.halfStep = 500 / tauMs;
  }

  /** The current round, the one this node's report names. */
  get round(): number {
    return this.#round;
  }

  /** When the current round started, ms (-Infinity before the first). */
  get lastRoundMs(): number {
    return this.#lastRoundMs;
  }

  /** When each of the last rounds started, the current one first: where {@link demandAt} bends. */
  get roundsAtMs(): Float64Array {
    return this.#roundsAtMs;
  }

  /**
   * A tick at `nowMs`: starts a round if one is due, keeping each of `hots`'
   * demand at its start.
   *
   * @returns The milliseconds since the last tick, 0 at the first.
   */
  tick(nowMs: number, hots: Iterable<HotKey>): number {
    const dtMs = this.#lastTickMs === undefined ? 0 : nowMs - this.#lastTickMs;
    this.#lastTickMs = nowMs;
    if (nowMs - this.#lastRoundMs >= this.#periodMs) {
      this.#round = (this.#round + 1) >>> 0;
      this.#lastRoundMs = nowMs;
      this.#roundsAtMs.copyWithin(1, 0, HISTORY_ROUNDS - 1);
      this.#roundsAtMs[0] = nowMs;
      for (const hot of hots) hot.history[this.#round % HISTORY_ROUNDS] = hot.demand;
    }
    return dtMs;
  }

  /** Brings each of `hots`' smoothed demand up to date with the requests of the last `dtMs`. */
  measure(hots: Iterable<HotKey>, dtMs: number): void {
    if (dtMs <= 0) return;
    const keep = Math.exp(-dtMs / this.#tauMs);
    for (const hot of hots) {
      const rate = ((hot.slot.requests - hot.seenRequests) * 1_000) / dtMs;
      hot.seenRequests = hot.slot.requests;
      hot.demand = keep * hot.demand + (1 - keep) * rate;
    }
  }

  /**
   * A hot key's own demand as of `atMs`, between the figures kept at the
   * starts of the last rounds (and the current one after the last start);
   * the oldest kept before those.
   */
  demandAt(hot: HotKey, atMs: number): number {
    let later = hot.demand, laterMs = this.#lastTickMs ?? atMs;
    for (let k = 0; k < HISTORY_ROUNDS; k++) {
      const i = (this.#round - k + HISTORY_ROUNDS) % HISTORY_ROUNDS;
      const d = hot.history[i], ms = this.#roundsAtMs[k];
      // Before the first round there is nothing to go between.
      if (ms === -Infinity) return later;
      if (ms <= atMs) {
        return laterMs > ms ? d + ((later - d) * (atMs - ms)) / (laterMs - ms) : d;
      }
      later = d;
      laterMs = ms;
    }
    return later;
  }
}
