/**
 * The monotonic clock under the guard. `performance.now()` exists on Deno,
 * Bun and Node alike and never goes backwards, unlike `Date.now()`, which
 * jumps when the wall clock is set. GCRA needs the former: a clock stepped
 * back would hand every key a fresh burst. The builder's `clock` option
 * puts another one in its place, for tests and simulations.
 *
 * @module
 */

/** A monotonic clock in milliseconds, fractional. */
export type Clock = () => number;

/** The process's monotonic clock. */
export const monotonicClock: Clock = () => performance.now();
