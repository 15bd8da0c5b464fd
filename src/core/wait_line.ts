/**
 * One key's line of callers waiting to be admitted (`acquire`). Callers
 * are served in the order they came; only the head of the line is checked,
 * and only once it fits, so that each admission is one check and a wait
 * counts as one request however long it lasts. A wait that cannot end
 * within its deadline is counted once as a denied request and answered.
 *
 * Each place keeps when it would be admitted, reckoned behind those ahead
 * of it. When the head is found later than that (the line's own timer
 * fired late, other checks took the key's room), everyone behind it is
 * later by as much, while the key's rule is the same: the line adds the
 * slips up and reckons every place again only once they could have cost
 * someone their deadline, or when the rule changed (a new share), so that
 * a long line costs one reckoning now and then, not one per admission.
 *
 * Sans-I/O like the rest of the core: the time is an argument, the line
 * says when it next needs the time ({@link WaitLine.pollTimeout}), and the
 * runtime (or the simulator) keeps one timer per line for it. Everything
 * else a caller sees (promises, signals, how many wait in all) is the
 * runtime's.
 *
 * @module
 */

import type { Decision } from "./decision.ts";

/** A key's waits as of one instant (`Enforcer.forecast`). */
export interface Forecast {
  /**
   * How long, ms, a request of `cost` behind requests costing `aheadCost`
   * in all would wait: 0 when it fits now, `Infinity` when it never can.
   */
  waitMs(cost: number, aheadCost: number): number;
  /** What the waits are reckoned on (the key's rule): the same object while it holds. */
  readonly basis: object;
}

/** What a line asks of the limiter about its key: the enforcer's, bound to a class and key. */
export interface LineGate {
  /** The key's waits as of `nowMs`, from one look at it; counts nothing. */
  forecast(nowMs: number): Forecast;
  /** The check that admits the head of the line: counted, as any check. */
  check(cost: number, nowMs: number): Decision;
  /** Counts a wait that ended without its admission as one denied request (`Enforcer.giveUp`). */
  giveUp(cost: number, aheadCost: number, nowMs: number): Decision;
}

/** A caller in line. */
export interface Waiter {
  /** What its request costs. */
  readonly cost: number;
  /** When it stops waiting, ms on the line's clock. */
  readonly deadlineMs: number;
  /** Told once what ended the wait; called after the line is in order again, so it may join. */
  readonly settle: (decision: Decision) => void;
}

interface Place {
  readonly waiter: Waiter;
  /** When it would be admitted, as last reckoned (plus the line's slips since, for all but the head). */
  readyAtMs: number;
}

/** Places served before the array is compacted. */
const COMPACT_AFTER = 1_024;

/**
 * The callers waiting on one key, in arrival order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Enforcer } from "./enforcer.ts";
 * import { Limit } from "./limit.ts";
 * import { LimitBook } from "./rules.ts";
 * import { WaitLine } from "./wait_line.ts";
 *
 * const book = new LimitBook(Limit.perSecond(10).burst(1), { maxClasses: 1, maxKeyLimits: 1 });
 * const enforcer = new Enforcer(book, { capacity: 16, overflowScale: 0.5 });
 * const line = new WaitLine(enforcer.lineGate("", "k"));
 * assert(line.join({ cost: 1, deadlineMs: 0, settle() {} }, 0)?.allowed);
 * let admitted = false;
 * line.join({ cost: 1, deadlineMs: 1_000, settle: (d) => admitted = d.allowed }, 0);
 * assert.equal(line.pollTimeout(), 100);
 * line.handleTimeout(100);
 * assert(admitted);
 * ```
 */
export class WaitLine {
  readonly #gate: LineGate;
  #places: Place[] = [];
  #head = 0;
  /** What the places from the head on cost, together. */
  #queuedCost = 0;
  /** The rule the places were reckoned on; undefined to reckon them at the next timeout. */
  #basis: object | undefined;
  /** How much later than reckoned everyone behind the head is: the head's slips since. */
  #slipMs = 0;
  /** The least time to spare, deadline less reckoned time, of any place since reckoned. */
  #spareMs = Infinity;
  /** Since when someone who left makes the line due again; NaN when no one did. */
  #leftAtMs = NaN;

  /**
   * An empty line.
   *
   * @param gate The limiter, bound to the line's key.
   */
  constructor(gate: LineGate) {
    this.#gate = gate;
  }

  /** Callers in line. */
  get size(): number {
    return this.#places.length - this.#head;
  }

  /**
   * A caller arrives. With no one ahead and room now, it is checked and
   * answered at once; when it could not be admitted by its deadline, even
   * if all went well, it is counted as denied and answered at once;
   * otherwise it takes its place, and is answered through `settle`.
   *
   * @param waiter The caller.
   * @param nowMs The time, ms.
   * @returns Its decision when answered at once; undefined when it waits.
   */
  join(waiter: Waiter, nowMs: number): Decision | undefined {
    const forecast = this.#gate.forecast(nowMs);
    const waitMs = forecast.waitMs(waiter.cost, this.#queuedCost);
    if (waitMs === 0 && this.size === 0) return this.#gate.check(waiter.cost, nowMs);
    if (waitMs > waiter.deadlineMs - nowMs) {
      return this.#gate.giveUp(waiter.cost, this.#queuedCost, nowMs);
    }
    if (this.size === 0) {
      this.#basis = forecast.basis;
      this.#slipMs = 0;
      this.#spareMs = Infinity;
    } else if (forecast.basis !== this.#basis) {
      this.#basis = undefined;
    }
    // Reckoned afresh, it stands as if it had slipped as much as the line has.
    this.#places.push({ waiter, readyAtMs: nowMs + waitMs - this.#slipMs });
    this.#queuedCost += waiter.cost;
    this.#spareMs = Math.min(this.#spareMs, waiter.deadlineMs - nowMs - waitMs);
    return undefined;
  }

  /**
   * A caller gives up its place (its signal aborted): counted as one denied
   * request, and not settled, since its caller already knows. Those behind
   * it move up at the next timeout, which is due now: many leaving at once
   * (a shutdown) cost one reckoning, not one each.
   *
   * @param waiter The caller.
   * @param nowMs The time, ms.
   * @returns Whether it was in line (false once it was settled).
   */
  leave(waiter: Waiter, nowMs: number): boolean {
    let at = this.#head;
    while (at < this.#places.length && this.#places[at].waiter !== waiter) at++;
    if (at === this.#places.length) return false;
    this.#places.splice(at, 1);
    this.#queuedCost -= waiter.cost;
    this.#gate.giveUp(waiter.cost, 0, nowMs);
    if (this.size === 0) this.#leftAtMs = NaN;
    else if (!(this.#leftAtMs <= nowMs)) this.#leftAtMs = nowMs;
    return true;
  }

  /**
   * When the line next needs {@link WaitLine.handleTimeout}: when its head
   * would fit, as last reckoned, or now when someone left. No later than
   * any caller's deadline.
   *
   * @returns The time, ms; undefined for an empty line.
   */
  pollTimeout(): number | undefined {
    if (this.size === 0) return undefined;
    const readyAtMs = this.#places[this.#head].readyAtMs + this.#slipMs;
    return this.#leftAtMs < readyAtMs ? this.#leftAtMs : readyAtMs;
  }

  /**
   * Admits the callers at the head that fit now, one check each. When the
   * head is later than reckoned by more than anyone can spare, when the
   * key's rule changed, or when someone left, reckons every place again,
   * and answers those that can no longer be admitted by their deadlines.
   * Harmless when nothing is due.
   *
   * @param nowMs The time, ms.
   */
  handleTimeout(nowMs: number): void {
    const done: [Waiter, Decision][] = [];
    let reckon = this.#leftAtMs === this.#leftAtMs; // not NaN: someone left
    while (this.size > 0) {
      const head = this.#places[this.#head];
      // Afresh each time round: the check before changed the key.
      const forecast = this.#gate.forecast(nowMs);
      const waitMs = forecast.waitMs(head.waiter.cost, 0);
      if (waitMs === 0) {
        this.#shift();
        // Admitted: the forecast said it fits, and nothing ran between.
        done.push([head.waiter, this.#gate.check(head.waiter.cost, nowMs)]);
        continue;
      }
      // Later than reckoned: so is everyone behind it, by as much.
      const slipMs = Math.max(0, nowMs + waitMs - (head.readyAtMs + this.#slipMs));
      if (!reckon && forecast.basis === this.#basis && this.#slipMs + slipMs <= this.#spareMs) {
        this.#slipMs += slipMs;
        head.readyAtMs = nowMs + waitMs - this.#slipMs;
        break;
      }
      reckon = false;
      const size = this.size;
      this.#reckon(nowMs, done);
      // No one was answered: the head stays, its time just reckoned.
      if (this.size === size) break;
    }
    if (this.size === 0) this.#leftAtMs = NaN;
    for (const [waiter, decision] of done) waiter.settle(decision);
  }

  /** Every place's time afresh, behind those before it; those past their deadlines answered. */
  #reckon(nowMs: number, done: [Waiter, Decision][]): void {
    const places = this.#places;
    const forecast = this.#gate.forecast(nowMs);
    this.#leftAtMs = NaN;
    this.#basis = forecast.basis;
    this.#slipMs = 0;
    this.#spareMs = Infinity;
    let aheadCost = 0, kept = 0;
    for (let i = this.#head; i < places.length; i++) {
      const place = places[i];
      const { cost, deadlineMs } = place.waiter;
      const waitMs = forecast.waitMs(cost, aheadCost);
      if (waitMs > deadlineMs - nowMs) {
        done.push([place.waiter, this.#gate.giveUp(cost, aheadCost, nowMs)]);
        this.#queuedCost -= cost;
        continue;
      }
      place.readyAtMs = nowMs + waitMs;
      this.#spareMs = Math.min(this.#spareMs, deadlineMs - place.readyAtMs);
      aheadCost += cost;
      places[kept++] = place;
    }
    places.length = kept;
    this.#head = 0;
  }

  #shift(): void {
    this.#queuedCost -= this.#places[this.#head].waiter.cost;
    this.#head++;
    if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#places.length) {
      this.#places = this.#places.slice(this.#head);
      this.#head = 0;
    }
  }
}
