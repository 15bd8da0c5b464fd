/**
 * The accuracy scenarios: a fleet on virtual time under each fault the
 * design claims a bound for, and the table of what it admitted. Nothing in
 * the table is written by hand; `deno task accuracy --write` regenerates it.
 *
 * Every run: a limit of 1000 a second on one key, burst 50 on each node,
 * β = 0.05, 64 hot keys. The cluster forms for 5 s with no traffic; traffic
 * starts at 5 s; a scenario's event comes at 20 s.
 *
 * @module
 */

import { Limit } from "../../core/limit.ts";
import { PartitionPolicy } from "../../core/partition.ts";
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

const even = () => 400;
/** Skewed demand: 1200 on node 0, 150 on each other. */
export const skewed = (i: number): number => (i === 0 ? 1_200 : 150);
const atMost = (x: number) => (r: Outcome) => r.steady <= x && r.peak <= x + 0.05;
const about = (x: number) => (r: Outcome) =>
  Math.abs(r.steady - x) <= 0.02 && r.peak <= Math.max(x, 1) + 0.05;
const split = (
  policy: PartitionPolicy,
  bound: string,
  holds: (r: Outcome) => boolean,
  label: string,
): Scenario => ({
  id: `split-${policy.toString().replace(/[:]/g, "-")}`,
  label,
  bound,
  holds,
  nodes: 5,
  policy,
  demand: even,
  eventAtMs: EVENT_AT_MS,
  steady: [40_000, 50_000],
  endMs: 60_000,
  script: [
    [EVENT_AT_MS, (f) => f.topology.partition([[0, 1, 2], [3, 4]])],
    [50_000, (f) => f.topology.heal()],
  ],
});

/**
 * The drift row's largest clock drift, as large as the membership chaos
 * runs'. Each node keeps its share in its own time: one whose clock runs 2%
 * fast admits its share 2% fast in virtual time, so the fleet admits R
 * within the drift.
 */
const CLOCK_DRIFT = 0.02;

/** Seconds from an event after which a restart row allows no second over 1.05 R. */
const RESTART_GRACE_S = 3;

/**
 * Node 2 wants 10/s while the others want 400; it crashes at the event and
 * starts again at its address after `downMs`, wanting 900. Its new life
 * must supersede the old one's figures at once: peers that kept counting
 * 10/s for it would take 1.34 R between them and it.
 */
function restartRow(id: string, label: string, downMs: number): Scenario {
  const back = (f: Fleet) => {
    f.restart(2);
    f.setDemand(2, 900);
  };
  const eventIndex = (EVENT_AT_MS - TRAFFIC_AT_MS) / 1_000;
  return {
    id,
    label,
    bound: `R once settled, no second over 1.05 R after the first ${RESTART_GRACE_S} s`,
    holds: (r) =>
      Math.abs(r.steady - 1) <= 0.02 &&
      r.perSecond.slice(eventIndex + RESTART_GRACE_S).every((x) => x <= 1.05),
    nodes: 5,
    demand: (i) => (i === 2 ? 10 : 400),
    eventAtMs: EVENT_AT_MS,
    script: [
      [EVENT_AT_MS, (f) => f.crash(2)],
      [EVENT_AT_MS + downMs, back],
    ],
  };
}

/** The rows at five nodes. */
export const SCENARIOS_5: readonly Scenario[] = [
  {
    id: "even",
    label: "Even demand, 5 × 400",
    bound: "R",
    holds: about(1),
    nodes: 5,
    demand: even,
  },
  {
    id: "skewed",
    label: "Skewed demand, 1200 + 4 × 150",
    bound: "R",
    holds: about(1),
    nodes: 5,
    demand: skewed,
  },
  {
    id: "one-of-five",
    label: "Demand on 1 of 5 nodes",
    bound: "≥ R × (1 − 4β/5) = 0.96 R",
    holds: (r) => r.steady >= 0.96 - 0.005 && r.peak <= 1.05,
    nodes: 5,
    demand: (i) => (i === 0 ? 2_000 : 0),
  },
  {
    id: "loss",
    label: "Skewed, 30% packet loss",
    bound: "R",
    holds: about(1),
    nodes: 5,
    demand: skewed,
    faults: { lossRate: 0.3 },
  },
  {
    id: "dup-delay",
    label: "Skewed, 20% duplicated, half delayed up to 6 periods",
    bound: "R",
    holds: about(1),
    nodes: 5,
    demand: skewed,
    faults: { duplicateRate: 0.2, delayRate: 0.5, delayMaxMs: 1_200 },
  },
  {
    id: "drift",
    label: `Skewed, clocks drifting up to ±${CLOCK_DRIFT * 100}%`,
    bound: `R × (1 ± ${CLOCK_DRIFT * 100}%)`,
    holds: (r) =>
      r.steady >= 1 - CLOCK_DRIFT - 0.02 && r.steady <= 1 + CLOCK_DRIFT &&
      r.peak <= 1 + CLOCK_DRIFT + 0.05,
    nodes: 5,
    demand: skewed,
    clockDrift: CLOCK_DRIFT,
  },
  split(PartitionPolicy.optimistic(), "up to k × R = 2 R", atMost(2), "3/2 split, Optimistic"),
  split(
    PartitionPolicy.holdDown(10_000),
    "≈ R for 10 s, then up to 2 R",
    atMost(2),
    "3/2 split, HoldDown(10 s)",
  ),
  split(
    PartitionPolicy.holdDown(60_000),
    "≈ R",
    atMost(1.01),
    "3/2 split, HoldDown(60 s), longer than the split",
  ),
  split(
    PartitionPolicy.quorum(),
    "R + the minority's floors = 1.02 R",
    atMost(1.03),
    "3/2 split, Quorum",
  ),
  {
    id: "one-way",
    label: "One-way link, 0 → 1 lost",
    bound: "R",
    holds: about(1),
    nodes: 5,
    demand: skewed,
    eventAtMs: EVENT_AT_MS,
    script: [[EVENT_AT_MS, (f) => f.topology.cut(0, 1)]],
  },
  {
    id: "pause",
    label: "GC pause, 5 s on node 4 (the other four)",
    bound: "their shares unchanged",
    holds: (r) => r.steady <= 0.81 && r.peak <= 0.85,
    nodes: 5,
    demand: even,
    measured: (i) => i !== 4,
    eventAtMs: EVENT_AT_MS,
    steady: [40_000, 50_000],
    script: [[EVENT_AT_MS, (f) => f.pause(4, 5_000)]],
  },
  {
    id: "rolling",
    label:
      "Rolling restart, one node every 8 s, each back at 900/s, not 400 (settles: from the last restart)",
    bound: "≤ R, no second without service",
    holds: (r) => r.peak <= 1.05 && r.secondsWithout === 0,
    nodes: 5,
    demand: even,
    eventAtMs: EVENT_AT_MS + 8_000 * 4,
    endMs: 70_000,
    script: [0, 1, 2, 3, 4].flatMap((i) => [
      [EVENT_AT_MS + 8_000 * i, (f: Fleet) => f.crash(i)] as const,
      [EVENT_AT_MS + 8_000 * i + 1_000, (f: Fleet) => {
        f.restart(i);
        // A new demand, so that a stale figure of the old life shows.
        f.setDemand(i, 900);
      }] as const,
    ]),
  },
  restartRow("restart-at-once", "Node 2 restarts at once, demand 10 → 900/s", 0),
  restartRow("restart-150ms", "Node 2 restarts after 150 ms, demand 10 → 900/s", 150),
  restartRow("restart-3s", "Node 2 restarts after 3 s, demand 10 → 900/s", 3_000),
  {
    id: "crash",
    label: "Node 4 crashes for good (the other four)",
    bound: "R once the suspicion and the hold are over",
    holds: about(1),
    nodes: 5,
    demand: even,
    measured: (i) => i !== 4,
    eventAtMs: EVENT_AT_MS,
    script: [[EVENT_AT_MS, (f) => f.crash(4)]],
  },
  {
    id: "leave",
    label: "Node 4 leaves for good (the other four)",
    bound: "R at once",
    holds: about(1),
    nodes: 5,
    demand: even,
    measured: (i) => i !== 4,
    eventAtMs: EVENT_AT_MS,
    script: [[EVENT_AT_MS, (f) => f.leave(4)]],
  },
  {
    id: "jump",
    label: "Traffic jumps 100×, cold to hot",
    bound: "R",
    holds: about(1),
    nodes: 5,
    demand: () => 4,
    eventAtMs: EVENT_AT_MS,
    script: [[EVENT_AT_MS, (f) => [0, 1, 2, 3, 4].forEach((i) => f.setDemand(i, 400))]],
  },
  {
    id: "late-join",
    label: "A node joins 10 s late",
    bound: "R",
    holds: about(1),
    nodes: 4,
    demand: even,
    eventAtMs: EVENT_AT_MS,
    script: [[EVENT_AT_MS, (f) => f.setDemand(f.add(), 400)]],
  },
  {
    id: "lower",
    label: "Limit lowered to R/2, one node a second",
    bound: "≤ R in passing, R/2 after",
    holds: (r) => Math.abs(r.steady - 0.5) <= 0.01 && r.peak <= 1.05,
    nodes: 5,
    demand: even,
    eventAtMs: EVENT_AT_MS,
    script: [0, 1, 2, 3, 4].map((
      i,
    ) => [EVENT_AT_MS + 1_000 * i, (f: Fleet) => f.setLimit(i, Limit.perSecond(R / 2).burst(50))]),
  },
  {
    id: "raise",
    label: "Limit raised from R/2 to R, one node a second",
    bound: "≤ R, then R",
    holds: about(1),
    nodes: 5,
    demand: even,
    startLimit: Limit.perSecond(R / 2).burst(50),
    eventAtMs: EVENT_AT_MS,
    script: [0, 1, 2, 3, 4].map((
      i,
    ) => [EVENT_AT_MS + 1_000 * i, (f: Fleet) => f.setLimit(i, LIMIT)]),
  },
];
