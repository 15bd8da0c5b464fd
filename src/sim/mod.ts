/**
 * rateguard's deterministic simulator: membership nodes on virtual time over
 * an in-memory network with named faults, and the scenarios that test them.
 * One seed decides a whole run; a failure prints the command that replays it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Cluster, describe, runScenario } from "@rateguard/guard/sim";
 * const cluster = new Cluster({ seed: 7, size: 5, faults: { lossRate: 0.1 } });
 * cluster.runUntil(5_000);
 * assert(cluster.converged());
 * const result = runScenario("leave", 7);
 * assert(result.ok, describe(result));
 * ```
 *
 * @module
 */

export { Cluster, type ClusterOptions, type Observed, type Traffic } from "./cluster.ts";
export { type NetworkFaults, Topology } from "./network.ts";
export { describe, replayCommand, type ScenarioResult, waitFor } from "./report.ts";
export { runScenario, type Scenario, SCENARIOS } from "./scenarios.ts";
export { addressOf, Fleet, type FleetOptions, KEY } from "./fleet.ts";
export { type SeedLookup, seedName } from "./names.ts";
export {
  type Outcome,
  R,
  run as runAccuracy,
  type Scenario as AccuracyScenario,
  SCENARIOS_5,
} from "./accuracy.ts";
export { ENFORCED_RUN, SCENARIOS_50, SHADOW_RUN } from "./accuracy_more.ts";
export { renderTable, runAll, TABLE_SEED } from "./accuracy_table.ts";
