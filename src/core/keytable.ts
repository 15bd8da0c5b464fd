/**
 * The bounded table of per-key state. At most `capacity` keys (twice
 * `trackedKeys`) hold a slot; a key whose state has fully replenished holds
 * nothing worth keeping (a fresh slot would decide the same), so it frees
 * its place when room is needed. When every place is taken by a key still
 * paying off its admissions, a newcomer gets no slot and the caller sends it
 * to the shared overflow allowance, the strict side.
 *
 * Where a key lives is up to the runtime's Map, whose string hashing is
 * seeded at random per process, so clients cannot pick keys that crowd out
 * one particular key.
 *
 * A slot counts what its key was checked and denied; the rates read from
 * those counts, off the request path, are in `key_rates.ts`.
 *
 * @module
 */

import { owedAt, type Rate } from "./gcra.ts";
import type { Hash64 } from "./hash.ts";
import type { Rule } from "./rule.ts";

/** What the allocator keeps on a hot key's slot: the rule of its current share. */
export interface HotShare {
  /** The key's share of the fleet-wide limit, as a rule. */
  readonly rule: Rule;
}

/**
 * A key under its shadow: its debt, the instant that is as of, and what the
 * shadow would have denied. It lives apart from the slot, made on the
 * first check under a shadow: on JavaScriptCore a check costs a tenth to a
 * fifth more for each field a slot has past fourteen (measured with
 * `bench/check_bench.ts`), and most keys never run under a shadow.
 */
export interface ShadowDebt {
  /** What the key owes under the shadow, in its rule's units. */
  debt: number;
  /** When `debt` was last brought up to date, µs of the time base. */
  atUs: number;
  /** Requests the shadow would have denied, weighted by cost. */
  denied: number;
}

/** The state of one key: its GCRA debts and the rule it runs under. */
export class Slot {
  /** The key's class (`""` for the default class). */
  readonly className: string;
  /** The key. */
  readonly key: string;
  /** The rule the key runs under, valid while `epoch` matches the book's. */
  rule: Rule;
  /** The book's epoch when `rule` was resolved. */
  epoch: number;
  /** What the key owes under the real limit, in the rule's units, as of {@link atUs}. */
  debt = 0;
  /** When {@link debt} was last brought up to date, µs of the time base; never, at first. */
  atUs = -Infinity;
  /** The key under its shadow; undefined before its first check under one. */
  shadow: ShadowDebt | undefined = undefined;
  /** Requests checked, weighted by cost, since the slot was made: its demand. */
  requests = 0;
  /** Requests denied (in a dry run: that would have been), weighted by cost. */
  denied = 0;
  /** When the key took its place, ms. */
  bornMs = 0;
  /** The key's 64-bit hash, in a fleet; undefined for a standalone guard. */
  hash: Hash64 | undefined = undefined;
  /** The allocator's state while the key is hot (coordinated with the peers). */
  hot: HotShare | undefined = undefined;
  /** Queued for the allocator as nearing its cold share. */
  candidate = false;
  /** Made while the node was held, with one request of its burst rather than all of it. */
  lean = false;

  /** A fresh slot: a full burst. */
  constructor(className: string, key: string, rule: Rule, epoch: number) {
    this.className = className;
    this.key = key;
    this.rule = rule;
    this.epoch = epoch;
  }

  /**
   * Moves the slot to `rule`, keeping its debt in requests rather than in
   * time: a key that owes ten requests owes ten under the new rate too. Kept
   * in time, a key held at a tiny share would owe seconds at a larger one,
   * and a share that grows would deny it for just as long. A debt beyond the
   * new burst is cut to it: the bucket is spent, no more.
   */
  setRule(rule: Rule, nowUs: number): void {
    const old = this.rule;
    this.rule = rule;
    if (nowUs > this.atUs) {
      this.debt = owedAt(this.debt, this.atUs, old, nowUs);
      this.atUs = nowUs;
    }
    // A key whose instant is ahead of now is blocked (operations.ts): it
    // stays blocked, owing the new rule's whole burst.
    this.debt = this.atUs > nowUs ? rule.toleranceUnits : carry(this.debt, old, rule);
    const oldShadow = old.shadow, shadow = rule.shadow, s = this.shadow;
    if (s === undefined) return;
    if (shadow === undefined || oldShadow === undefined) {
      s.debt = 0; // a new shadow starts full; the count of its denials stays
      return;
    }
    if (nowUs > s.atUs) {
      s.debt = owedAt(s.debt, s.atUs, oldShadow, nowUs);
      s.atUs = nowUs;
    }
    s.debt = carry(s.debt, oldShadow, shadow);
  }

  /**
   * Whether the slot is as good as a fresh one at `nowUs` and can be
   * forgotten: replenished, or, while fresh slots start lean, down to the
   * one request a fresh slot would have. A hot key never is: the allocator
   * holds it until it cools down.
   */
  replenished(nowUs: number, lean = false): boolean {
    if (this.hot !== undefined) return false;
    if (
      this.debt !== 0 &&
      owedAt(this.debt, this.atUs, this.rule, nowUs) > (lean ? this.leanDebt() : 0)
    ) {
      return false;
    }
    const shadow = this.rule.shadow, s = this.shadow;
    return s === undefined || shadow === undefined || owedAt(s.debt, s.atUs, shadow, nowUs) === 0;
  }

  /**
   * Ends a lean start: a key never denied since is given back the part of
   * its burst it started without, and is then where it would be had it
   * started with all of it; a denied one has met the cap, where both starts
   * end alike, and keeps its debt.
   */
  endLean(nowUs: number): void {
    this.lean = false;
    if (this.denied !== 0) return;
    const owed = owedAt(this.debt, this.atUs, this.rule, nowUs);
    this.debt = owed > this.leanDebt() ? owed - this.leanDebt() : 0;
    if (nowUs > this.atUs) this.atUs = nowUs;
  }

  /**
   * Moves the instant of the key's next admission by `requests` of its
   * rule's interval (later if positive, earlier if negative), as far as its
   * bucket allows: no debt past the burst, and never down to none, which
   * would read as a bucket refilled. A blocked key is left as it is.
   *
   * @returns The part of `requests` applied.
   */
  shift(requests: number, nowUs: number): number {
    if (this.atUs > nowUs) return 0;
    const rule = this.rule;
    const owed = owedAt(this.debt, this.atUs, rule, nowUs);
    const wanted = Math.round(requests * rule.unitsPerRequest);
    const units = Math.max(Math.min(wanted, rule.toleranceUnits - owed), Math.min(0, 1 - owed));
    this.debt = owed + units;
    if (nowUs > this.atUs) this.atUs = nowUs;
    return units / rule.unitsPerRequest;
  }

  /** What the key owes at `nowUs`, in its rule's units: 0 for a bucket that has refilled. */
  owed(nowUs: number): number {
    return owedAt(this.debt, this.atUs, this.rule, nowUs);
  }

  /** What starting lean costs, in the rule's units: the burst less one request. */
  leanDebt(): number {
    return this.rule.toleranceUnits - this.rule.unitsPerRequest;
  }
}

/** A debt under `from` as the same number of requests under `to`, rounded up, at most its burst. */
function carry(debt: number, from: Rate, to: Rate): number {
  if (debt === 0 || from.unitsPerRequest === to.unitsPerRequest) {
    return Math.min(debt, to.toleranceUnits);
  }
  return Math.min(Math.ceil((debt / from.unitsPerRequest) * to.unitsPerRequest), to.toleranceUnits);
}

/** How many slots one insertion into a full table examines at most. */
const SWEEP_BUDGET = 32;

/** Per-key slots, bounded; see the module doc. */
export class KeyTable {
  readonly #capacity: number;
  readonly #default = new Map<string, Slot>();
  readonly #byClass = new Map<string, Map<string, Slot>>([["", this.#default]]);
  #size = 0;
  /** Fresh slots start lean: a slot down to its last request of burst is as good as fresh. */
  lean = false;
  #classCursor: Iterator<[string, Map<string, Slot>]> | undefined;
  #keyCursor: Iterator<[string, Slot]> | undefined;
  #cursorMap: Map<string, Slot> | undefined;
  #cursorClass = "";

  readonly #onEvict: ((slot: Slot) => void) | undefined;

  /** A table with room for `capacity` keys; `onEvict` hears of every slot it frees. */
  constructor(capacity: number, onEvict?: (slot: Slot) => void) {
    this.#capacity = capacity;
    this.#onEvict = onEvict;
  }

  /** Keys holding state now. */
  get size(): number {
    return this.#size;
  }

  /** The number of keys the table holds at most. */
  get capacity(): number {
    return this.#capacity;
  }

  /** The slot of a key, if it has one. */
  get(className: string, key: string): Slot | undefined {
    return (className === "" ? this.#default : this.#byClass.get(className))?.get(key);
  }

  /**
   * Gives `slot` a place, freeing a replenished key's if the table is full.
   * Returns false when no place could be found: the key has no state of its
   * own and must use the overflow allowance.
   */
  insert(slot: Slot, nowUs: number): boolean {
    if (this.#size >= this.#capacity && !this.#sweep(nowUs)) return false;
    let map = slot.className === "" ? this.#default : this.#byClass.get(slot.className);
    if (!map) this.#byClass.set(slot.className, map = new Map());
    map.set(slot.key, slot);
    this.#size++;
    return true;
  }

  /**
   * Takes `slot` out of the table, telling no one: the caller moves it
   * elsewhere (a blocked key to the block set, `blocks.ts`).
   *
   * @returns Whether the slot was in the table.
   */
  delete(slot: Slot): boolean {
    const map = slot.className === "" ? this.#default : this.#byClass.get(slot.className);
    if (map?.get(slot.key) !== slot) return false;
    map.delete(slot.key);
    if (map.size === 0 && slot.className !== "") this.#byClass.delete(slot.className);
    this.#size--;
    return true;
  }

  /** Forgets every replenished key; returns how many were freed. */
  prune(nowUs: number): number {
    let freed = 0;
    for (const [className, map] of this.#byClass) {
      for (const [key, slot] of map) {
        if (slot.replenished(nowUs, this.lean)) {
          map.delete(key);
          this.#onEvict?.(slot);
          freed++;
        }
      }
      if (map.size === 0 && className !== "") this.#byClass.delete(className);
    }
    this.#size -= freed;
    return freed;
  }

  /** Every slot, for reports off the request path. */
  *slots(): IterableIterator<Slot> {
    for (const map of this.#byClass.values()) yield* map.values();
  }

  /**
   * Walks the table from where the last walk stopped, freeing the first
   * replenished slot it meets within a fixed budget. The cursors survive
   * between calls (Map iterators stay valid across inserts and deletes), so
   * the cost is amortised over the whole table rather than rescanning the
   * busy keys at its front every time.
   */
  #sweep(nowUs: number): boolean {
    for (let examined = 0; examined < SWEEP_BUDGET; examined++) {
      const next = this.#nextSlot();
      if (next === undefined) continue;
      if (next.replenished(nowUs, this.lean)) {
        this.#cursorMap!.delete(next.key);
        this.#onEvict?.(next);
        this.#size--;
        if (this.#cursorMap!.size === 0 && this.#cursorClass !== "") {
          this.#byClass.delete(this.#cursorClass);
        }
        return true;
      }
    }
    return false;
  }

  #nextSlot(): Slot | undefined {
    if (this.#keyCursor) {
      const r = this.#keyCursor.next();
      if (!r.done) return r.value[1];
    }
    this.#classCursor ??= this.#byClass.entries();
    let c = this.#classCursor.next();
    if (c.done) {
      this.#classCursor = this.#byClass.entries();
      c = this.#classCursor.next();
    }
    [this.#cursorClass, this.#cursorMap] = c.value!;
    this.#keyCursor = this.#cursorMap!.entries();
    return undefined;
  }
}
