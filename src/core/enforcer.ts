/**
 * Local enforcement: the request path. A check finds the key's slot (or
 * gives it one), brings its rule up to date if the book changed, runs the
 * shadow beside it, and decides by GCRA. It is synchronous and does no I/O;
 * the time is an argument, read on the caller's clock in milliseconds and
 * brought into the core's time base (whole microseconds since the
 * enforcer's origin, see `time.ts`) once per check.
 *
 * @module
 */

import { admitDebt, allowedDecision, Decision, deniedDecision, fullInMs, owedAt } from "./gcra.ts";
import { hashId, type HashKey, keyHash64 } from "./hash.ts";
import { hasCooled, KeyTable, ratesAt, Slot } from "./keytable.ts";
import { type LimitBook, type Rule, ruleOf } from "./rules.ts";
import { describe, MAX_COST } from "./limit.ts";
import { type BatchItem, GUARD_BOUNDS } from "./options.ts";
import { toUs, usToMs } from "./time.ts";

export type { BatchItem } from "./options.ts";

/** A decision with what the key's shadow limit would have decided. */
export interface Traced {
  /** What the real limit decided. */
  readonly decision: Decision;
  /** What the shadow would have decided; undefined when the key has no shadow. */
  readonly shadow: Decision | undefined;
}

/** The outcome of an all-or-nothing batch. */
export interface BatchDecision extends Decision {
  /** One decision per item, in order; all allowed, or none consumed. */
  readonly decisions: readonly Decision[];
}

/** Counters of what this instance decided, since it started. */
export interface EnforcerCounters {
  /** Checks admitted. */
  admitted: number;
  /** Checks denied (in a dry run: that would have been denied). */
  denied: number;
  /** Checks of keys with no place in the table, decided by the overflow allowance. */
  overflowed: number;
  /** Checks in a class this instance does not know. */
  unknownClass: number;
  /** Checks the shadow limit would have denied. */
  shadowDenied: number;
}

/** How an {@link Enforcer} is bounded, and whether it serves a fleet. */
export interface EnforcerOptions {
  /** Keys holding state at most: twice the guard's `trackedKeys`. */
  readonly capacity: number;
  /** The overflow allowance's fraction of the strictest rate (the guard's: `COLD_FRACTION`). */
  readonly overflowScale: number;
  /**
   * In a fleet: the key of the 64-bit key hashes (the salt's, or `PUBLIC_HASH_KEY`).
   *
   * @default {none: a standalone enforcer, which hashes no key}
   */
  readonly fleet?: {
    /** The key of the 64-bit key hashes (the salt, or the public key). */
    readonly hashKey: HashKey;
  };
  /**
   * Denied keys remembered at most, for `mostDenied`.
   *
   * @default {4096}
   */
  readonly maxNoted?: number;
  /**
   * Where time counts from, ms on the caller's clock: the guard passes its
   * clock's reading when it is built.
   *
   * @default {0}
   */
  readonly originMs?: number;
}

/** Keys nearing their cold share queued at most between two ticks. */
const MAX_CANDIDATES = 256;

/**
 * A key owing more than this fraction of its burst is spending at about its rate: nearing its cold share, it is nominated to be
 * coordinated. Lower nominates keys sooner (more of the hot set spent on
 * keys that stay cold); 1 would wait until the burst is gone.
 */
const NOMINATE_FRACTION = 0.5;

/** Denied keys remembered for `mostDenied` at most, unless the options say otherwise. */
const MAX_NOTED = 4_096;

/**
 * A full noted set is swept for cooled keys at most this often: a flood of
 * distinct denied keys costs one scan of the set a second, not one a denial.
 * A key takes tens of seconds to cool, so a sweep a second misses none for long.
 */
const FORGET_EVERY_MS = 1_000;

// Relations the constants above must keep, checked when the module loads.
if (MAX_CANDIDATES < GUARD_BOUNDS.hotKeys.max) {
  throw new Error("enforcer: a tick's candidates must be able to fill the largest hot set");
}
if (!(NOMINATE_FRACTION > 0 && NOMINATE_FRACTION < 1)) {
  throw new Error("enforcer: NOMINATE_FRACTION must be in (0, 1)");
}

/** The request path over a {@link LimitBook} and a bounded {@link KeyTable}. */
export class Enforcer {
  /** Admit everything, counting what would have been denied. */
  dryRun = false;
  // Counters as plain fields: one increment on the request path, no
  // indirection through an object.
  #admitted = 0;
  #denied = 0;
  #overflowed = 0;
  #unknownClass = 0;
  #shadowDenied = 0;
  readonly #book: LimitBook;
  readonly #table: KeyTable;
  readonly #overflow: Slot;
  readonly #overflowScale: number;
  readonly #fleet: EnforcerOptions["fleet"];
  readonly #byHash = new Map<number, Slot>();
  #candidates: Slot[] = [];
  readonly #noted = new Set<Slot>();
  readonly #maxNoted: number;
  #forgotMs = -Infinity;
  readonly #originMs: number;

  /**
   * An enforcer over `book`, keeping state for at most `capacity` keys. Keys
   * beyond that share one allowance at `overflowScale` times the strictest
   * class's rate (or at the book's scale, if lower). With `fleet`, keys are
   * hashed when they take a place, and keys nearing their share are queued
   * for the allocator. Time counts from `originMs` on the caller's clock
   * (0 when left out); the guard takes its clock's reading when it is built.
   *
   * @param book The limits.
   * @param options The bounds, the fleet's key hashing, and the time origin.
   */
  constructor(
    book: LimitBook,
    options: EnforcerOptions,
  ) {
    this.#originMs = options.originMs ?? 0;
    this.#book = book;
    this.#fleet = options.fleet;
    // An evicted slot leaves every index of slots: a key that comes back
    // gets a new slot, which must not sit beside its old one.
    this.#table = new KeyTable(options.capacity, (slot) => {
      this.#noted.delete(slot);
      if (slot.hash !== undefined) this.#byHash.delete(hashId(slot.hash));
    });
    this.#overflowScale = options.overflowScale;
    this.#maxNoted = options.maxNoted ?? MAX_NOTED;
    this.#overflow = new Slot("", "", this.#overflowRule(), book.epoch);
    this.#overflow.candidate = true; // never nominated: it is no one key
  }

  /** Whether new keys start with one request of their burst rather than all of it. */
  get startLean(): boolean {
    return this.#table.lean;
  }

  /**
   * Starts new keys lean, or stops: on while a node is held (joining,
   * learning), so that a node that has just started or restarted adds no
   * fresh bursts to what the fleet admits. While on, a key down to the one
   * request a fresh key would get frees its place like a replenished one, so
   * that new keys keep finding room. Turned off, keys made lean and never
   * denied since are given back the part of the burst they started without:
   * they are then where they would be had they started with all of it (a
   * denied one has met the cap, where both starts end alike), and free their
   * places as keys made after the hold do. Call it after the book's scale
   * is set for the time from `nowMs`.
   *
   * @param on Whether new keys start lean.
   * @param nowMs The time, ms.
   */
  setStartLean(on: boolean, nowMs: number): void {
    if (this.#table.lean === on) return;
    this.#table.lean = on;
    if (on) return;
    const book = this.#book;
    const nowUs = toUs(nowMs, this.#originMs);
    for (const slot of this.#table.slots()) {
      if (!slot.lean) continue;
      slot.lean = false;
      if (slot.denied === 0) {
        const owed = owedAt(slot.debt, slot.atUs, slot.rule, nowUs);
        slot.debt = owed > slot.leanDebt() ? owed - slot.leanDebt() : 0;
        if (nowUs > slot.atUs) slot.atUs = nowUs;
      }
      // At the rate it runs at from now, so that it frees its place as soon
      // as a key made now would (a rule is otherwise refreshed on a check).
      if (slot.epoch !== book.epoch && slot.hot === undefined) {
        slot.setRule(book.resolve(slot.className, slot.key), nowUs);
        slot.epoch = book.epoch;
      }
    }
  }

  /**
   * The slot of the key with this hash (its {@link hashId}), in a fleet.
   *
   * @internal For the allocator.
   */
  slotByHash(id: number): Slot | undefined {
    return this.#byHash.get(id);
  }

  /**
   * Keys that neared their cold share since the last call, each once.
   *
   * @internal For the allocator.
   */
  takeCandidates(): Slot[] {
    const taken = this.#candidates;
    this.#candidates = [];
    for (const slot of taken) slot.candidate = false;
    return taken;
  }

  /** What was decided so far: a snapshot. */
  get counters(): EnforcerCounters {
    return {
      admitted: this.#admitted,
      denied: this.#denied,
      overflowed: this.#overflowed,
      unknownClass: this.#unknownClass,
      shadowDenied: this.#shadowDenied,
    };
  }

  /**
   * The key table, for reports off the request path.
   *
   * @internal For the allocator and the stats.
   */
  get table(): KeyTable {
    return this.#table;
  }

  /**
   * Checks one request of `cost` for a key of a class at `nowMs`.
   *
   * @param className The key's class (`""`: the default class).
   * @param key The key, a non-empty string.
   * @param cost What the request costs, a whole number ≥ 1.
   * @param nowMs The time, ms.
   * @returns The decision.
   * @throws {TypeError} when `key` is not a non-empty string or the class not a string.
   * @throws {RangeError} when `cost` is out of range.
   */
  check(className: string, key: string, cost: number, nowMs: number): Decision {
    if (cost !== 1) checkCost(cost);
    const nowUs = toUs(nowMs, this.#originMs);
    return this.#decide(this.#slotFor(className, key, nowMs, nowUs), cost, nowUs);
  }

  /**
   * As {@link check}, also returning the shadow's decision.
   *
   * @param className The key's class.
   * @param key The key.
   * @param cost What the request costs.
   * @param nowMs The time, ms.
   * @returns The decision and the shadow's.
   * @throws {TypeError} as {@link Enforcer.check}.
   * @throws {RangeError} as {@link Enforcer.check}.
   */
  checkTraced(className: string, key: string, cost: number, nowMs: number): Traced {
    if (cost !== 1) checkCost(cost);
    const nowUs = toUs(nowMs, this.#originMs);
    const slot = this.#slotFor(className, key, nowMs, nowUs);
    this.#refresh(slot, nowUs);
    const shadow = slot.rule.shadow;
    const debt = slot.shadow?.debt ?? 0, atUs = slot.shadow?.atUs ?? nowUs;
    const decision = this.#decide(slot, cost, nowUs);
    if (shadow === undefined) return { decision, shadow: undefined };
    // An admission moves the debt or its instant; a denial leaves both.
    const s = slot.shadow;
    return {
      decision,
      shadow: s !== undefined && (s.debt !== debt || s.atUs !== atUs)
        ? allowedDecision(s.debt, s.atUs, shadow, nowUs)
        : deniedDecision(debt, atUs, shadow, cost, nowUs),
    };
  }

  /**
   * What a check of cost 1 would decide now; consumes and counts nothing.
   *
   * @param className The key's class.
   * @param key The key.
   * @param nowMs The time, ms.
   * @returns The decision a check of cost 1 would get.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  peek(className: string, key: string, nowMs: number): Decision {
    this.#book.checkKey(className, key, "peek");
    const nowUs = toUs(nowMs, this.#originMs);
    const slot = this.#table.get(className, key);
    const rule = this.#ruleOf(slot, className, key);
    const debt = slot ? slot.debt : 0;
    const atUs = slot ? slot.atUs : nowUs;
    const next = admitDebt(debt, atUs, rule, 1, nowUs);
    if (next === next) return allowedDecision(next, Math.max(atUs, nowUs), rule, nowUs);
    return this.dryRun
      ? new Decision(true, 0, 0, fullInMs(debt, atUs, rule, nowUs))
      : deniedDecision(debt, atUs, rule, 1, nowUs);
  }

  /**
   * Checks several keys at once, all or nothing: if any is denied, none
   * consumes anything. The same (class, key) twice is a caller error.
   *
   * @param items The checks.
   * @param nowMs The time, ms.
   * @returns The batch's decision.
   * @throws {TypeError} when an item is malformed or appears twice.
   * @throws {RangeError} when a cost is out of range.
   */
  checkAll(items: readonly BatchItem[], nowMs: number): BatchDecision {
    const nowUs = toUs(nowMs, this.#originMs);
    const slots = this.#batchSlots(items, nowMs, nowUs);
    // Two keys of a batch may share the overflow slot: track each slot's
    // debt as the batch would leave it, as of the later of its instant and now.
    const pending = new Map<Slot, number>();
    const next: number[] = [];
    let allAllowed = true;
    const at = (slot: Slot) => Math.max(slot.atUs, nowUs);
    for (let i = 0; i < items.length; i++) {
      const slot = slots[i];
      const cost = items[i].cost ?? 1;
      this.#runShadow(slot, cost, nowUs);
      const owed = pending.get(slot);
      const debt = owed === undefined
        ? admitDebt(slot.debt, slot.atUs, slot.rule, cost, nowUs)
        : admitDebt(owed, at(slot), slot.rule, cost, nowUs);
      next.push(debt);
      if (debt === debt) pending.set(slot, debt);
      else allAllowed = false;
    }
    const decisions = slots.map((slot, i) => {
      const debt = next[i];
      if (debt === debt) return allowedDecision(debt, at(slot), slot.rule, nowUs);
      const owed = pending.get(slot);
      return owed === undefined
        ? deniedDecision(slot.debt, slot.atUs, slot.rule, items[i].cost ?? 1, nowUs)
        : deniedDecision(owed, at(slot), slot.rule, items[i].cost ?? 1, nowUs);
    });
    if (allAllowed) {
      for (const [slot, debt] of pending) {
        slot.debt = debt;
        slot.atUs = at(slot);
      }
      this.#admitted += items.length;
    } else {
      this.#denied += items.length;
    }
    const allowed = allAllowed || this.dryRun;
    return {
      allowed,
      retryAfterMs: allowed ? 0 : Math.max(...decisions.map((d) => d.retryAfterMs)),
      remaining: Math.min(...decisions.map((d) => d.remaining)),
      resetMs: Math.max(...decisions.map((d) => d.resetMs)),
      decisions: allowed && !allAllowed ? decisions.map(dryRunAllowed) : decisions,
    };
  }

  /**
   * The rate, per second, a key of a class is admitted at now: its share, before the burst.
   *
   * @param className The key's class.
   * @param key The key.
   * @returns Requests a second.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  currentRate(className: string, key: string): number {
    this.#book.checkKey(className, key, "share");
    return this.#ruleOf(this.#table.get(className, key), className, key).perSec;
  }

  /**
   * Forgets replenished keys; returns how many were freed.
   *
   * @param nowMs The time, ms.
   * @returns Slots freed.
   */
  prune(nowMs: number): number {
    return this.#table.prune(toUs(nowMs, this.#originMs));
  }

  /**
   * Moves a key's slot to `rule` (a hot key's new share), keeping its debt in requests.
   *
   * @internal For the allocator.
   */
  setSlotRule(slot: Slot, rule: Rule, nowMs: number): void {
    slot.setRule(rule, toUs(nowMs, this.#originMs));
  }

  /**
   * A key's slot, with its rule current, and the time in the core's base,
   * for the operations off the request path (refund, reset, block, see
   * `operations.ts`); with `create`, a key with no state is given a slot.
   * Undefined when the key has no slot of its own: none, or the shared
   * overflow allowance, which no one key may change.
   *
   * @internal For the operations.
   */
  slotAt(
    className: string,
    key: string,
    nowMs: number,
    create: boolean,
  ): { slot: Slot; nowUs: number } | undefined {
    this.#book.checkKey(className, key, "the operation");
    const nowUs = toUs(nowMs, this.#originMs);
    const slot = create
      ? this.#slotFor(className, key, nowMs, nowUs)
      : this.#table.get(className, key);
    if (slot === undefined || slot === this.#overflow) return undefined;
    if (slot.epoch !== this.#book.epoch) {
      slot.setRule(this.#ruleOf(slot, className, key), nowUs);
      slot.epoch = this.#book.epoch;
    }
    return { slot, nowUs };
  }

  #decide(slot: Slot, cost: number, nowUs: number): Decision {
    this.#refresh(slot, nowUs);
    const rule = slot.rule;
    slot.requests += cost;
    if (rule.shadow !== undefined) this.#runShadow(slot, cost, nowUs);
    const next = admitDebt(slot.debt, slot.atUs, rule, cost, nowUs);
    if (next === next) { // not NaN: admitted
      slot.debt = next;
      if (nowUs > slot.atUs) slot.atUs = nowUs;
      this.#admitted++;
      // A key owing more than NOMINATE_FRACTION of its burst is spending at
      // about its rate: nearing its cold share, it asks to be coordinated.
      if (!slot.candidate && next > NOMINATE_FRACTION * rule.toleranceUnits) this.#nominate(slot);
      return allowedDecision(next, slot.atUs, rule, nowUs);
    }
    this.#denied++;
    slot.denied += cost;
    this.#note(slot, nowUs);
    if (!slot.candidate) this.#nominate(slot);
    if (this.dryRun) return new Decision(true, 0, 0, fullInMs(slot.debt, slot.atUs, rule, nowUs));
    return deniedDecision(slot.debt, slot.atUs, rule, cost, nowUs);
  }

  /**
   * Remembers a key that was denied (or shadow-denied), for mostDenied: a
   * bounded set, so a flood of distinct denied keys costs a fixed amount.
   * The set is full only on the deny path, so that is where cooled keys are
   * forgotten to make room: reads (the stats) leave the set as it is, and a
   * standalone guard, which has no tick, still notes new keys.
   */
  #note(slot: Slot, nowUs: number): void {
    if (slot === this.#overflow || this.#noted.has(slot)) return;
    if (this.#noted.size >= this.#maxNoted) this.#forgetCooled(this.#originMs + usToMs(nowUs));
    if (this.#noted.size < this.#maxNoted) this.#noted.add(slot);
  }

  #forgetCooled(nowMs: number): void {
    if (nowMs - this.#forgotMs < FORGET_EVERY_MS) return;
    this.#forgotMs = nowMs;
    for (const slot of this.#noted) {
      if (hasCooled(ratesAt(slot, nowMs))) this.#noted.delete(slot);
    }
  }

  /**
   * Keys denied lately, some perhaps since cooled: readers skip those, and
   * leave the set alone.
   *
   * @internal For the stats.
   */
  get noted(): ReadonlySet<Slot> {
    return this.#noted;
  }

  #nominate(slot: Slot): void {
    if (slot.hot !== undefined || this.#candidates.length >= MAX_CANDIDATES) return;
    slot.candidate = true;
    this.#candidates.push(slot);
  }

  #runShadow(slot: Slot, cost: number, nowUs: number): void {
    const shadow = slot.rule.shadow;
    if (shadow === undefined) return;
    const s = slot.shadow ??= { debt: 0, atUs: nowUs, denied: 0 };
    const next = admitDebt(s.debt, s.atUs, shadow, cost, nowUs);
    if (next === next) {
      s.debt = next;
      if (nowUs > s.atUs) s.atUs = nowUs;
    } else {
      this.#shadowDenied++;
      s.denied += cost;
      this.#note(slot, nowUs);
    }
  }

  /**
   * The rule a key runs under now: the one lookup of the request path and
   * of every reader (peek, share, keyStats), so that what they report is
   * what the next check applies. A slot's rule is current while its epoch
   * is the book's; after a change, a hot key keeps its share (the
   * allocator's rule), any other key takes the book's.
   */
  #ruleOf(slot: Slot | undefined, className: string, key: string): Rule {
    if (slot === undefined) return this.#book.resolve(className, key);
    if (slot.epoch === this.#book.epoch) return slot.rule;
    if (slot === this.#overflow) return this.#overflowRule();
    return slot.hot?.rule ?? this.#book.resolve(className, key);
  }

  #refresh(slot: Slot, nowUs: number): void {
    if (slot.epoch !== this.#book.epoch) {
      slot.setRule(this.#ruleOf(slot, slot.className, slot.key), nowUs);
      slot.epoch = this.#book.epoch;
    }
    if (slot.rule.unknownClass) this.#unknownClass++;
  }

  #slotFor(className: string, key: string, nowMs: number, nowUs: number): Slot {
    const found = this.#table.get(className, key);
    if (found !== undefined) return found;
    this.#book.checkKey(className, key, "check");
    const book = this.#book;
    const slot = new Slot(className, key, book.resolve(className, key), book.epoch);
    slot.bornMs = nowMs;
    if (this.#table.lean) {
      slot.lean = true;
      slot.debt = slot.leanDebt();
      slot.atUs = nowUs;
    }
    if (this.#table.insert(slot, nowUs)) {
      if (this.#fleet) {
        slot.hash = keyHash64(this.#fleet.hashKey, className, key);
        this.#byHash.set(hashId(slot.hash), slot);
      } else {
        slot.candidate = true; // no allocator to nominate it to: skip the test per check
      }
      return slot;
    }
    this.#overflowed++;
    if (!book.hasClass(className)) this.#unknownClass++;
    return this.#overflow;
  }

  #batchSlots(items: readonly BatchItem[], nowMs: number, nowUs: number): Slot[] {
    if (!Array.isArray(items) || items.length === 0) {
      throw new TypeError(
        `checkAll: expected a non-empty array of { key, class?, cost? }, got ${describe(items)}`,
      );
    }
    const seen = new Set<string>();
    for (const item of items) {
      if (item === null || typeof item !== "object") {
        throw new TypeError(
          `checkAll: each item must be { key, class?, cost? }, got ${describe(item)}`,
        );
      }
      const className = item.class ?? "";
      this.#book.checkKey(className, item.key, "checkAll");
      if (item.cost !== undefined) checkCost(item.cost);
      const id = `${className.length}:${className}${item.key}`;
      if (seen.has(id)) {
        throw new TypeError(
          `checkAll: the key ${JSON.stringify(item.key)} of class ${
            JSON.stringify(className)
          } appears twice`,
        );
      }
      seen.add(id);
    }
    return items.map((item) => {
      const slot = this.#slotFor(item.class ?? "", item.key, nowMs, nowUs);
      this.#refresh(slot, nowUs);
      return slot;
    });
  }

  #overflowRule(): Rule {
    return ruleOf(
      this.#book.strictestLimit(),
      undefined,
      false,
      Math.min(this.#overflowScale, this.#book.scale),
    );
  }
}

function checkCost(cost: number): void {
  if (typeof cost !== "number" || !Number.isInteger(cost) || cost < 1 || cost > MAX_COST) {
    throw new RangeError(
      `cost must be a whole number from 1 to ${MAX_COST}, got ${describe(cost)}`,
    );
  }
}

function dryRunAllowed(d: Decision): Decision {
  return d.allowed ? d : new Decision(true, 0, 0, d.resetMs);
}
