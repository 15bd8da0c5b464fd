/**
 * Named scenarios: a cluster, a fault, and what must hold. Each runs from a
 * seed alone, so a failure replays exactly with the command it prints.
 *
 * @module
 */

import { GUARD_BOUNDS } from "../../core/options.ts";
import { Address, encode, type MemberRecord } from "../../core/membership/mod.ts";
import { resolveConfig, suspicionBoundsMs } from "../../core/membership/config.ts";
import { Cluster, type Observed } from "../faces/cluster.ts";
import { Report, type ScenarioResult, waitFor } from "./report.ts";

/** A named scenario. */
export interface Scenario {
  /** Its name on the command line. */
  readonly name: string;
  /** What it does and what it asserts, in a line. */
  readonly description: string;
  /** Runs it from `seed`. */
  run(seed: number): ScenarioResult;
}

const PERIOD_MS = GUARD_BOUNDS.protocolPeriodMs.default;
/**
 * A lone accuser's suspicion timeout at `size` members (6 s up to ten, see
 * `suspicionBoundsMs`), plus a second to notice and spread the news.
 */
function detectionBoundMs(size: number): number {
  return suspicionBoundsMs(resolveConfig({}), size).maxMs + 5 * PERIOD_MS;
}

function converge(size: number, limitMs: number): Scenario {
  return {
    name: `converge-${size}`,
    description: `${size} nodes start together and see each other alive within ${limitMs} ms`,
    run(seed) {
      const report = new Report(this.name, seed);
      const cluster = new Cluster({ seed, size, clockDrift: 0.01 });
      const atMs = waitFor(cluster, () => cluster.converged(), limitMs);
      report.expect(atMs !== undefined, `not converged after ${limitMs} ms`);
      report.metric("convergedMs", atMs ?? NaN);
      cluster.runFor(10_000);
      report.expect(cluster.converged(), "converged, then lost it");
      return report.done();
    },
  };
}

function crash(size: number): Scenario {
  const boundMs = detectionBoundMs(size);
  return {
    name: `crash-${size}`,
    description: `one of ${size} nodes crashes; every other node declares it dead within ` +
      `${Math.round(boundMs)} ms`,
    run(seed) {
      const report = new Report(this.name, seed);
      const cluster = settled(seed, size, report);
      const victim = size - 1;
      const { firstMs, allMs } = detect(cluster, victim, boundMs + 5_000);
      report.metric("firstDeadMs", firstMs);
      report.metric("allDeadMs", allMs);
      report.expect(allMs <= boundMs, `all saw the crash only after ${allMs} ms`);
      return report.done();
    },
  };
}

/** Crashes `victim` now; returns when the first and the last running node declared it dead. */
export function detect(
  cluster: Cluster,
  victim: number,
  limitMs: number,
): { firstMs: number; allMs: number } {
  const victimKey = Cluster.addressOf(victim).toString();
  const startMs = cluster.nowMs;
  const dead = new Map<number, number>();
  cluster.onChange(({ atMs, observer, change }) => {
    if (change.member.address.toString() !== victimKey || change.member.state !== "dead") return;
    if (!dead.has(observer)) dead.set(observer, atMs - startMs);
  });
  cluster.crash(victim);
  const others = [...Array(cluster.size).keys()].filter((i) => cluster.isRunning(i));
  waitFor(cluster, () => others.every((i) => dead.has(i)), limitMs);
  const times = others.map((i) => dead.get(i) ?? Infinity);
  return { firstMs: Math.min(...times), allMs: Math.max(...times) };
}

/** A cluster of `size` that has converged and run on for ten seconds. */
export function settled(seed: number, size: number, report: Report, options = {}): Cluster {
  const cluster = new Cluster({ seed, size, ...options });
  report.expect(
    waitFor(cluster, () => cluster.converged(), 20_000) !== undefined,
    "never converged",
  );
  cluster.runFor(10_000);
  return cluster;
}

/**
 * A scenario where a fault makes probes fail for a while and nobody may be
 * declared dead: suspicions must all be refuted in time.
 */
function noFalseDeaths(options: {
  name: string;
  description: string;
  size: number;
  durationMs: number;
  fault: (cluster: Cluster) => void;
}): Scenario {
  return {
    name: options.name,
    description: options.description,
    run(seed) {
      const report = new Report(this.name, seed);
      const cluster = settled(seed, options.size, report);
      let suspicions = 0;
      let deaths = 0;
      cluster.onChange(({ change }) => {
        if (change.member.state === "suspect") suspicions++;
        if (change.member.state === "dead") deaths++;
      });
      options.fault(cluster);
      cluster.runFor(options.durationMs);
      report.metric("suspicions", suspicions);
      report.metric("deaths", deaths);
      report.expect(deaths === 0, `${deaths} false deaths`);
      cluster.faults = {};
      cluster.topology.heal();
      const agreed = waitFor(cluster, () => cluster.converged(), 10_000);
      report.expect(agreed !== undefined, "no agreement once the fault was over");
      return report.done();
    },
  };
}

const lossNoFalseDeaths = noFalseDeaths({
  name: "loss-30",
  description: "10 nodes, 30% of datagrams lost for 10 minutes: suspicions, but no death",
  size: 10,
  durationMs: 600_000,
  fault: (cluster) => {
    cluster.faults = { lossRate: 0.3 };
  },
});

const oneWay = noFalseDeaths({
  name: "one-way",
  description: "of 5 nodes, datagrams from 0 to 1 are lost for 2 minutes: helpers route around it",
  size: 5,
  durationMs: 120_000,
  fault: (cluster) => cluster.topology.cut(0, 1),
});

const duplicateDelay = noFalseDeaths({
  name: "duplicate-delay",
  description: "10 nodes, 20% of datagrams twice and half delayed up to 6 periods, for 2 minutes",
  size: 10,
  durationMs: 120_000,
  fault: (cluster) => {
    cluster.faults = { duplicateRate: 0.2, delayRate: 0.5, delayMaxMs: 6 * PERIOD_MS };
  },
});

const pause: Scenario = {
  name: "pause",
  description: "one of 5 nodes stops for 5 s (a GC pause), comes back and refutes its death",
  run(seed) {
    const report = new Report(this.name, seed);
    const cluster = settled(seed, 5, report);
    cluster.pause(4, 5_000);
    cluster.runFor(5_000);
    const resumedAtMs = cluster.nowMs;
    const back = waitFor(cluster, () => cluster.converged(), 5_000, 10);
    report.metric("backAfterMs", (back ?? NaN) - resumedAtMs);
    report.expect(back !== undefined, "the paused node was not taken back");
    report.expect((cluster.node(4)?.incarnation ?? 0) > 0, "the paused node did not refute");
    return report.done();
  },
};

const partition: Scenario = {
  name: "partition",
  description: "5 nodes split 3/2 for 30 s: each side sees the other dead; healed, they merge",
  run(seed) {
    const report = new Report(this.name, seed);
    const cluster = settled(seed, 5, report);
    const sides = [[0, 1, 2], [3, 4]];
    cluster.topology.partition(sides);
    cluster.runFor(30_000);
    for (const [mine, theirs] of [[sides[0], sides[1]], [sides[1], sides[0]]]) {
      for (const i of mine) {
        const view = cluster.view(i);
        const alive = (j: number) => view.get(Cluster.addressOf(j).toString()) === "alive";
        report.expect(mine.every(alive), `node ${i} lost sight of its own side`);
        report.expect(!theirs.some(alive), `node ${i} still sees the other side alive`);
      }
    }
    cluster.topology.heal();
    const healedAt = cluster.nowMs;
    const merged = waitFor(cluster, () => cluster.converged(), 30_000);
    report.metric("mergedAfterMs", merged === undefined ? NaN : merged - healedAt);
    report.expect(merged !== undefined, "the sides never merged");
    return report.done();
  },
};

const restart: Scenario = {
  name: "restart",
  description: "a node crashes, is declared dead, restarts at its address and rejoins, outbidding",
  run(seed) {
    const report = new Report(this.name, seed);
    const cluster = settled(seed, 5, report);
    cluster.crash(3);
    cluster.runFor(detectionBoundMs(5));
    cluster.restart(3);
    const back = waitFor(cluster, () => cluster.converged(), 3_000);
    report.expect(back !== undefined, "the restarted node was not taken back");
    report.metric("incarnation", cluster.node(3)?.incarnation ?? 0);
    report.expect((cluster.node(3)?.incarnation ?? 0) > 0, "it rejoined without a new incarnation");
    return report.done();
  },
};

const leave: Scenario = {
  name: "leave",
  description: "one of 20 nodes leaves: within two periods all others know, with no suspicion",
  run(seed) {
    const report = new Report(this.name, seed);
    const cluster = settled(seed, 20, report);
    const key = Cluster.addressOf(7).toString();
    let suspected = false;
    cluster.onChange(({ change }: Observed) => {
      if (change.member.address.toString() !== key) return;
      if (change.member.state === "suspect" || change.member.state === "dead") suspected = true;
    });
    const leftAtMs = cluster.nowMs;
    cluster.leave(7);
    const others = [...Array(20).keys()].filter((i) => i !== 7);
    const knownAt = waitFor(
      cluster,
      () => others.every((i) => cluster.view(i).get(key) === "left"),
      2 * PERIOD_MS,
      10,
    );
    report.metric("knownByAllMs", (knownAt ?? NaN) - leftAtMs);
    report.expect(knownAt !== undefined, "not every node knew of the leave within two periods");
    cluster.runFor(10_000);
    report.expect(!suspected, "the node that left was suspected");
    return report.done();
  },
};

const lateJoin: Scenario = {
  name: "late-join",
  description: "a node joins 50 others: it knows them all within 3 periods, they know it soon",
  run(seed) {
    const report = new Report(this.name, seed);
    const cluster = settled(seed, 50, report);
    const startMs = cluster.nowMs;
    const newcomer = cluster.add({ seeds: [17] });
    const learned = waitFor(cluster, () => cluster.view(newcomer).size === 51, 3 * PERIOD_MS, 10);
    report.expect(learned !== undefined, "the newcomer did not learn the membership in 3 periods");
    const known = waitFor(cluster, () => cluster.converged(), 5_000, 10);
    report.metric("learnedMs", (learned ?? NaN) - startMs);
    report.metric("knownByAllMs", (known ?? NaN) - startMs);
    report.expect(known !== undefined, "the others did not all learn of the newcomer");
    return report.done();
  },
};

const flood: Scenario = {
  name: "flood",
  description: "a stranger announces 300 made-up members; every table stops at maxMembers (16)",
  run(seed) {
    const report = new Report(this.name, seed);
    const maxMembers = 16;
    const cluster = settled(seed, 5, report, { membership: { maxMembers } });
    const stranger = Address.parse("192.0.2.1:7946");
    const sender = { id: stranger.id, address: stranger, incarnation: 0 };
    for (let batch = 0; batch < 5; batch++) {
      const records: MemberRecord[] = [];
      for (let i = 0; i < 60; i++) {
        const address = Address.of(new Uint8Array([198, 51, batch, i]), 7946);
        records.push({ state: "alive", id: address.id, address, incarnation: 0 });
      }
      cluster.inject(0, stranger, encode({ type: "gossip", sender, records }));
    }
    cluster.runFor(5_000);
    for (let i = 0; i < 5; i++) {
      const members = cluster.node(i)!.members().length + 1;
      report.expect(members <= maxMembers, `node ${i} holds ${members} members`);
    }
    const stats = cluster.node(0)!.stats(cluster.nowMs);
    report.metric("membersRefused", stats.membersRefused);
    report.expect(stats.membersRefused > 0 && stats.membersFull, "node 0 refused nobody");
    return report.done();
  },
};

/** Every named scenario. */
export const SCENARIOS: readonly Scenario[] = [
  converge(5, 2_000),
  converge(50, 5_000),
  crash(5),
  crash(50),
  lossNoFalseDeaths,
  oneWay,
  duplicateDelay,
  pause,
  partition,
  restart,
  leave,
  lateJoin,
  flood,
];

/**
 * Runs the scenario called `name` from `seed`.
 *
 * @throws {RangeError} if there is no such scenario.
 *
 * @param name One of {@link SCENARIOS}' names.
 * @param seed The seed that decides the run.
 * @returns What it measured, and whether it passed.
 */
export function runScenario(name: string, seed: number): ScenarioResult {
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (!scenario) {
    throw new RangeError(
      `no scenario "${name}"; there are ${SCENARIOS.map((s) => s.name).join(", ")}`,
    );
  }
  return scenario.run(seed);
}
