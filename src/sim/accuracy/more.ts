/**
 * The accuracy rows beyond the five-node ones: the shadow's two runs, and
 * the scenarios at fifty nodes, where relaying news matters.
 *
 * @module
 */

import { Limit } from "../../core/limit.ts";
import { defaultsHold, hundredJoin } from "./defaults.ts";
import { SCENARIOS_5 } from "./five.ts";
import { EVENT_AT_MS, R, type Scenario, skewed, TRAFFIC_AT_MS } from "./run.ts";

/** The shadow row's two runs: a shadow at R/5 beside the real limit, and R/5 enforced. */
const SHADOW_LIMIT: Limit = Limit.perSecond(R / 5).burst(50);

/** Skewed demand under R with a shadow at R/5: what the shadow would deny. */
export const SHADOW_RUN: Scenario = {
  id: "shadow",
  label: "Shadow at R/5, skewed demand on R",
  bound: "the shadow counts what enforcing would deny, or more",
  holds: () => true,
  nodes: 5,
  demand: skewed,
  script: [[TRAFFIC_AT_MS - 1_000, (f) => f.setShadow(SHADOW_LIMIT)]],
};

/** The same demand with R/5 enforced: what enforcing would deny. */
export const ENFORCED_RUN: Scenario = {
  ...SHADOW_RUN,
  id: "enforced",
  startLimit: SHADOW_LIMIT,
  script: [],
};

/**
 * At fifty nodes the defaults share the burst (`sharesBurstAt`): a burst on
 * each node would add up to 2.5 R back to back when traffic starts or jumps.
 * Every row keeps the bound of the defaults (`defaults.ts`).
 */
const { bound: BOUND_50, holds: about50 } = defaultsHold(50);

/** The rows at fifty nodes: the same scenarios, where relaying news matters. */
export const SCENARIOS_50: readonly Scenario[] = [
  {
    ...SCENARIOS_5[1],
    id: "skewed-50",
    label: "50 nodes: skewed, 1200 + 49 × 150",
    bound: BOUND_50,
    holds: about50,
    nodes: 50,
  },
  {
    ...SCENARIOS_5.find((s) => s.id === "crash")!,
    id: "crash-50",
    label: "50 nodes: node 49 crashes for good (the other 49)",
    bound: BOUND_50,
    holds: about50,
    nodes: 50,
    measured: (i) => i !== 49,
    script: [[EVENT_AT_MS, (f) => f.crash(49)]],
  },
  {
    ...SCENARIOS_5.find((s) => s.id === "leave")!,
    id: "leave-50",
    label: "50 nodes: node 49 leaves for good (the other 49)",
    bound: BOUND_50,
    holds: about50,
    nodes: 50,
    measured: (i) => i !== 49,
    script: [[EVENT_AT_MS, (f) => f.leave(49)]],
  },
  {
    ...SCENARIOS_5.find((s) => s.id === "jump")!,
    id: "jump-50",
    label: "50 nodes: traffic jumps 100×, cold to hot",
    bound: BOUND_50,
    holds: about50,
    nodes: 50,
    demand: () => 0.4,
    script: [[EVENT_AT_MS, (f) => Array.from({ length: 50 }, (_, i) => f.setDemand(i, 40))]],
  },
  {
    ...SCENARIOS_5.find((s) => s.id === "late-join")!,
    id: "late-join-50",
    label: "50 nodes: a node joins 10 s late",
    bound: BOUND_50,
    holds: about50,
    nodes: 49,
    demand: () => 40,
    script: [[EVENT_AT_MS, (f) => f.setDemand(f.add(), 40)]],
  },
  hundredJoin(50, "50 nodes: 100 join at once, 10 s late"),
];

/**
 * A hundred join a fleet of five at once: from a burst on each of 5 nodes
 * to one burst shared by 105, under the defaults.
 */
export const SCALE_UP_5: Scenario = hundredJoin(5, "5 nodes: 100 join at once, 10 s late");
