/**
 * A rule: a {@link Limit} turned into the rate the request path runs under
 * on this instance, at its share of the fleet-wide rate, with the shadow
 * run beside it. The book (`LimitBook`) resolves a key to one, the
 * allocator makes them for hot keys, and the enforcer and the key table
 * only read them. Also here: how a burst is shared by the fleet, since a
 * rule's burst follows its share.
 *
 * @module
 */

import type { Limit } from "./limit.ts";
import { type Rate, rateOf } from "./gcra.ts";

/** A limit resolved for the request path. */
export interface Rule extends Rate {
  /** The limit this rule enforces. */
  readonly limit: Limit;
  /** The shadow run beside it, if the key's class has one. */
  readonly shadow: Rule | undefined;
  /** The key's class is not known here: it runs under the default limit. */
  readonly unknownClass: boolean;
}

/**
 * The rule for `limit`, scaled by `scale` (a share of the fleet-wide rate);
 * with `sharedBurst`, its burst is scaled too ({@link sharedBurstOf}).
 */
export function ruleOf(
  limit: Limit,
  shadow: Rule | undefined,
  unknownClass: boolean,
  scale = 1,
  sharedBurst = false,
): Rule {
  const burst = sharedBurst ? sharedBurstOf(limit.burstSize(), scale) : limit.burstSize();
  return {
    ...rateOf(limit.count(), limit.periodMs(), burst, scale),
    limit,
    shadow,
    unknownClass,
  };
}

/**
 * The least burst of an instance's part of a shared burst, in requests: one
 * request back to back, and half a request of slack. With a tolerance of
 * exactly one request, a request that comes a moment before the debt is
 * paid back is denied and the moment until the next one is lost: at twice
 * its share in regular arrivals a node admits two thirds of its share
 * (each admission waits one and a half intervals). Half a request absorbs arrivals at twice the
 * share or more, and still admits only one request at once from rest.
 */
export const MIN_SHARED_BURST = 1.5;

/**
 * An instance's part of a shared burst: the burst times its share of the
 * limit, at least {@link MIN_SHARED_BURST} (one request back to back, see
 * there) and at most the burst. The parts of the fleet add up to the burst
 * where each is above the least, which at the default burst holds while
 * shares are above 3% of the limit.
 *
 * @param burst The limit's burst, whole requests.
 * @param scale The instance's share, as a fraction of the limit.
 * @returns The instance's burst, requests (fractional: its whole part back to back).
 */
export function sharedBurstOf(burst: number, scale: number): number {
  return Math.min(burst, Math.max(MIN_SHARED_BURST, burst * scale));
}

/**
 * Whether a fleet of `n` shares `limit`'s burst when `sharedBurst` is not
 * set: when a burst on each instance, n × burst, would be more than the
 * headroom the cold fraction leaves below the limit for a second,
 * (1 − α) × the limit's rate × 1 s. A key that has just turned hot runs at
 * its cold share α·R/N until its peers' reports arrive, and the bursts every
 * instance spends when traffic starts or jumps fit in that headroom only
 * while they add up to no more than it: at the default burst (a twentieth of
 * the count) and α = 0.5, up to ten instances for a limit a second, none for
 * a limit a minute. Past it, a burst on each instance keeps a big fleet over
 * the limit for as many seconds as n × burst / R (43 s at 1000 instances).
 * A standalone guard (n = 1, share 1) has the whole burst either way.
 *
 * @param limit The limit.
 * @param n The counted members, this one included.
 * @param alpha The cold fraction α.
 * @returns Whether its burst is shared.
 */
export function sharesBurstAt(limit: Limit, n: number, alpha: number): boolean {
  return n * limit.burstSize() > (1 - alpha) * limit.ratePerSec();
}
