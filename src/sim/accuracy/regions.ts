/**
 * The accuracy rows of a fleet across three regions, at 50 and 200 nodes:
 * one-way delays of 20, 40 and 75 ms between the regions (A–B, A–C, B–C),
 * half a millisecond inside one, jitter a tenth of each delay, and 1% of
 * datagrams lost between regions. The nodes are split into thirds, node 0
 * (everyone's seed) in A. Demand is skewed between the regions (half of
 * 2 R in A, 30% in B, 20% in C) and each region's load balancer is uneven
 * on its own: A's sends as much to its first node as to eight others, B's
 * rises from one to three across its nodes, C's gives every other node
 * three times as much.
 *
 * Bounds: once settled, within 2% of R; settled within 3 s of the event
 * (of a heal: see {@link healSettleS}); no false death in a run without
 * a cut.
 *
 * @module
 */

import { MIN_SHARED_BURST } from "../../core/rule.ts";
import { PartitionPolicy } from "../../core/partition.ts";
import { FLOOR_FRACTION as BETA } from "../../core/options.ts";
import { EVENT_AT_MS, LIMIT, type Outcome, R, type Scenario, TRAFFIC_AT_MS } from "./run.ts";
import type { Fleet } from "../faces/fleet.ts";
import { type Regions, symmetricRegions } from "../driver/network.ts";

/** One-way delays between the three regions, ms; the diagonal is inside one. */
export const REGION_DELAYS_MS: readonly (readonly number[])[] = [
  [0.5, 20, 40],
  [20, 0.5, 75],
  [40, 75, 0.5],
];
/** Share of datagrams lost between two regions. */
export const REGION_LOSS = 0.01;
/** Jitter, as a share of a link's delay. */
export const REGION_JITTER = 0.1;
/** Seconds after an event within which a region row settles. */
export const REGION_SETTLE_S = 3;
/** How far from R a settled region row may be. */
const WITHIN = 0.02;
/** Each region's part of the 2 R offered. */
const REGION_SHARE = [0.5, 0.3, 0.2];
/** The follow-the-sun shift: how long it takes, and A's and B's parts before and after. */
const SHIFT_MS = 10_000;
const SHIFT_FROM = [0.7, 0.1, 0.2];
const SHIFT_TO = [0.1, 0.7, 0.2];
/** How long the region C is cut off. */
const CUT_MS = 30_000;

/** The region of node `index` in a fleet of `n`: thirds, node 0 in A. */
function regionOf(n: number): (index: number) => number {
  return (index) => Math.min(2, Math.floor((index * 3) / n));
}

/** Nodes in region `r` of a fleet of `n`. */
function regionSize(n: number, r: number): number {
  const region = regionOf(n);
  let size = 0;
  for (let i = 0; i < n; i++) if (region(i) === r) size++;
  return size;
}

/** The three regions of a fleet of `n`. */
export function threeRegions(n: number): Regions {
  return symmetricRegions(regionOf(n), REGION_DELAYS_MS, {
    lossRate: REGION_LOSS,
    jitter: REGION_JITTER,
  });
}

/** Region `r`'s load balancer's weight for its `k`th node of `m`: uneven, each its own way. */
function weight(r: number, k: number, m: number): number {
  if (r === 0) return k === 0 ? 8 : 1;
  if (r === 1) return 1 + (2 * k) / Math.max(1, m - 1);
  return k % 2 === 0 ? 3 : 1;
}

/** Demand of each node of a fleet of `n` when the regions' parts of 2 R are `parts`. */
function demandOf(n: number, parts: readonly number[]): (index: number) => number {
  const region = regionOf(n);
  const members: number[][] = [[], [], []];
  for (let i = 0; i < n; i++) members[region(i)].push(i);
  const perNode = new Array<number>(n).fill(0);
  members.forEach((nodes, r) => {
    const ws = nodes.map((_, k) => weight(r, k, nodes.length));
    const total = ws.reduce((a, b) => a + b, 0);
    nodes.forEach((i, k) => perNode[i] = (2 * R * parts[r] * ws[k]) / total);
  });
  return (index) => perNode[index] ?? 0;
}

/** Settled within 2% of R, in 3 s of the event, the peak second at most `peak`. */
function settled(peak: number, r: Outcome): boolean {
  return Math.abs(r.steady - 1) <= WITHIN && r.settlesInS <= REGION_SETTLE_S && r.peak <= peak;
}

/** The seconds of `r` from `fromMs` to `toMs` (from the start of traffic). */
function seconds(r: Outcome, fromMs: number, toMs: number): readonly number[] {
  const at = (ms: number) => (ms - TRAFFIC_AT_MS) / 1_000;
  return r.perSecond.slice(at(fromMs), at(toMs));
}

/**
 * Seconds after a heal within which a cut row of `n` instances settles.
 * The sides declared each other dead; every member tries one it holds
 * dead now and then (`src/core/membership/reconnect.ts`: about one ping a
 * period from each side), so the sides meet within a period or two of the
 * heal, and every member must then refute its death on the other side
 * once, which takes a second or two (membership alone: 1.2 to 1.8 s for
 * 30 members, 3.3 s for 200), and the allocation follows within a second.
 */
export function healSettleS(n: number): number {
  // At 200 the Quorum row dips below R for a second longer while the
  // majority hears of C's members again (docs/accuracy.md, "Regions").
  return n <= 50 ? REGION_SETTLE_S : REGION_SETTLE_S + 1;
}

/**
 * A cut row: region C is cut off at the event for 30 s under `policy`, at
 * most `bounds.cut` R in every second while cut off and at most
 * `bounds.last` R over its last 10 s, then R within {@link healSettleS} of
 * the heal.
 */
function cutRow(
  n: number,
  policy: PartitionPolicy,
  name: string,
  shown: string,
  bounds: { cut: number; last: number; text: string },
): Scenario {
  const region = regionOf(n);
  const healAtMs = EVENT_AT_MS + CUT_MS;
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const healS = healSettleS(n);
  return {
    id: `region-cut-${name}-${n}`,
    label: `${n} nodes, 3 regions: region C cut off for 30 s, then healed, ${shown}`,
    bound: `${bounds.text}; healed, R within ${healS} s`,
    holds: (r) =>
      Math.abs(r.steady - 1) <= WITHIN && r.settlesInS <= healS &&
      seconds(r, EVENT_AT_MS, healAtMs).every((x) => x <= bounds.cut + 0.05) &&
      mean(seconds(r, healAtMs - 10_000, healAtMs)) <= bounds.last + 0.01,
    nodes: n,
    policy,
    faults: { regions: threeRegions(n) },
    demand: demandOf(n, REGION_SHARE),
    sharedBurst: true,
    eventAtMs: healAtMs,
    endMs: healAtMs + 25_000,
    script: [
      [EVENT_AT_MS, (f) => f.topology.cutOff((i) => region(i) === 2)],
      [healAtMs, (f) => f.topology.heal()],
    ],
  };
}

/**
 * The region rows of a fleet of `n` nodes: with the shared burst, as the
 * bound of 3 s to settle needs (a burst on each instance takes longer to
 * spend than that, delay or not: the last row shows it).
 */
export function regionRows(n: number): Scenario[] {
  const faults = { regions: threeRegions(n) };
  const demand = demandOf(n, REGION_SHARE);
  const bursts = 1 + (n * LIMIT.burstSize()) / R + 0.05;
  const shared = 1 + (LIMIT.burstSize() + n * MIN_SHARED_BURST) / R + 0.05;
  const sharedText = `R + 1 burst + ${n} × ${MIN_SHARED_BURST} = ${(shared - 0.05).toFixed(2)} R`;
  const noFalseDeath = (r: Outcome) => r.falseDeaths === 0;
  const shift = (f: Fleet, share: number) => {
    const parts = SHIFT_FROM.map((a, r) => a + (SHIFT_TO[r] - a) * share);
    const d = demandOf(n, parts);
    for (let i = 0; i < f.size; i++) f.setDemand(i, d(i));
  };
  const steps = SHIFT_MS / 1_000;
  // While region C is cut off, an Optimistic or held-down fleet may admit R
  // on each side; under Quorum, C's nodes hold their floors, R·β/n each.
  const k = 2;
  const floors = 1 + (n - regionSize(n, 0) - regionSize(n, 1)) * BETA / n;
  return [
    {
      id: `regions-${n}`,
      label:
        `${n} nodes, 3 regions (20/40/75 ms, 1% loss between), shared burst: skewed, uneven in each`,
      bound: `${sharedText}, settled in ${REGION_SETTLE_S} s, no false death`,
      holds: (r) => settled(shared, r) && noFalseDeath(r),
      nodes: n,
      faults,
      demand,
      sharedBurst: true,
    },
    {
      id: `regions-sun-${n}`,
      label:
        `${n} nodes, 3 regions, shared burst: demand moves from A to B over 10 s (follow the sun)`,
      bound: `R, settled in ${REGION_SETTLE_S} s of the shift's start, no false death`,
      holds: (r) => settled(shared, r) && noFalseDeath(r),
      nodes: n,
      faults,
      demand: demandOf(n, SHIFT_FROM),
      sharedBurst: true,
      eventAtMs: EVENT_AT_MS,
      script: Array.from(
        { length: steps + 1 },
        (_, s) => [EVENT_AT_MS + s * 1_000, (f: Fleet) => shift(f, s / steps)] as const,
      ),
    },
    cutRow(n, PartitionPolicy.optimistic(), "optimistic", "Optimistic", {
      cut: k,
      last: k,
      text: `up to ${k} R while cut off`,
    }),
    cutRow(n, PartitionPolicy.holdDown(10_000), "holddown", "HoldDown(10 s)", {
      cut: k,
      last: k,
      text: `≈ R for 10 s, then up to ${k} R`,
    }),
    cutRow(n, PartitionPolicy.quorum(), "quorum", "Quorum", {
      cut: 1.2,
      last: floors,
      text: `R + C's floors = ${floors.toFixed(2)} R once the cut is known, 1.2 R before`,
    }),
    {
      id: `regions-bursts-${n}`,
      label: `${n} nodes, 3 regions, a burst on each instance: skewed, uneven in each`,
      bound: `R (+ ${n} bursts), no false death`,
      holds: (r) => Math.abs(r.steady - 1) <= WITHIN && r.peak <= bursts && noFalseDeath(r),
      nodes: n,
      faults,
      demand,
      sharedBurst: false,
    },
  ];
}

/** The region rows of the main table. */
export const SCENARIOS_REGIONS: readonly Scenario[] = regionRows(50);
