/**
 * What a check decided: the one value every check, peek and batch item
 * returns. It lives in a module of its own so that the request path, in
 * `gcra.ts`, makes decisions through an import: a module's own exported
 * class costs a little more to construct than an imported one, about 1 ns an
 * object (`bench/module_reads.ts`, its class rows: own export against
 * imported, 12.0 against 11.2 ns on Deno 2.9.6, 5.8 against 5.0 ns on Bun
 * 1.4.5, 14.4 against 13.7 ns on Node 20; one run on a shared machine). The
 * 4 to 8 ns a read measured on Deno when this module was split off (commit
 * 2284b43) the bench no longer shows.
 *
 * @module
 */

/**
 * What a check decided. The one rule for every decision: it is a value to
 * read, never to change, nor to tell apart by identity. Any decision may be
 * one that other checks return too: the common admissions (a key that owed
 * nothing, a hot key checked again in the same microsecond) return one
 * decision per rule and debt, made once and frozen, to every key of the
 * rule, so that the request path neither computes nor allocates one; the
 * first checks of two keys are the same object. The decisions made for one
 * check are not frozen, as freezing each costs the request path about a
 * fifth of a denial and up to a third of an admission that owes part of a
 * request (measured against the unfrozen tree in one process, on Deno, Bun
 * and Node); so writing to a decision may throw or may seem to work, and is
 * wrong either way (its fields are `readonly`). Copy the fields to keep or
 * change them.
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
  /**
   * How long to wait before this request would be admitted, in whole
   * microseconds rounded up (so waiting this long is never early); 0 when
   * allowed, `Infinity` if never (a cost above the burst).
   */
  readonly retryAfterMs: number;
  /** How many more requests of cost 1 would be admitted back to back right now. */
  readonly remaining: number;
  /** How long until the full burst is available again, in whole microseconds rounded up. */
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
