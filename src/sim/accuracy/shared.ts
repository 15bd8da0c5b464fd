/**
 * The accuracy rows with `sharedBurst` on, at 5, 50, 200 and 1000 nodes:
 * traffic starting (skewed demand) and traffic jumping 100× from cold to
 * hot. The fleet's bursts add up to one burst where every instance's part
 * of it is above the least (`MIN_SHARED_BURST`, one request and half a
 * request of slack); where shares are smaller, as at 50 nodes and more,
 * each instance holds that least, and the peak second is bounded by R, the
 * burst and the least on each instance. The fleet settles: no second below
 * 0.8 R after the event's first, and within 5% of the steady rate from 3 s
 * after it, relay on.
 *
 * @module
 */

import { MIN_SHARED_BURST } from "../../core/rule.ts";
import {
  EVENT_AT_MS,
  LIMIT,
  type Outcome,
  R,
  type Scenario,
  skewed,
  TRAFFIC_AT_MS,
} from "./run.ts";

/** Seconds after the event within which a shared-burst row must settle. */
export const SETTLE_WITHIN_S = 3;
/** The least second after the event's first, in R. */
export const LEAST_SECOND = 0.8;

/**
 * The bound of a shared-burst row of `n` nodes whose event comes at
 * `eventAtMs`: a node admits at most its rate and its burst in a second,
 * and the bursts add up to at most the burst and the least on each node.
 */
function settles(n: number, eventAtMs: number): { bound: string; holds: (r: Outcome) => boolean } {
  const event = (eventAtMs - TRAFFIC_AT_MS) / 1_000;
  const burst = LIMIT.burstSize();
  const least = n * MIN_SHARED_BURST;
  return {
    bound:
      `R + 1 burst + ${n} × ${MIN_SHARED_BURST} = ${(1 + (burst + least) / R).toFixed(2)} R; ` +
      `≥ ${LEAST_SECOND} R after the first second, settled in ${SETTLE_WITHIN_S} s`,
    holds: (r) =>
      Math.abs(r.steady - 1) <= 0.02 && r.peak <= 1 + (burst + least) / R + 0.05 &&
      r.perSecond.slice(event + 1).every((x) => x >= LEAST_SECOND) &&
      r.settlesInS <= SETTLE_WITHIN_S,
  };
}

/** The two shared-burst rows of a fleet of `n`; ids `skewed-shared-n`, `jump-shared-n` (no suffix at 5). */
export function sharedRows(n: number): Scenario[] {
  const suffix = n === 5 ? "" : `-${n}`;
  const even = (2 * R) / n;
  return [
    {
      id: `skewed-shared${suffix}`,
      label: `${n} nodes, shared burst: traffic starts, skewed`,
      ...settles(n, TRAFFIC_AT_MS),
      nodes: n,
      demand: skewed,
      sharedBurst: true,
    },
    {
      id: `jump-shared${suffix}`,
      label: `${n} nodes, shared burst: traffic jumps 100×, cold to hot`,
      ...settles(n, EVENT_AT_MS),
      nodes: n,
      demand: () => even / 100,
      eventAtMs: EVENT_AT_MS,
      sharedBurst: true,
      script: [[EVENT_AT_MS, (f) => {
        for (let i = 0; i < f.size; i++) f.setDemand(i, even);
      }]],
    },
  ];
}

/**
 * The shared-burst rows of the table: 5 nodes. From more than ten nodes at
 * this limit the defaults share the burst, and the rows of 50, 200 and 1000
 * nodes run with it.
 */
export const SCENARIOS_SHARED: readonly Scenario[] = sharedRows(5);
