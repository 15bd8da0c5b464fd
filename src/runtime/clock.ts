/**
 * The monotonic clock under the guard. `performance.now()` exists on Deno,
 * Bun and Node alike and never goes backwards, unlike `Date.now()`, which
 * jumps when the wall clock is set. GCRA needs the former: a clock stepped
 * back would hand every key a fresh burst, and one that is not a number
 * would put `NaN` in every field a client reads. The builder's `clock`
 * option puts another one in its place, for tests and simulations; it is
 * read through {@link steadyClock}, which holds it to the same contract.
 *
 * @module
 */

import { describe } from "../core/describe.ts";

/** A monotonic clock in milliseconds, fractional. */
export type Clock = () => number;

/** The process's monotonic clock. */
export const monotonicClock: Clock = () => performance.now();

/**
 * A caller's clock held to the guard's contract: a reading that is not a
 * finite number throws, naming the option, and a reading below the last
 * one is taken as the last one (time stands still rather than running
 * back), so a clock stepped back neither refills a burst nor shows a
 * client a time in the past.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { steadyClock } from "./clock.ts";
 * let nowMs = 10;
 * const clock = steadyClock(() => nowMs);
 * assert.equal(clock(), 10);
 * nowMs = 4;
 * assert.equal(clock(), 10);
 * nowMs = NaN;
 * assert.throws(() => clock(), TypeError);
 * ```
 *
 * @param read The clock the caller gave, in milliseconds.
 * @returns The clock the guard reads.
 */
export function steadyClock(read: Clock): Clock {
  let lastMs = -Infinity;
  return () => {
    const nowMs: unknown = read();
    if (typeof nowMs === "number" && nowMs >= lastMs && nowMs !== Infinity) {
      return lastMs = nowMs;
    }
    if (typeof nowMs !== "number" || !Number.isFinite(nowMs)) {
      throw new TypeError(`clock: it must return finite milliseconds, got ${describe(nowMs)}`);
    }
    return lastMs;
  };
}
