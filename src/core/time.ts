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

// The conversions below run on every check. They read a private copy of
// US_PER_MS: on Node 20 a read of an exported constant, the module's own or
// an imported one, costs about 6 ns in a loop, where a private one is folded
// into the code (`bench/module_reads.ts`, its constant rows: 8.1 ns own, 8.7
// ns imported, 1.9 ns private); Deno 2.9.6 and Bun 1.4.5 show no difference.
const US = 1_000;

/** Microseconds in a millisecond. */
export const US_PER_MS: number = US;

/** The reading `nowMs` of the caller's clock as whole microseconds since `originMs`. */
export function toUs(nowMs: number, originMs: number): number {
  // Math.floor(x + 1/2), not Math.round: the same here, and far cheaper on JavaScriptCore.
  return Math.floor((nowMs - originMs) * US + 0.5);
}

/** Whole microseconds as milliseconds, for what a decision reports. */
export function usToMs(us: number): number {
  return us / US;
}
