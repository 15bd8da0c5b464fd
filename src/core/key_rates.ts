/**
 * A key's rates: moving averages of its slot's counters (requests, denials,
 * shadow denials), for the stats, `keyStats` and the most denied keys, and
 * the test of when a denied key has cooled. All of it is off the request
 * path: a check only counts, on the slot (`keytable.ts`); the rates are
 * brought up to date when someone reads them, and kept beside the slot,
 * not on it.
 *
 * @module
 */

import type { Slot } from "./keytable.ts";

/**
 * A key's rates over the last ten seconds or so: moving averages of its
 * counters, brought up to date when read, off the request path. A key
 * younger than that counts the time before its first check as quiet.
 */
export interface KeyRates {
  /** When they were last brought up to date. */
  atMs: number;
  /** The counters as then. */
  seenRequests: number;
  seenDenied: number;
  seenShadowDenied: number;
  /** Requests a second (weighted by cost). */
  requestsPerSec: number;
  /** Denials a second. */
  deniedPerSec: number;
  /** Shadow denials a second. */
  shadowDeniedPerSec: number;
}

/** The time constant of a key's rates: "the last ten seconds or so". */
const RATES_TAU_MS = 10_000;

/**
 * Each slot's rates, once someone asked (stats, keyStats): off the request
 * path, so off the slot, whose fields stay few (see `ShadowDebt` in `keytable.ts`).
 */
const RATES = new WeakMap<Slot, KeyRates>();

/** Requests a slot's shadow would have denied, weighted by cost. */
export function shadowDenied(slot: Slot): number {
  return slot.shadow?.denied ?? 0;
}

/**
 * Below this many denials (and shadow denials) a second, a key has stopped
 * being denied: it leaves the most denied, and the set of noted keys.
 */
export const COOLED_PER_SEC = 0.01;

/** Brings a slot's rates up to `nowMs`, keeps them for the next read, and returns them. */
export function updateRates(slot: Slot, nowMs: number): KeyRates {
  const r = ratesAt(slot, nowMs);
  RATES.set(slot, r);
  return r;
}

/**
 * A slot's rates as of `nowMs`, from those last kept, keeping nothing: what
 * a read that must leave no trace (the deny path's forgetting) sees.
 */
export function ratesAt(slot: Slot, nowMs: number): KeyRates {
  const r = RATES.get(slot);
  if (r === undefined) {
    // A first read: the averages over the key's life, or over the last
    // RATES_TAU_MS if it is younger, its time before its first check quiet.
    // One check read a millisecond later is 0.1 a second, not 1,000: the
    // rate over a life that short says nothing, and the moving average
    // that starts from zero at birth reads the same.
    const lifeMs = Math.max(RATES_TAU_MS, nowMs - slot.bornMs);
    const perSec = (count: number) => (count * 1_000) / lifeMs;
    return {
      atMs: nowMs,
      seenRequests: slot.requests,
      seenDenied: slot.denied,
      seenShadowDenied: shadowDenied(slot),
      requestsPerSec: perSec(slot.requests),
      deniedPerSec: perSec(slot.denied),
      shadowDeniedPerSec: perSec(shadowDenied(slot)),
    };
  }
  const spanMs = nowMs - r.atMs;
  if (spanMs <= 0) return r;
  // Counts since the last read are taken as spread evenly over the gap.
  const keep = Math.exp(-spanMs / RATES_TAU_MS);
  const blend = (old: number, count: number) => keep * old + (1 - keep) * (count * 1_000 / spanMs);
  return {
    atMs: nowMs,
    seenRequests: slot.requests,
    seenDenied: slot.denied,
    seenShadowDenied: shadowDenied(slot),
    requestsPerSec: blend(r.requestsPerSec, slot.requests - r.seenRequests),
    deniedPerSec: blend(r.deniedPerSec, slot.denied - r.seenDenied),
    shadowDeniedPerSec: blend(r.shadowDeniedPerSec, shadowDenied(slot) - r.seenShadowDenied),
  };
}

/** Whether a key, at these rates, is no longer denied (nor shadow-denied). */
export function hasCooled(r: KeyRates): boolean {
  return r.deniedPerSec < COOLED_PER_SEC && r.shadowDeniedPerSec < COOLED_PER_SEC;
}
