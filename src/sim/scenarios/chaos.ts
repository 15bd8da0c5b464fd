/**
 * The swarm's scenario: a random cluster under a random mix of every named
 * fault for a minute, after which the network heals and the cluster must
 * agree again on who is alive. In the spirit of TigerBeetle's VOPR: the seed
 * decides the size, the faults and their timing.
 *
 * @module
 */

import { Prng } from "../../core/prng.ts";
import { Cluster } from "../faces/cluster.ts";
import { Report, type ScenarioResult, waitFor } from "./report.ts";

const FAULT_PHASE_MS = 60_000;
/**
 * Nodes 0 to 2 are every node's seeds. They may crash and pause, but never
 * go for good: a cluster whose every seed is gone cannot heal a partition,
 * by design, and a run that finds so says nothing new.
 */
const SEEDS = [0, 1, 2];
/** Suspicion (6 s), a seed's re-contact (10 s), and room for the news to spread. */
const SETTLE_LIMIT_MS = 40_000;

type Fault = (cluster: Cluster, prng: Prng) => string;

/** Each returns a line saying what it did. */
const FAULTS: readonly Fault[] = [
  function split(cluster, prng) {
    const groups = 2 + prng.below(2);
    const sides: number[][] = Array.from({ length: groups }, () => []);
    for (let i = 0; i < cluster.size; i++) sides[prng.below(groups)].push(i);
    const forMs = 2_000 + prng.below(20_000);
    cluster.topology.partition(sides);
    cluster.at(cluster.nowMs + forMs, () => cluster.topology.heal());
    return `partition ${JSON.stringify(sides)} for ${forMs} ms`;
  },
  function oneWay(cluster, prng) {
    const from = prng.below(cluster.size);
    const to = prng.below(cluster.size);
    cluster.topology.cut(from, to);
    return `cut ${from} -> ${to} until the end`;
  },
  function pause(cluster, prng) {
    const node = prng.below(cluster.size);
    const forMs = 500 + prng.below(6_000);
    cluster.pause(node, forMs);
    return `pause ${node} for ${forMs} ms`;
  },
  function crashAndMaybeRestart(cluster, prng) {
    const node = prng.below(cluster.size);
    if (!cluster.isRunning(node)) return `crash ${node}: not running`;
    cluster.crash(node);
    if (!SEEDS.includes(node) && prng.below(2) === 0) return `crash ${node} for good`;
    const afterMs = prng.below(15_000);
    cluster.at(cluster.nowMs + afterMs, () => {
      if (!cluster.isRunning(node)) cluster.restart(node);
    });
    return `crash ${node}, restart after ${afterMs} ms`;
  },
  function leave(cluster, prng) {
    const node = SEEDS.length + prng.below(cluster.size - SEEDS.length);
    cluster.leave(node);
    return `${node} leaves`;
  },
  function lateJoin(cluster) {
    const node = cluster.add({ seeds: SEEDS });
    return `${node} joins`;
  },
];

/** Runs one random chaos run from `seed`; `log` receives what happened. */
export function chaos(seed: number, log: (line: string) => void = () => {}): ScenarioResult {
  const report = new Report("chaos", seed);
  const prng = new Prng(seed ^ 0x5eed);
  const size = 4 + prng.below(9);
  const share = (max: number) => Math.round(prng.nextFloat() * max * 1_000) / 1_000;
  const faults = {
    lossRate: share(0.15),
    duplicateRate: share(0.2),
    delayRate: share(0.3),
    delayMaxMs: prng.below(1_200),
  };
  log(`${size} nodes, faults ${JSON.stringify(faults)}, clock drift up to 2%`);
  const cluster = new Cluster({ seed, faults, clockDrift: 0.02 });
  for (let i = 0; i < size; i++) cluster.add({ seeds: SEEDS });
  const events = 2 + prng.below(6);
  for (let i = 0; i < events; i++) {
    const atMs = 5_000 + prng.below(FAULT_PHASE_MS - 10_000);
    const fault = FAULTS[prng.below(FAULTS.length)];
    const faultPrng = prng.fork();
    cluster.at(atMs, () => log(`${atMs} ms: ${fault(cluster, faultPrng)}`));
  }
  try {
    cluster.runUntil(FAULT_PHASE_MS);
    cluster.topology.heal();
    cluster.faults = {};
    log(`${FAULT_PHASE_MS} ms: the network heals`);
    const settledAt = waitFor(cluster, () => cluster.converged(), SETTLE_LIMIT_MS);
    report.metric("settledAfterMs", (settledAt ?? NaN) - FAULT_PHASE_MS);
    report.expect(settledAt !== undefined, `no agreement ${SETTLE_LIMIT_MS} ms after healing`);
  } catch (error) {
    report.expect(false, `threw: ${error instanceof Error ? error.stack : String(error)}`);
  }
  return report.done();
}
