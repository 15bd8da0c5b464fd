/**
 * The bound of the rows run under the defaults, at any size: a user who sets
 * nothing gets a burst that follows the fleet's size (`sharesBurstAt`: a
 * burst on each instance up to ten at this limit, one burst shared by the
 * fleet past that), and after a crash, a leave, a late join, a hundred
 * joining at once or a 100× jump the fleet spends at most
 * {@link DEFAULT_SECONDS_OVER} seconds over 1.01 R from the start of
 * traffic, and admits R within 2% once steady. Also the scale-up rows at 5
 * and 50 nodes, where a hundred join: the fleet crosses from a burst on
 * each instance to a shared one.
 *
 * @module
 */

import { COLD_FRACTION } from "../../core/options.ts";
import { MIN_SHARED_BURST, sharesBurstAt } from "../../core/rule.ts";
import { EVENT_AT_MS, LIMIT, type Outcome, R, type Scenario } from "./run.ts";

/** Seconds over 1.01 R a row of the defaults may spend, from the start of traffic. */
export const DEFAULT_SECONDS_OVER = 3;

/**
 * What the fleet's bursts add up to at `n` nodes under the defaults, in
 * requests: one on each node where the burst is not shared, else one burst
 * and at most the least part on each node.
 */
export function defaultBursts(n: number): number {
  const burst = LIMIT.burstSize();
  return sharesBurstAt(LIMIT, n, COLD_FRACTION) ? burst + n * MIN_SHARED_BURST : n * burst;
}

/**
 * Seconds over 1.01 R the rows at 200 nodes and more of a hundred joining
 * and of a 100× jump may spend for now: at seed 1, at 200, 4 (a hundred
 * joining: the first second, 1.31 R, while the old members have not all
 * heard of the newcomers, a second the newcomers spend as they leave R/N,
 * and seconds a hair over) and 5 (the jump: seconds a hair over 1.01 R,
 * where the fleet's admissions swing by ±1.5% with the shares split by
 * demand figures read at one point of their swing, see docs/accuracy.md),
 * more than {@link DEFAULT_SECONDS_OVER}, the goal (issue 35, still open
 * for these rows). Their bound says both, so that the table shows the miss.
 * The rows of a hundred joining 5 and 50 keep the goal.
 */
export const JOIN_SECONDS_OVER = 8;

/**
 * The bound of a row under the defaults whose fleet has at most `n` nodes:
 * R within 2% once steady, at most `seconds` over 1.01 R, and a peak second
 * of at most R and the fleet's bursts, + 5%.
 */
export function defaultsHold(
  n: number,
  seconds: number = DEFAULT_SECONDS_OVER,
): { bound: string; holds: (r: Outcome) => boolean } {
  const peak = 1 + defaultBursts(n) / R;
  const goal = seconds > DEFAULT_SECONDS_OVER ? `, goal ${DEFAULT_SECONDS_OVER} s` : "";
  return {
    bound: `R, ≤ ${seconds} s over 1.01 R (defaults${goal})`,
    holds: (r) =>
      Math.abs(r.steady - 1) <= 0.02 && r.secondsOver <= seconds && r.peak <= peak + 0.05,
  };
}

/**
 * The peak second the rows of a hundred joining may reach for now, in R:
 * the old members that have not yet heard of the newcomers keep their
 * shares while each newcomer takes R/N (membership's news of a hundred
 * members takes 1.5 to 2 s to reach every old one at 150 and 200), and at
 * seed 1 the first second after the join is 1.20 R at 5, 1.19 R at 50 and
 * 1.31 R at 200. Open (issue 35).
 */
export const JOIN_PEAK = 1.5;

/**
 * The bound of a row of a hundred joining a fleet of `n` (see
 * {@link JOIN_PEAK}), at most `seconds` over 1.01 R.
 */
export function joinsHold(
  n: number,
  seconds: number = DEFAULT_SECONDS_OVER,
): { bound: string; holds: (r: Outcome) => boolean } {
  const { bound, holds } = defaultsHold(n, seconds);
  return {
    bound: `${bound}, peak ≤ ${JOIN_PEAK} R`,
    holds: (r) => holds({ ...r, peak: 0 }) && r.peak <= JOIN_PEAK,
  };
}

/**
 * A fleet of `n`, offered 2 R spread evenly, that a hundred join at once at
 * the event, the same 2 R then spread over all: id `scale-up-n`.
 */
export function hundredJoin(n: number, label: string): Scenario {
  const after = (2 * R) / (n + 100);
  return {
    id: `scale-up-${n}`,
    label,
    ...joinsHold(n + 100),
    nodes: n,
    demand: () => (2 * R) / n,
    eventAtMs: EVENT_AT_MS,
    script: [[EVENT_AT_MS, (f) => {
      for (let i = 0; i < f.size; i++) f.setDemand(i, after);
      for (let k = 0; k < 100; k++) f.setDemand(f.add(), after);
    }]],
  };
}
