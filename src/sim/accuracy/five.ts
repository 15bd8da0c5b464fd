/**
 * The accuracy rows at five nodes: demand even, skewed and on one node,
 * loss, duplication and delay, clock drift, splits under each partition
 * policy, a one-way link, a pause, restarts (rolling, at once, late), a
 * crash, a leave, a jump from cold to hot, a late join, and a limit lowered
 * and raised; each run as `run.ts` says.
 *
 * @module
 */

import { Limit } from "../../core/limit.ts";
import { PartitionPolicy } from "../../core/partition.ts";
import type { Fleet } from "../faces/fleet.ts";
import {
  EVENT_AT_MS,
  LIMIT,
  type Outcome,
  R,
  type Scenario,
  skewed,
  TRAFFIC_AT_MS,
} from "./run.ts";

const even = () => 400;
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
