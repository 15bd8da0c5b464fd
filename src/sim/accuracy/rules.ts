/**
 * The accuracy rows of fleet rules: a limit changed on one node and shared
 * by gossip, and changes on both sides of a partition, which heal to one.
 *
 * @module
 */

import { Limit } from "../../core/limit.ts";
import { EVENT_AT_MS, R, type Scenario } from "./run.ts";

const half = Limit.perSecond(R / 2).burst(50);
const most = Limit.perSecond((R * 4) / 5).burst(50);
/** Each of five nodes offered 400 a second: 2 R in all. */
const even = () => 400;

/** The scenarios of fleet rules, five nodes each. */
export const SCENARIOS_RULES: readonly Scenario[] = [
  {
    id: "lower-shared",
    label: "Limit lowered to R/2 on one node, fleet rules",
    bound: "R/2 on every node within a second",
    holds: (r) => Math.abs(r.steady - 0.5) <= 0.01 && r.peak <= 1.05 && r.settlesInS <= 2,
    nodes: 5,
    demand: even,
    fleetRules: true,
    eventAtMs: EVENT_AT_MS,
    script: [[EVENT_AT_MS, (f) => f.setLimit(0, half)]],
  },
  {
    id: "partition-change",
    label: "Limit changed on both sides of a partition, fleet rules",
    bound: "the later change, 0.8 R, once healed",
    holds: (r) => Math.abs(r.steady - 0.8) <= 0.02,
    nodes: 5,
    demand: even,
    fleetRules: true,
    eventAtMs: EVENT_AT_MS + 10_000,
    script: [
      [EVENT_AT_MS, (f) => f.topology.partition([[0, 1, 2], [3, 4]])],
      [EVENT_AT_MS + 1_000, (f) => f.setLimit(0, half)],
      [EVENT_AT_MS + 2_000, (f) => f.setLimit(4, most)],
      [EVENT_AT_MS + 10_000, (f) => f.topology.heal()],
    ],
  },
];
