/**
 * A limit: a count per period plus a burst, the bounds it must keep (the
 * largest count, period and burst, and the rate the time base can hold),
 * and its forms as text and JSON. The units and the grammar of the text
 * are in `limit_text.ts`; a key's limit that follows a class is a
 * `KeyLimit` (`key_limit.ts`).
 *
 * @module
 */

import { describe } from "./describe.ts";
import { DAY_MS, HOUR_MS, MINUTE_MS, periodText, readRate, SECOND_MS } from "./limit_text.ts";
import { US_PER_MS } from "./time.ts";

/**
 * The longest period a limit may have: 366 days, in milliseconds (a yearly
 * quota fits; a longer one is refused).
 */
export const MAX_PERIOD_MS: number = 366 * DAY_MS;

/** The largest burst a limit may have; a larger one is refused. */
export const MAX_BURST = 4_194_303;
/** The largest count a limit may have (an unsigned 32-bit integer). */
export const MAX_COUNT = 4_294_967_295;
/**
 * The largest cost one check may carry: the largest count, as a cost is a
 * number of requests too (and travels as the same u32 in a batch).
 */
export const MAX_COST: number = MAX_COUNT;

/**
 * Whether `cost` is a cost a check may carry: a whole number from 1 to {@link MAX_COST}.
 *
 * @param cost The value to test.
 * @returns Whether it is a valid cost.
 */
export function isCost(cost: unknown): cost is number {
  return typeof cost === "number" && Number.isInteger(cost) && cost >= 1 && cost <= MAX_COST;
}

/**
 * A rate limit: `count` requests per period, smoothed (GCRA, not a window
 * that resets), with a burst of requests that may be admitted back to back.
 *
 * A `Limit` keeps what it was given: `perMinute(60)` and `perSecond(1)`
 * admit the same but are different values, so a config read back prints
 * as it was written.
 *
 * The guard keeps time in whole microseconds, and a key's bucket refills
 * at most once a microsecond: a limit must not pay back more than its
 * burst in one, so at most `burst × 1,000,000` a second. The default burst
 * (a twentieth of the count) always holds; a faster limit with a burst too
 * small for it is a `RangeError` naming the bound, whichever way it is
 * built.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Limit } from "@rateguard/guard";
 *
 * const limit = Limit.perMinute(1_000).burst(10);
 * assert(limit.count() === 1_000);
 * assert(limit.periodMs() === 60_000);
 * assert(limit.burstSize() === 10);
 * assert(Limit.parse("1000/min").equals(Limit.perMinute(1_000)));
 * // Any period: 100 requests a quarter of an hour, 10,000 a day usable at once.
 * assert(Limit.per(100, 15 * 60_000).toString() === "100/15min");
 * assert(Limit.parse("10000/d").equals(Limit.per(10_000, 86_400_000)));
 * ```
 */
export class Limit {
  readonly #count: number;
  readonly #periodMs: number;
  readonly #burst: number | undefined;

  private constructor(count: number, periodMs: number, burst: number | undefined, what: string) {
    checkHoldable(count, periodMs, burst ?? defaultBurst(count), what);
    this.#count = count;
    this.#periodMs = periodMs;
    this.#burst = burst;
  }

  /**
   * `count` requests a second.
   *
   * @param count Requests a second, more than 0.
   * @returns The limit, with the default burst.
   * @throws {RangeError} when `count` is not a whole number a limit can hold, from 1 up.
   */
  static perSecond(count: number): Limit {
    return new Limit(checkCount(count, "Limit.perSecond"), SECOND_MS, undefined, "Limit.perSecond");
  }

  /**
   * `count` requests a minute (about count/60 a second, smoothed).
   *
   * @param count Requests a minute, more than 0.
   * @returns The limit, with the default burst.
   * @throws {RangeError} when `count` is not a whole number a limit can hold, from 1 up.
   */
  static perMinute(count: number): Limit {
    return new Limit(checkCount(count, "Limit.perMinute"), MINUTE_MS, undefined, "Limit.perMinute");
  }

  /**
   * `count` requests an hour (about count/3600 a second, smoothed).
   *
   * @param count Requests an hour, more than 0.
   * @returns The limit, with the default burst.
   * @throws {RangeError} when `count` is not a whole number a limit can hold, from 1 up.
   */
  static perHour(count: number): Limit {
    return new Limit(checkCount(count, "Limit.perHour"), HOUR_MS, undefined, "Limit.perHour");
  }

  /**
   * `count` requests every `periodMs` milliseconds, for a window the other
   * makers do not name: `Limit.per(100, 15 * 60_000)` is 100 a quarter of
   * an hour, `Limit.per(10_000, 86_400_000)` 10,000 a day. Smoothed like
   * every limit (one request every `periodMs / count`, plus the burst): a
   * quota usable all at once takes a burst of the whole count,
   * `Limit.per(10_000, 86_400_000).burst(10_000)`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Limit } from "@rateguard/guard";
   *
   * const daily = Limit.per(10_000, 24 * 60 * 60_000).burst(10_000);
   * assert.equal(String(daily), "10000/d burst 10000");
   * assert.deepEqual(daily.toJSON(), { limit: "10000/d", burst: 10_000 });
   * ```
   *
   * @param count Requests a period, more than 0.
   * @param periodMs The period in milliseconds, a whole number from 1 to 366 days.
   * @returns The limit, with the default burst.
   * @throws {RangeError} when `count` is not a whole number a limit can hold, from 1 up, or
   *   `periodMs` is not a whole number of milliseconds in that range.
   */
  static per(count: number, periodMs: number): Limit {
    const what = "Limit.per";
    return new Limit(checkCount(count, what), checkPeriod(periodMs, what), undefined, what);
  }

  /**
   * Reads `"1000"` (a second), `"1000/s"`, `"1000/min"`, `"5000/h"` or
   * `"10000/d"` (also `/sec`, `/second`, `/m`, `/minute`, `/hour`, `/day`,
   * plurals, and `/ms`), and a period of several units, `"100/15min"` or
   * `"10/500ms"`: what {@link Limit.toString} writes, less the burst.
   *
   * @throws {TypeError} when the text is not of that form, naming it.
   * @throws {RangeError} when the count or the period is out of range.
   *
   * @param text The limit's text.
   * @returns The limit, with the default burst.
   */
  static parse(text: string): Limit {
    const rate = readRate(text);
    const what = `limit ${JSON.stringify(text)}`;
    const periodMs = checkPeriod(rate.periodMs, what);
    return new Limit(checkCount(rate.count, what), periodMs, undefined, what);
  }

  /**
   * The same limit with a burst of `size` requests admitted back to back.
   * 0 is taken as 1; more than {@link MAX_BURST} is a `RangeError`, and so
   * is a burst the rate spends in less than a microsecond (see the class).
   *
   * @param size Requests admitted back to back, 0 (taken as 1) to {@link MAX_BURST}.
   * @returns A new limit; this one is unchanged.
   * @throws {RangeError} when `size` is not a whole number in that range, or
   *   the rate spends it in less than a microsecond.
   */
  burst(size: number): Limit {
    return new Limit(this.#count, this.#periodMs, checkBurst(size), "Limit.burst");
  }

  /**
   * The number of requests per period.
   *
   * @returns The count, as given.
   */
  count(): number {
    return this.#count;
  }

  /**
   * The period in milliseconds: 1000, 60,000 or 3,600,000, or what
   * {@link Limit.per} was given.
   *
   * @returns The period.
   */
  periodMs(): number {
    return this.#periodMs;
  }

  /**
   * The rate in requests per second, unrounded (one an hour is 1/3600).
   *
   * @returns Requests a second.
   */
  ratePerSec(): number {
    return (this.#count * SECOND_MS) / this.#periodMs;
  }

  /**
   * The burst: as given, or by default a twentieth of the count, at least 1
   * and at most {@link MAX_BURST}.
   *
   * @returns The burst.
   */
  burstSize(): number {
    return this.#burst ?? defaultBurst(this.#count);
  }

  /**
   * Whether the burst was given explicitly rather than derived.
   *
   * @returns Whether `burst()` set it.
   */
  hasExplicitBurst(): boolean {
    return this.#burst !== undefined;
  }

  /**
   * Milliseconds between two requests at the steady rate.
   *
   * @returns The interval, ms.
   */
  intervalMs(): number {
    return this.#periodMs / this.#count;
  }

  /**
   * Same count, period and burst (as given, not as admitted).
   *
   * @param other Another limit.
   * @returns Whether both were made alike.
   */
  equals(other: Limit): boolean {
    return other instanceof Limit && other.#count === this.#count &&
      other.#periodMs === this.#periodMs && other.#burst === this.#burst;
  }

  /**
   * `"1000/min"`, with `" burst 10"` when the burst was given.
   *
   * @returns The limit's text, as `Limit.parse` reads it (less the burst).
   */
  toString(): string {
    const burst = this.#burst === undefined ? "" : ` burst ${this.#burst}`;
    return `${rateText(this)}${burst}`;
  }

  /**
   * The limit's one JSON form: the sidecar's admin API sends and takes it,
   * and the clients send it, so `JSON.stringify(limit)` is a body the
   * sidecar reads back as the same limit. The burst is the one that applies.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Limit } from "@rateguard/guard";
   *
   * assert.equal(
   *   JSON.stringify(Limit.perMinute(1_000).burst(50)),
   *   '{"limit":"1000/min","burst":50}',
   * );
   * ```
   *
   * @returns `{ limit: "1000/min", burst: 50 }`: count and period as `Limit.parse` reads them, and the burst.
   */
  toJSON(): { limit: string; burst: number } {
    return { limit: rateText(this), burst: this.burstSize() };
  }

  /**
   * What Node's and Bun's inspectors (`console.log`) print: its fields are
   * private, so without this they would print `Limit {}`.
   *
   * @returns `Limit(1000/min, burst 50)`, the burst as it applies.
   */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return shown(this);
  }

  /**
   * What Deno's inspector prints: as Node's.
   *
   * @returns `Limit(1000/min, burst 50)`.
   */
  [Symbol.for("Deno.customInspect")](): string {
    return shown(this);
  }
}

/** How the inspectors print a limit: the one form for Deno's and Node's alike. */
function shown(limit: Limit): string {
  return `Limit(${rateText(limit)}, burst ${limit.burstSize()})`;
}

/** `1000/min`: a limit's count and period as `Limit.parse` reads them, without the burst. */
export function rateText(limit: Limit): string {
  return `${limit.count()}/${periodText(limit.periodMs())}`;
}

/** A twentieth of the count, at least 1, at most {@link MAX_BURST}. */
function defaultBurst(count: number): number {
  return Math.min(MAX_BURST, Math.max(1, Math.floor(count / 20)));
}

/**
 * Checks that a caller gave a {@link Limit}: the one test of it, for the
 * builder's options and the book's setters alike.
 *
 * @param limit What the caller gave.
 * @param what The option or method, named in the error.
 * @returns The limit.
 * @throws {TypeError} when it is not a {@link Limit}.
 */
export function checkLimit(limit: unknown, what: string): Limit {
  if (!(limit instanceof Limit)) {
    throw new TypeError(
      `${what}: expected a Limit (Limit.perSecond(n) and so on), got ${describe(limit)}`,
    );
  }
  return limit;
}

/** Refuses a limit that pays back more than its burst in a microsecond: the time base cannot hold it. */
function checkHoldable(count: number, periodMs: number, burst: number, what: string): void {
  const periodUs = periodMs * US_PER_MS;
  if (burst * periodUs >= count) return;
  const perSec = burst * US_PER_MS * SECOND_MS;
  throw new RangeError(
    `${what}: ${count}/${periodText(periodMs)} with a burst of ${burst} pays back more than the ` +
      `burst in a microsecond, the resolution of the guard's clock: at most ${perSec} a second ` +
      `with a burst of ${burst}; this rate needs a burst of at least ${
        Math.ceil(count / periodUs)
      }`,
  );
}

function checkCount(count: number, what: string): number {
  if (typeof count !== "number" || !Number.isFinite(count)) {
    throw new RangeError(`${what}: the count must be a finite number, got ${describe(count)}`);
  }
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
    throw new RangeError(
      `${what}: the count must be a whole number from 1 to ${MAX_COUNT}, got ${count}`,
    );
  }
  return count;
}

function checkPeriod(periodMs: number, what: string): number {
  if (
    typeof periodMs !== "number" || !Number.isInteger(periodMs) || periodMs < 1 ||
    periodMs > MAX_PERIOD_MS
  ) {
    throw new RangeError(
      `${what}: the period must be a whole number of milliseconds from 1 to ${MAX_PERIOD_MS} ` +
        `(366 days), got ${describe(periodMs)}`,
    );
  }
  return periodMs;
}

function checkBurst(size: number): number {
  if (typeof size !== "number" || !Number.isInteger(size) || size < 0 || size > MAX_BURST) {
    throw new RangeError(
      `Limit.burst: the burst must be a whole number from 0 to ${MAX_BURST}, got ${describe(size)}`,
    );
  }
  return size === 0 ? 1 : size;
}
