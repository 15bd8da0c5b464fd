/**
 * The accuracy rows at 200 and 1000 nodes: the faults of the smaller rows
 * where the fleet is large, a scale-up of a hundred nodes at once, and a
 * 60/40 split. Offered load is the same in total at every size (skewed:
 * 1200 on node 0 and 150 on each other; otherwise 2 R spread evenly).
 *
 * @module
 */

import {
  DEFAULT_END_MS,
  EVENT_AT_MS,
  LIMIT,
  type Outcome,
  R,
  type Scenario,
  skewed,
  TRAFFIC_AT_MS,
} from "./accuracy.ts";
import type { Fleet } from "./fleet.ts";

/** The burst each node starts with. */
const BURST = LIMIT.burstSize();

/**
 * Without a shared burst every node spends its own when traffic starts or
 * jumps: the design bound is R plus a burst on each node, in the peak second.
 */
function perNodeBurst(n: number): { bound: string; holds: (r: Outcome) => boolean } {
  return {
    bound: `R (+ ${n} bursts)`,
    holds: (r) => Math.abs(r.steady - 1) <= 0.02 && r.peak <= 1 + (n * BURST) / R + 0.05,
  };
}

/**
 * How long a row of even demand runs whose load starts at `loadAtMs` (at
 * the event, for the nodes that join and bring their own bursts): so that
 * its steady window, the last 10 s, starts once every node's burst is spent.
 * Offered 2 R/n against a share of about R/n, a node spends its burst at R/n
 * a second at the slowest, so in B·n/R seconds: 10 at 200 nodes, inside the
 * usual run; 50 at 1000, where a window of 40 to 50 s measured bursts, not
 * allocation.
 */
function afterBursts(n: number, loadAtMs: number): Pick<Scenario, "endMs"> {
  return { endMs: Math.max(DEFAULT_END_MS, loadAtMs + (BURST * n * 1_000) / R + 15_000) };
}

/** The rows of a fleet of `n` nodes, `n` ≥ 200. */
export function largeRows(n: number): Scenario[] {
  const even = () => (2 * R) / n;
  const last = n - 1;
  const others = (i: number) => i !== last;
  const within = perNodeBurst(n);
  const evenFromStart = afterBursts(n, TRAFFIC_AT_MS);
  const splitAt = Math.round(n * 0.6);
  return [
    {
      id: `skewed-${n}`,
      label: `${n} nodes: skewed, 1200 + ${n - 1} × 150`,
      ...within,
      nodes: n,
      demand: skewed,
    },
    {
      id: `loss-${n}`,
      label: `${n} nodes: skewed, 30% packet loss`,
      ...within,
      nodes: n,
      demand: skewed,
      faults: { lossRate: 0.3 },
    },
    {
      id: `crash-${n}`,
      label: `${n} nodes: node ${last} crashes for good (the other ${n - 1})`,
      ...within,
      ...evenFromStart,
      nodes: n,
      demand: even,
      measured: others,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => f.crash(last)]],
    },
    {
      id: `leave-${n}`,
      label: `${n} nodes: node ${last} leaves for good (the other ${n - 1})`,
      ...within,
      ...evenFromStart,
      nodes: n,
      demand: even,
      measured: others,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => f.leave(last)]],
    },
    {
      id: `jump-${n}`,
      label: `${n} nodes: traffic jumps 100×, cold to hot`,
      ...within,
      ...afterBursts(n, EVENT_AT_MS),
      nodes: n,
      demand: () => even() / 100,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => everyNode(f, (i) => f.setDemand(i, even()))]],
    },
    {
      id: `late-join-${n}`,
      label: `${n} nodes: a node joins 10 s late`,
      ...within,
      ...afterBursts(n, EVENT_AT_MS),
      nodes: n - 1,
      demand: even,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => f.setDemand(f.add(), even())]],
    },
    {
      id: `scale-up-${n}`,
      label: `${n} nodes: 100 join at once, 10 s late`,
      ...within,
      ...afterBursts(n, EVENT_AT_MS),
      nodes: n - 100,
      demand: even,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => {
        for (let k = 0; k < 100; k++) f.setDemand(f.add(), even());
      }]],
    },
    {
      id: `split-${n}`,
      label: `${n} nodes: 60/40 split, HoldDown(10 s)`,
      bound: "≈ R for 10 s, then up to 2 R",
      holds: (r) => r.steady <= 2 && r.peak <= 2.05,
      nodes: n,
      demand: even,
      eventAtMs: EVENT_AT_MS,
      steady: [40_000, 50_000],
      endMs: 60_000,
      script: [
        [EVENT_AT_MS, (f) => f.topology.partition([range(0, splitAt), range(splitAt, n)])],
        [50_000, (f) => f.topology.heal()],
      ],
    },
  ];
}

function everyNode(f: Fleet, act: (i: number) => void): void {
  for (let i = 0; i < f.size; i++) act(i);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/** The rows at 200 nodes. */
export const SCENARIOS_200: readonly Scenario[] = largeRows(200);
/** The rows at 1000 nodes. */
export const SCENARIOS_1000: readonly Scenario[] = largeRows(1_000);
