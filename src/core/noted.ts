/**
 * The noted keys: those denied (or shadow-denied) lately, from which the
 * stats pick the most denied. The set is bounded, so a flood of distinct
 * denied keys costs a fixed amount. It fills only on the deny path, so that
 * is where keys that have cooled are forgotten to make room: reads (the
 * stats) leave the set as it is, and a standalone guard, which has no tick,
 * still notes new keys once old ones cool.
 *
 * @module
 */

import { hasCooled, ratesAt } from "./key_rates.ts";
import type { Slot } from "./keytable.ts";
import { usToMs } from "./time.ts";

/** Denied keys remembered for `mostDenied` at most, unless the options say otherwise. */
export const MAX_NOTED = 4_096;

/**
 * A full set is swept for cooled keys at most this often: a flood of
 * distinct denied keys costs one scan of the set a second, not one a denial.
 * A key takes tens of seconds to cool, so a sweep a second misses none for long.
 */
export const FORGET_EVERY_MS = 1_000;

/** Keys denied lately, at most a bound; iterates over their slots. */
export class NotedKeys implements Iterable<Slot> {
  readonly #slots = new Set<Slot>();
  readonly #max: number;
  readonly #originMs: number;
  #forgotMs = -Infinity;

  /**
   * An empty set.
   *
   * @param options `max`: keys noted at most ({@link MAX_NOTED} when left
   *   out); `originMs`: the caller's clock reading the time base counts from.
   */
  constructor(options: { readonly max?: number; readonly originMs?: number } = {}) {
    this.#max = options.max ?? MAX_NOTED;
    this.#originMs = options.originMs ?? 0;
  }

  /** Keys noted now. */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * Notes a key that was just denied at `nowUs`. When the set is full, the
   * keys that have cooled are forgotten first (at most once a
   * {@link FORGET_EVERY_MS}); if none has, the key is not noted.
   *
   * @param slot The denied key's slot.
   * @param nowUs The time, µs of the time base.
   */
  note(slot: Slot, nowUs: number): void {
    if (this.#slots.has(slot)) return;
    if (this.#slots.size >= this.#max) this.#forgetCooled(this.#originMs + usToMs(nowUs));
    if (this.#slots.size < this.#max) this.#slots.add(slot);
  }

  /**
   * Forgets a slot that left the key table.
   *
   * @param slot The slot.
   */
  delete(slot: Slot): void {
    this.#slots.delete(slot);
  }

  /**
   * The noted slots, some perhaps since cooled: readers skip those, and
   * leave the set alone.
   *
   * @returns An iterator over the slots.
   */
  [Symbol.iterator](): Iterator<Slot> {
    return this.#slots.values();
  }

  #forgetCooled(nowMs: number): void {
    if (nowMs - this.#forgotMs < FORGET_EVERY_MS) return;
    this.#forgotMs = nowMs;
    for (const slot of this.#slots) {
      if (hasCooled(ratesAt(slot, nowMs))) this.#slots.delete(slot);
    }
  }
}
