/**
 * The accuracy rows at 200 and 1000 nodes: the faults of the smaller rows
 * where the fleet is large, a scale-up of a hundred nodes at once, and a
 * 60/40 split, all under the defaults (a burst shared at these sizes).
 * Offered load is the same in total at every size (skewed: 1200 on node 0
 * and 150 on each other; otherwise 2 R spread evenly). The rows of a crash,
 * a leave, a late join, a hundred joining and a 100× jump keep the bound of
 * the defaults (`defaults.ts`).
 *
 * @module
 */

import { MIN_SHARED_BURST } from "../../core/rule.ts";
import { EVENT_AT_MS, LIMIT, type Outcome, R, type Scenario, skewed } from "./run.ts";
import { defaultBursts, defaultsHold, JOIN_SECONDS_OVER, joinsHold } from "./defaults.ts";
import type { Fleet } from "../faces/fleet.ts";

/**
 * Under the defaults a fleet this large shares its burst (`sharesBurstAt`):
 * the design bound of skewed demand is R plus one burst and the least part
 * of it on each node, in the peak second.
 */
function sharedBursts(n: number): { bound: string; holds: (r: Outcome) => boolean } {
  const bursts = defaultBursts(n);
  return {
    bound: `R + 1 burst + ${n} × ${MIN_SHARED_BURST} = ${(1 + bursts / R).toFixed(2)} R`,
    holds: (r) => Math.abs(r.steady - 1) <= 0.02 && r.peak <= 1 + bursts / R + 0.05,
  };
}

/** The rows of a fleet of `n` nodes, `n` ≥ 200. */
export function largeRows(n: number): Scenario[] {
  const even = () => (2 * R) / n;
  const last = n - 1;
  const others = (i: number) => i !== last;
  const within = sharedBursts(n);
  const defaults = defaultsHold(n);
  const joins = defaultsHold(n, JOIN_SECONDS_OVER);
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
      ...defaults,
      nodes: n,
      demand: even,
      measured: others,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => f.crash(last)]],
    },
    {
      id: `leave-${n}`,
      label: `${n} nodes: node ${last} leaves for good (the other ${n - 1})`,
      ...defaults,
      nodes: n,
      demand: even,
      measured: others,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => f.leave(last)]],
    },
    {
      id: `jump-${n}`,
      label: `${n} nodes: traffic jumps 100×, cold to hot`,
      ...joins,
      nodes: n,
      demand: () => even() / 100,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => everyNode(f, (i) => f.setDemand(i, even()))]],
    },
    {
      id: `late-join-${n}`,
      label: `${n} nodes: a node joins 10 s late`,
      ...defaults,
      nodes: n - 1,
      demand: even,
      eventAtMs: EVENT_AT_MS,
      script: [[EVENT_AT_MS, (f) => f.setDemand(f.add(), even())]],
    },
    {
      id: `scale-up-${n}`,
      label: `${n} nodes: 100 join at once, 10 s late`,
      ...joinsHold(n, JOIN_SECONDS_OVER),
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

/**
 * The 100× jump with a burst on each node (`sharedBurst: false`), what the
 * defaults were before: the bound is R plus a burst on each node in the
 * peak second, and the fleet spends the bursts for about B·n/R seconds.
 */
export function jumpEachBurst(n: number): Scenario {
  const jump = largeRows(n).find((s) => s.id === `jump-${n}`)!;
  const burst = LIMIT.burstSize();
  return {
    ...jump,
    id: `jump-each-${n}`,
    label: `${n} nodes, a burst on each (sharedBurst: false): traffic jumps 100×, cold to hot`,
    bound: `R (+ ${n} bursts)`,
    holds: (r) => Math.abs(r.steady - 1) <= 0.02 && r.peak <= 1 + (n * burst) / R + 0.05,
    sharedBurst: false,
  };
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
