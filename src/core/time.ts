/**
 * The core's time base: whole microseconds since an origin the caller owns
 * (the guard takes its clock's reading when it is built). Instants are
 * integers, exact as JavaScript numbers up to 2^53 µs, about 285 years, so
 * nothing a decision depends on loses precision as a process's uptime
 * grows: a decision after ten years is the decision of the first second.
 *
 * The caller's clock is read in fractional milliseconds and brought into
 * the base once per check, to the nearest microsecond: the resolution of
 * every decision, and of every duration a decision reports.
 *
 * @module
 */

/** Microseconds in a millisecond. */
export const US_PER_MS = 1_000;

// The two conversions below run on every check, and write US_PER_MS out as
// a literal: JavaScriptCore reads a module's constant from its environment
// at each use rather than folding it, which cost a hot check on Bun about a
// sixth (measured with bench/check_bench.ts). Checked here against the
// constant, so that they cannot disagree with it.

/** The reading `nowMs` of the caller's clock as whole microseconds since `originMs`. */
export function toUs(nowMs: number, originMs: number): number {
  // Math.floor(x + 1/2), not Math.round: the same here, and far cheaper on JavaScriptCore.
  return Math.floor((nowMs - originMs) * 1_000 + 0.5);
}

/** Whole microseconds as milliseconds, for what a decision reports. */
export function usToMs(us: number): number {
  return us / 1_000;
}

if (toUs(1, 0) !== US_PER_MS || usToMs(US_PER_MS) !== 1) {
  throw new Error("time: toUs and usToMs must convert by US_PER_MS");
}
