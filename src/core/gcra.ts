/**
 * The generic cell rate algorithm (GCRA) over a single number per key: the
 * theoretical arrival time (TAT), the moment at which the key will have
 * fully paid off what it was admitted. Time is passed in; nothing here reads
 * a clock, so a decision is a pure function of (state, rule, cost, now), and
 * the read-modify-write of a check has no await in it: the race of reading a
 * state, yielding, and writing it back cannot happen.
 *
 * @module
 */

/**
 * What a check decided.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard } from "@rateguard/guard";
 *
 * const guard = await Guard.builder().limit(10).burst(2).spawn();
 * const first = guard.check("tenant:42");
 * assert(first.allowed && first.remaining === 1 && first.retryAfterMs === 0);
 * guard.check("tenant:42");
 * const third = guard.check("tenant:42");
 * assert(!third.allowed && third.retryAfterMs > 0);
 * ```
 */
export class Decision {
  /** Whether the request is admitted. */
  readonly allowed: boolean;
  /** How long to wait before this request would be admitted; 0 when allowed, `Infinity` if never (a cost above the burst). */
  readonly retryAfterMs: number;
  /** How many more requests of cost 1 would be admitted back to back right now. */
  readonly remaining: number;
  /** How long until the full burst is available again. */
  readonly resetMs: number;

  /**
   * A decision; prefer the guard's methods to constructing one.
   *
   * @param allowed Whether the request is admitted.
   * @param retryAfterMs How long before a retry may be admitted; 0 when allowed.
   * @param remaining Requests of cost 1 admitted back to back now.
   * @param resetMs How long until the full burst is back.
   */
  constructor(allowed: boolean, retryAfterMs: number, remaining: number, resetMs: number) {
    this.allowed = allowed;
    this.retryAfterMs = retryAfterMs;
    this.remaining = remaining;
    this.resetMs = resetMs;
  }
}

/**
 * A limit resolved into what the algorithm needs: the emission interval
 * (time one request costs) and the tolerance (the burst, as time).
 */
export interface Rate {
  /** Milliseconds one request of cost 1 costs: period / count. */
  readonly intervalMs: number;
  /** Requests per millisecond, 1 / intervalMs, so the request path multiplies. */
  readonly perMs: number;
  /** `burst × intervalMs`: how far ahead of now the TAT may run. */
  readonly toleranceMs: number;
  /** Requests admitted back to back from a full bucket. */
  readonly burst: number;
}

/** Builds a {@link Rate} from a rate in requests per second and a burst. */
export function rateOf(perSec: number, burst: number): Rate {
  const intervalMs = 1_000 / perSec;
  return { intervalMs, perMs: perSec / 1_000, toleranceMs: burst * intervalMs, burst };
}

/**
 * Slack for comparing float64 milliseconds: a few units in the last place of
 * the clock reading. Without it, three admissions at a third of a
 * millisecond could sum to a hair over one millisecond and deny the last
 * request of a burst. It is the resolution of the arithmetic, far below a
 * nanosecond for the first century of a process's uptime.
 */
function slack(nowMs: number): number {
  return (nowMs < 0 ? -nowMs : nowMs) * 1e-15 + 1e-12;
}

/**
 * The TAT after admitting `cost` now, or `NaN` if the request is denied.
 * Consumes nothing: the caller stores the result to commit it.
 */
export function admitTat(tatMs: number, rate: Rate, cost: number, nowMs: number): number {
  const next = (tatMs > nowMs ? tatMs : nowMs) + cost * rate.intervalMs;
  return next - nowMs <= rate.toleranceMs + slack(nowMs) ? next : NaN;
}

/** How many requests of cost 1 fit before `tatMs` reaches the tolerance. */
export function remainingAt(tatMs: number, rate: Rate, nowMs: number): number {
  const base = tatMs > nowMs ? tatMs : nowMs;
  const room = (nowMs + rate.toleranceMs - base) / rate.intervalMs;
  const n = Math.floor(room + 1e-9);
  return n > 0 ? n : 0;
}

/** The decision for an admission that moved the TAT to `newTatMs`. */
export function allowedDecision(newTatMs: number, rate: Rate, nowMs: number): Decision {
  // After an admission the TAT is within the tolerance, so the room is
  // non-negative (up to the slack) and at most the burst, under 2^31:
  // truncation by `| 0` is the floor, without a call.
  const remaining = ((nowMs + rate.toleranceMs - newTatMs) * rate.perMs + 1e-9) | 0;
  return new Decision(true, 0, remaining, newTatMs - nowMs);
}

/** The decision for a request of `cost` that was denied at `tatMs`. */
export function deniedDecision(tatMs: number, rate: Rate, cost: number, nowMs: number): Decision {
  const base = tatMs > nowMs ? tatMs : nowMs;
  const retryAfterMs = cost > rate.burst
    ? Infinity
    : Math.max(0, base + cost * rate.intervalMs - rate.toleranceMs - nowMs);
  return new Decision(
    false,
    retryAfterMs,
    remainingAt(tatMs, rate, nowMs),
    Math.max(0, tatMs - nowMs),
  );
}
