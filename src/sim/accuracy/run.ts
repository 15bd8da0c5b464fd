/**
 * An accuracy scenario and its run: a fleet on virtual time under a fault
 * the design claims a bound for, and what it admitted, second by second,
 * in units of R. The rows are defined beside it (`five.ts` at five nodes,
 * `more.ts`, `regions.ts`...) and tabled by `table.ts`; nothing in the
 * table is written by hand: `deno task accuracy --write` regenerates it.
 *
 * Every run: a limit of 1000 a second on one key, burst 50 on each node,
 * β = 0.05, 64 hot keys. The cluster forms for 5 s with no traffic; traffic
 * starts at 5 s; a scenario's event comes at 20 s.
 *
 * @module
 */

import { Limit } from "../../core/limit.ts";
import type { PartitionPolicy } from "../../core/partition.ts";
import { Fleet } from "../faces/fleet.ts";
import type { NetworkFaults } from "../driver/network.ts";

/** The limit R of every scenario, per second. */
export const R = 1_000;
/** The limit of every run: R a second, burst 50 on each node. */
export const LIMIT: Limit = Limit.perSecond(R).burst(50);
/** When traffic starts in every run. */
export const TRAFFIC_AT_MS = 5_000;
/** When a scenario's event comes. */
export const EVENT_AT_MS = 20_000;
/** How long a run lasts, unless its scenario says. */
export const DEFAULT_END_MS = 50_000;

/** One row of the table. */
export interface Scenario {
  /** Short name, for the command line. */
  readonly id: string;
  /** The row's label. */
  readonly label: string;
  /** The design bound, as the table prints it. */
  readonly bound: string;
  /** Whether a result keeps the bound. */
  readonly holds: (r: Outcome) => boolean;
  /** Nodes at the start. */
  readonly nodes: number;
  /** The limit every node starts with (default R, burst 50). */
  readonly startLimit?: Limit;
  /** Partition policy (default: hold down 10 s). */
  readonly policy?: PartitionPolicy;
  /** Network faults. */
  readonly faults?: NetworkFaults;
  /** Largest clock drift of a node, as a fraction (default 0). */
  readonly clockDrift?: number;
  /** Requests a second offered to each node, from 5 s. */
  readonly demand: (index: number) => number;
  /** Nodes whose admissions count (default: all). */
  readonly measured?: (index: number) => boolean;
  /** When the scenario's event happens, from which "settles in" is counted. */
  readonly eventAtMs?: number;
  /** Scripted actions: at a time, do something to the fleet. */
  readonly script?: ReadonlyArray<readonly [atMs: number, act: (fleet: Fleet) => void]>;
  /** The steady window, [from, to) ms. Default: the last 10 s. */
  readonly steady?: readonly [number, number];
  /** How long the run lasts (default {@link DEFAULT_END_MS}). */
  readonly endMs?: number;
  /** Whether the nodes share rules (default: no). */
  readonly fleetRules?: boolean;
  /** Whether every node's burst follows its share (default: as the fleet's size says, `sharesBurstAt`). */
  readonly sharedBurst?: boolean;
}

/** What one run admitted, in units of R. */
export interface Outcome {
  /** Admitted per second over the run, from the start of traffic. */
  readonly perSecond: readonly number[];
  /** Mean of the steady window. */
  readonly steady: number;
  /** The busiest second from the start of traffic. */
  readonly peak: number;
  /** Seconds above 1.01 R. */
  readonly secondsOver: number;
  /** Seconds from the event until every second stays within 5% of the steady rate. */
  readonly settlesInS: number;
  /** Seconds with nothing admitted. */
  readonly secondsWithout: number;
  /** Shadow denials a second over the steady window. */
  readonly shadowDeniedPerSec: number;
  /** Denials a second over the steady window. */
  readonly deniedPerSec: number;
  /** (Observer, member) pairs that saw a running member declared dead (`Fleet.falseDeaths`). */
  readonly falseDeaths: number;
}

/** Runs one scenario with `seed`; `relay: false` turns off the relay of demand reports. */
export function run(s: Scenario, seed: number, options: { relay?: boolean } = {}): Outcome {
  const fleet = new Fleet({
    seed,
    size: s.nodes,
    limit: s.startLimit ?? LIMIT,
    policy: s.policy,
    faults: s.faults,
    clockDrift: s.clockDrift,
    relay: options.relay,
    fleetRules: s.fleetRules,
    sharedBurst: s.sharedBurst,
  });
  const endMs = s.endMs ?? DEFAULT_END_MS;
  const script = [
    [TRAFFIC_AT_MS, (f: Fleet) => {
      for (let i = 0; i < f.size; i++) f.setDemand(i, s.demand(i));
    }] as const,
    ...(s.script ?? []),
  ].sort((a, b) => a[0] - b[0]);
  const measured = s.measured ?? (() => true);
  const perSecond: number[] = [];
  const denied: number[] = [];
  const shadowDenied: number[] = [];
  let next = 0;
  for (let t = 0; t < endMs; t += 1_000) {
    while (next < script.length && script[next][0] < t + 1_000) {
      fleet.runUntil(script[next][0]);
      script[next][1](fleet);
      next++;
    }
    fleet.runUntil(t + 1_000);
    let a = 0, d = 0, sd = 0;
    for (let i = 0; i < fleet.size; i++) {
      const c = fleet.take(i);
      if (!measured(i)) continue;
      a += c.admitted;
      d += c.denied;
      sd += c.shadowDenied;
    }
    if (t >= TRAFFIC_AT_MS) {
      perSecond.push(a / R);
      denied.push(d);
      shadowDenied.push(sd);
    }
  }
  return {
    ...summarise(s, perSecond, denied, shadowDenied, endMs),
    falseDeaths: fleet.falseDeaths(),
  };
}

function summarise(
  s: Scenario,
  perSecond: number[],
  denied: number[],
  shadowDenied: number[],
  endMs: number,
): Omit<Outcome, "falseDeaths"> {
  const index = (ms: number) => Math.max(0, Math.floor((ms - TRAFFIC_AT_MS) / 1_000));
  const [from, to] = s.steady ?? [endMs - 10_000, endMs];
  const window = (xs: number[]) => xs.slice(index(from), index(to));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const steady = mean(window(perSecond));
  const event = index(s.eventAtMs ?? TRAFFIC_AT_MS);
  let settled = event;
  for (let i = index(to) - 1; i >= event; i--) {
    if (Math.abs(perSecond[i] - steady) > 0.05 * steady) {
      settled = i + 1;
      break;
    }
  }
  return {
    perSecond,
    steady,
    peak: Math.max(...perSecond),
    secondsOver: perSecond.filter((x) => x > 1.01).length,
    settlesInS: settled - event,
    secondsWithout: perSecond.filter((x) => x === 0).length,
    deniedPerSec: mean(window(denied)),
    shadowDeniedPerSec: mean(window(shadowDenied)),
  };
}

/** Skewed demand: 1200 on node 0, 150 on each other. */
export const skewed = (i: number): number => (i === 0 ? 1_200 : 150);
