/**
 * Local enforcement: the request path. A check finds the key's slot (or
 * gives it one), brings its rule up to date if the book changed, runs the
 * shadow beside it, and decides by GCRA. What it learns on the way goes to
 * the parts that own it: a key nearing its cold share to the allocator's
 * {@link CandidateQueue}, a denied key to the {@link NotedKeys} the stats
 * read, a new key in a fleet to the {@link KeyHashIndex} peers' reports are
 * matched through. A blocked key lives in the {@link BlockSet}, out of the
 * table: a check of a key with no place looks there before it takes one.
 * It is synchronous and does no I/O;
 * the time is an argument, read on the caller's clock in milliseconds and
 * brought into the core's time base (whole microseconds since the
 * enforcer's origin, see `time.ts`) once per check.
 *
 * Why this file is over 400 lines: it is one class over one private state
 * (its counters, key table, block set and overflow allowance), and every
 * change of a slot's GCRA state starts in one of its methods: the checks,
 * `acquire`'s forecasts and give-ups, refund, reset and block. Split up,
 * the parts would reach that state through accessors again. What stands
 * alone is elsewhere: the GCRA in `gcra.ts`, the operations' arithmetic in
 * `operations.ts`, batches in `batch.ts`, the table in `keytable.ts`.
 *
 * @module
 */

import {
  admitDebt,
  allowedDecision,
  deniedDecision,
  fullInMs,
  owedAt,
  queuedDenial,
  queuedWaitMs,
} from "./gcra.ts";
import { Decision } from "./decision.ts";
import type { HashKey } from "./hash.ts";
import { KeyTable, Slot } from "./keytable.ts";
import { KeyHashIndex } from "./hash_index.ts";
import { NotedKeys } from "./noted.ts";
import { CandidateQueue, nearsColdShare } from "./allocation/candidates.ts";
import type { LimitBook } from "./rules.ts";
import { type Rule, ruleOf } from "./rule.ts";
import { type BatchDecision, checkBatch, checkCost, decideBatch } from "./batch.ts";
import { type BatchItem, GUARD_BOUNDS } from "./options.ts";
import { BlockSet } from "./blocks.ts";
import { toUs, US_PER_MS, usToMs } from "./time.ts";
import { blockSlot, checkBlockMs, checkRefundCost, refundSlot, resetSlot } from "./operations.ts";
import type { Forecast, LineGate } from "./wait_line.ts";

export type { BatchItem } from "./options.ts";
export type { BatchDecision } from "./batch.ts";
export { MAX_BLOCK_MS } from "./operations.ts";

/** A decision with what the key's shadow limit would have decided. */
export interface Traced {
  /** What the real limit decided. */
  readonly decision: Decision;
  /** What the shadow would have decided; undefined when the key has no shadow. */
  readonly shadow: Decision | undefined;
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
  /** Blocks ended early to make room for another in a full block set. */
  blocksEvicted: number;
}

/** What the enforcer decided and holds now: its counters, its keys, and whether it runs dry. */
export interface EnforcerStats extends EnforcerCounters {
  /** Keys holding state now. */
  readonly trackedKeys: number;
  /** Keys blocked now, at most `maxBlocks`. */
  readonly blockedKeys: number;
  /** Whether every check is admitted and would-be denials only counted. */
  readonly dryRun: boolean;
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
   * Keys blocked at once, in a set apart from the key table (`GuardOptions.maxBlocks`).
   *
   * @default {GUARD_BOUNDS.maxBlocks.default}
   */
  readonly maxBlocks?: number;
  /**
   * Where time counts from, ms on the caller's clock: the guard passes its
   * clock's reading when it is built.
   *
   * @default {0}
   */
  readonly originMs?: number;
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
  readonly #blocks: BlockSet;
  readonly #book: LimitBook;
  readonly #table: KeyTable;
  readonly #overflow: Slot;
  readonly #overflowScale: number;
  readonly #hashes: KeyHashIndex | undefined;
  readonly #candidates = new CandidateQueue();
  readonly #noted: NotedKeys;
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
    this.#hashes = options.fleet && new KeyHashIndex(options.fleet.hashKey);
    this.#noted = new NotedKeys({ max: options.maxNoted, originMs: this.#originMs });
    // An evicted slot leaves every index of slots: a key that comes back
    // gets a new slot, which must not sit beside its old one.
    const table = this.#table = new KeyTable(options.capacity, (slot) => {
      this.#noted.delete(slot);
      this.#hashes?.delete(slot);
    });
    this.#blocks = new BlockSet(options.maxBlocks ?? GUARD_BOUNDS.maxBlocks.default, {
      table,
      leftTable: (slot) => {
        this.#hashes?.delete(slot);
        slot.hash = undefined; // so that a nomination still queued cannot make it hot
      },
      place: (slot, nowUs) => this.#place(slot, nowUs),
      forget: (slot) => this.#noted.delete(slot),
    });
    this.#overflowScale = options.overflowScale;
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
      slot.endLean(nowUs);
      // At the rate it runs at from now, so that it frees its place as soon
      // as a key made now would (a rule is otherwise refreshed on a check).
      if (slot.epoch !== book.epoch && slot.hot === undefined) {
        slot.setRule(book.resolve(slot.className, slot.key), nowUs);
        slot.epoch = book.epoch;
      }
    }
  }

  /**
   * The keys of the table by hash, in a fleet; undefined for a standalone enforcer.
   *
   * @internal For the allocator.
   */
  get hashes(): KeyHashIndex | undefined {
    return this.#hashes;
  }

  /**
   * Keys that neared their cold share since the allocator last took them.
   *
   * @internal For the allocator.
   */
  get candidates(): CandidateQueue {
    return this.#candidates;
  }

  /**
   * Keys denied lately, some perhaps since cooled: readers skip those, and
   * leave the set alone.
   *
   * @internal For the stats.
   */
  get noted(): NotedKeys {
    return this.#noted;
  }

  /** What was decided so far: a snapshot. */
  get counters(): EnforcerCounters {
    return {
      admitted: this.#admitted,
      denied: this.#denied,
      overflowed: this.#overflowed,
      unknownClass: this.#unknownClass,
      shadowDenied: this.#shadowDenied,
      blocksEvicted: this.#blocks.evicted,
    };
  }

  /**
   * What was decided so far, with the keys held now: a snapshot.
   *
   * @param nowMs The time, ms: blocks ended by then are not counted.
   * @returns The counters, the keys tracked and blocked, and the dry run.
   */
  stats(nowMs: number): EnforcerStats {
    return {
      ...this.counters,
      trackedKeys: this.#table.size,
      blockedKeys: this.blockedKeys(nowMs),
      dryRun: this.dryRun,
    };
  }

  /** Keys blocked at once, at most. */
  get maxBlocks(): number {
    return this.#blocks.max;
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
    // The lookup written here rather than through #slotFor: one call fewer
    // for a key that has its place, which JavaScriptCore does not inline away.
    const slot = this.#table.get(className, key) ?? this.#newSlot(className, key, nowMs, nowUs);
    return this.#decide(slot, cost, nowUs);
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
    const slot = this.slotOf(className, key);
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
   * How long requests would wait in line for a key, as of now: the key
   * looked up once, for a line to reckon all its places by (see
   * {@link Forecast}). With nothing ahead, 0 exactly when a check would
   * admit the request. Consumes and counts nothing; a key with no state is
   * given the place a check would give it, since the line waits on that.
   *
   * @internal For `acquire`'s lines (`wait_line.ts`).
   */
  forecast(className: string, key: string, nowMs: number): Forecast {
    this.#book.checkKey(className, key, "acquire");
    if (this.dryRun) return { basis: this, waitMs: admitsAll };
    const nowUs = toUs(nowMs, this.#originMs);
    // A key with no place yet gets the one its check would (lean while the
    // table is, or the overflow allowance when full), counted by that check.
    const slot = this.#table.get(className, key) ??
      this.#newSlot(className, key, nowMs, nowUs, false);
    const rule = this.#ruleOf(slot, className, key);
    const debt = slot.debt, atUs = slot.atUs;
    const owed = owedAt(debt, atUs, rule, nowUs), fromUs = Math.max(atUs, nowUs);
    return {
      basis: rule,
      waitMs: (cost, aheadCost) => {
        if (cost !== 1) checkCost(cost);
        const next = admitDebt(debt, atUs, rule, cost, nowUs);
        if (aheadCost === 0 && next === next) return 0; // not NaN: admitted
        // Not now: never 0, or a line would wake to find its head still waiting.
        return Math.max(queuedWaitMs(owed, fromUs, rule, cost, aheadCost, nowUs), 0.001);
      },
    };
  }

  /**
   * One key of the enforcer, as a line of `acquire` callers sees it.
   *
   * @internal For `acquire`'s lines (`wait_line.ts`).
   */
  lineGate(className: string, key: string): LineGate {
    return {
      forecast: (nowMs) => this.forecast(className, key, nowMs),
      check: (cost, nowMs) => this.check(className, key, cost, nowMs),
      giveUp: (cost, aheadCost, nowMs) => this.giveUp(className, key, cost, aheadCost, nowMs),
    };
  }

  /**
   * Counts a wait in line that ended without its admission (it timed out or
   * was given up) as what it was, one request denied: once, however often
   * it was looked at while it waited. Decides nothing, consumes nothing,
   * and runs no shadow.
   *
   * @returns Its denial, the wait as {@link Enforcer.forecast} reckons it.
   * @internal For `acquire`'s lines (`wait_line.ts`).
   */
  giveUp(className: string, key: string, cost: number, aheadCost: number, nowMs: number): Decision {
    if (cost !== 1) checkCost(cost);
    const nowUs = toUs(nowMs, this.#originMs);
    const slot = this.#slotFor(className, key, nowMs, nowUs);
    this.#refresh(slot, nowUs);
    slot.requests += cost;
    this.#countDenied(slot, cost, nowUs);
    return queuedDenial(slot.debt, slot.atUs, slot.rule, cost, aheadCost, nowUs);
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
    checkBatch(items, this.#book);
    const nowUs = toUs(nowMs, this.#originMs);
    const costs = items.map((item) => item.cost ?? 1);
    const slots = items.map((item) => {
      const slot = this.#slotFor(item.class ?? "", item.key, nowMs, nowUs);
      this.#refresh(slot, nowUs);
      return slot;
    });
    // Every key has its place before any shadow runs; a shadow's debt is its own.
    for (let i = 0; i < slots.length; i++) this.#runShadow(slots[i], costs[i], nowUs);
    const batch = decideBatch(slots, costs, nowUs, this.dryRun);
    if (batch.allAllowed) {
      for (const [slot, debt] of batch.debts) {
        slot.debt = debt;
        if (nowUs > slot.atUs) slot.atUs = nowUs;
      }
      this.#admitted += items.length;
    } else {
      this.#denied += items.length;
    }
    return batch.decision;
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
    return this.#ruleOf(this.slotOf(className, key), className, key).perSec;
  }

  /**
   * Forgets replenished keys, and blocks that have ended and left nothing
   * owed; returns how many slots of the key table were freed.
   *
   * @param nowMs The time, ms.
   * @returns Slots freed.
   */
  prune(nowMs: number): number {
    const nowUs = toUs(nowMs, this.#originMs);
    this.#blocks.dropEnded(nowUs);
    return this.#table.prune(nowUs);
  }

  /**
   * Keys blocked now, at most {@link maxBlocks}; ended blocks that left
   * nothing owed are dropped on the way.
   *
   * @param nowMs The time, ms.
   * @returns How many keys are blocked.
   */
  blockedKeys(nowMs: number): number {
    return this.#blocks.blocked(toUs(nowMs, this.#originMs));
  }

  /**
   * A key's slot wherever it is: its place in the table, or the block set
   * (a blocked key, or one whose block ended and that has not been checked
   * since). Creates nothing.
   *
   * @internal For the readers (peek, share, keyStats).
   */
  slotOf(className: string, key: string): Slot | undefined {
    const slot = this.#table.get(className, key);
    if (slot !== undefined || this.#blocks.size === 0) return slot;
    return this.#blocks.get(className, key);
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
   * Moves a hot key's next admission by `requests` of its interval, as far
   * as its bucket allows ({@link Slot.shift}); returns the part applied.
   *
   * @internal For the allocator.
   */
  shiftSlot(slot: Slot, requests: number, nowMs: number): number {
    return slot.shift(requests, toUs(nowMs, this.#originMs));
  }

  /**
   * Whether a key's bucket has refilled: it owes nothing now.
   *
   * @internal For the allocator.
   */
  slotRefilled(slot: Slot, nowMs: number): boolean {
    return slot.owed(toUs(nowMs, this.#originMs)) === 0;
  }

  /**
   * Gives back `cost` requests a check of the key took, when the work it
   * admitted did not happen: the debt comes down by them, to nothing at
   * most. Does nothing to a key with no state here, to one in the shared
   * overflow allowance, or to a blocked one (`operations.ts`).
   *
   * @param className The key's class.
   * @param key The key.
   * @param cost Requests to give back, a whole number from 1 to `MAX_COST`.
   * @param nowMs The time, ms.
   * @returns Whether the key's state changed.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when `cost` is out of range.
   */
  refund(className: string, key: string, cost: number, nowMs: number): boolean {
    checkRefundCost(cost);
    const at = this.#slotAt(className, key, nowMs, false);
    return at !== undefined && refundSlot(at.slot, cost, at.nowUs);
  }

  /**
   * Forgets what the key owes, a block included: it stands as a new key
   * would (one request of its burst while new keys start lean, else all of it).
   *
   * @param className The key's class.
   * @param key The key.
   * @param nowMs The time, ms.
   * @returns Whether the key had state here.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  reset(className: string, key: string, nowMs: number): boolean {
    const at = this.#slotAt(className, key, nowMs, false);
    if (at === undefined) return false;
    resetSlot(at.slot, this.#table.lean, at.nowUs);
    this.#blocks.release(at.slot, at.nowUs);
    return true;
  }

  /**
   * Denies every check of the key for `ms`, after which its burst comes back
   * at its rate, as if it had just spent it. A block longer than one in force
   * replaces it; a shorter one leaves it. The block takes no place in the
   * key table; a full block set makes room by ending the block nearest its end.
   *
   * @param className The key's class.
   * @param key The key.
   * @param ms How long, above 0 and at most `MAX_BLOCK_MS` (a year).
   * @param nowMs The time, ms.
   * @returns Whether the key is blocked: always, since the block set makes room.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when `ms` is out of range.
   */
  block(className: string, key: string, ms: number, nowMs: number): boolean {
    checkBlockMs(ms);
    const at = this.#slotAt(className, key, nowMs, true);
    if (at === undefined) return false;
    const { slot, nowUs } = at;
    const untilUs = nowUs + Math.ceil(ms * US_PER_MS);
    if (untilUs > slot.atUs) {
      blockSlot(slot, untilUs);
      this.#blocks.hold(slot, nowUs);
    }
    return true;
  }

  /**
   * Blocks the key until `untilMs` exactly, a shorter block than the one in
   * force included, or lifts its block when `untilMs` is not ahead of now
   * (the burst then comes back at its rate, as when a block ends): how a
   * block the fleet agreed on is made so here, where the fleet's entry, not
   * the longest block seen, is what holds.
   *
   * @param className The key's class.
   * @param key The key.
   * @param untilMs The instant the block ends, on the `nowMs` clock.
   * @param nowMs The time, ms.
   * @returns Whether the key's state changed.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  blockUntil(className: string, key: string, untilMs: number, nowMs: number): boolean {
    const blocking = untilMs > nowMs;
    const at = this.#slotAt(className, key, nowMs, blocking);
    if (at === undefined) return false;
    const { slot, nowUs } = at;
    if (blocking) {
      blockSlot(slot, nowUs + Math.ceil((untilMs - nowMs) * US_PER_MS));
    } else {
      if (slot.atUs <= nowUs) return false;
      blockSlot(slot, nowUs);
    }
    this.#blocks.hold(slot, nowUs);
    return true;
  }

  /**
   * How long the key stays blocked.
   *
   * @param className The key's class.
   * @param key The key.
   * @param nowMs The time, ms.
   * @returns Milliseconds; 0 when it is not blocked.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  blockedForMs(className: string, key: string, nowMs: number): number {
    const at = this.#slotAt(className, key, nowMs, false);
    return at === undefined || at.slot.atUs <= at.nowUs ? 0 : usToMs(at.slot.atUs - at.nowUs);
  }

  /**
   * A key's slot, with its rule current, and the time in the core's base,
   * for the operations off the request path: its place in the table or its
   * block entry. With `create` (a block), a key with neither gets a slot of
   * its own outside the table, for the block set to hold. Undefined when
   * the key has no slot and `create` is off.
   */
  #slotAt(
    className: string,
    key: string,
    nowMs: number,
    create: boolean,
  ): { slot: Slot; nowUs: number } | undefined {
    this.#book.checkKey(className, key, "the operation");
    const nowUs = toUs(nowMs, this.#originMs);
    const slot = this.slotOf(className, key) ??
      (create ? this.#detached(className, key, nowMs) : undefined);
    if (slot === undefined) return undefined;
    if (slot.epoch !== this.#book.epoch) this.#refreshRule(slot, nowUs);
    return { slot, nowUs };
  }

  /**
   * The request path's decision. Only the allow path is written here; what
   * is rare (a changed book, a denial) is a call away, so that the function
   * stays small enough for the JITs to inline it and what it calls.
   */
  #decide(slot: Slot, cost: number, nowUs: number): Decision {
    if (slot.epoch !== this.#book.epoch) this.#refreshRule(slot, nowUs);
    const rule = slot.rule;
    if (rule.unknownClass) this.#unknownClass++;
    slot.requests += cost;
    if (rule.shadow !== undefined) this.#runShadow(slot, cost, nowUs);
    const next = admitDebt(slot.debt, slot.atUs, rule, cost, nowUs);
    if (next !== next) return this.#deny(slot, rule, cost, nowUs); // NaN: denied
    slot.debt = next;
    if (nowUs > slot.atUs) slot.atUs = nowUs;
    this.#admitted++;
    if (!slot.candidate && nearsColdShare(next, rule)) this.#candidates.nominate(slot);
    return allowedDecision(next, slot.atUs, rule, nowUs);
  }

  #deny(slot: Slot, rule: Rule, cost: number, nowUs: number): Decision {
    this.#countDenied(slot, cost, nowUs);
    if (this.dryRun) return new Decision(true, 0, 0, fullInMs(slot.debt, slot.atUs, rule, nowUs));
    return deniedDecision(slot.debt, slot.atUs, rule, cost, nowUs);
  }

  #countDenied(slot: Slot, cost: number, nowUs: number): void {
    this.#denied++;
    slot.denied += cost;
    if (slot !== this.#overflow) this.#noted.note(slot, nowUs);
    if (!slot.candidate) this.#candidates.nominate(slot);
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
      if (slot !== this.#overflow) this.#noted.note(slot, nowUs);
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
    if (slot.epoch !== this.#book.epoch) this.#refreshRule(slot, nowUs);
    if (slot.rule.unknownClass) this.#unknownClass++;
  }

  #refreshRule(slot: Slot, nowUs: number): void {
    slot.setRule(this.#ruleOf(slot, slot.className, slot.key), nowUs);
    slot.epoch = this.#book.epoch;
  }

  #slotFor(className: string, key: string, nowMs: number, nowUs: number): Slot {
    return this.#table.get(className, key) ?? this.#newSlot(className, key, nowMs, nowUs);
  }

  /**
   * A slot for a key with no place: its block entry's while it is blocked
   * (it takes no place), else a place in the table (for a key whose block
   * has ended, with the state the block left), else the overflow allowance,
   * counted as a check of it unless `counted` is false.
   */
  #newSlot(className: string, key: string, nowMs: number, nowUs: number, counted = true): Slot {
    const held = this.#blocks.size === 0 ? undefined : this.#blocks.take(className, key, nowUs);
    if (held !== undefined) {
      return held.atUs > nowUs ? held : this.#placeOrOverflow(held, nowUs, counted);
    }
    this.#book.checkKey(className, key, "check");
    const slot = this.#detached(className, key, nowMs);
    if (this.#table.lean) {
      slot.lean = true;
      slot.debt = slot.leanDebt();
      slot.atUs = nowUs;
    }
    return this.#placeOrOverflow(slot, nowUs, counted);
  }

  /** A fresh slot in no index: a full burst. */
  #detached(className: string, key: string, nowMs: number): Slot {
    const book = this.#book;
    const slot = new Slot(className, key, book.resolve(className, key), book.epoch);
    slot.bornMs = nowMs;
    return slot;
  }

  /** Gives `slot` a place in the table, or its key the overflow allowance (counted unless not `counted`). */
  #placeOrOverflow(slot: Slot, nowUs: number, counted = true): Slot {
    if (this.#place(slot, nowUs)) return slot;
    this.#noted.delete(slot);
    if (counted) {
      this.#overflowed++;
      if (!this.#book.hasClass(slot.className)) this.#unknownClass++;
    }
    return this.#overflow;
  }

  /** Gives `slot` a place in the table, if one is free; returns whether it has one. */
  #place(slot: Slot, nowUs: number): boolean {
    if (!this.#table.insert(slot, nowUs)) return false;
    if (this.#hashes !== undefined) {
      slot.candidate = false;
      this.#hashes.add(slot);
    } else {
      slot.candidate = true; // no allocator to nominate it to: skip the test per check
    }
    return true;
  }

  #overflowRule(): Rule {
    const strictest = this.#book.strictestLimit();
    return ruleOf(
      strictest,
      undefined,
      false,
      Math.min(this.#overflowScale, this.#book.scale),
      this.#book.sharesBurst(strictest),
    );
  }
}

/** The waits of a dry run: none, for any request a check would take. */
function admitsAll(cost: number): number {
  if (cost !== 1) checkCost(cost);
  return 0;
}
