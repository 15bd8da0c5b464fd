import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet, KEY } from "../../src/sim/faces/fleet.ts";
import { SCENARIOS_5 } from "../../src/sim/accuracy/five.ts";
import { R, run, type Scenario } from "../../src/sim/accuracy/run.ts";
import { Limit } from "../../src/core/limit.ts";
import { PartitionPolicy } from "../../src/core/partition.ts";

const LIMIT = Limit.perSecond(R).burst(50);
const SEEDS = [11, 23, 37];
const scenario = (id: string): Scenario => SCENARIOS_5.find((s) => s.id === id)!;
const replay = (id: string, seed: number) =>
  `replay: deno task accuracy --scenario ${id} --seed ${seed}`;

describe("shares in a healthy cluster", () => {
  for (const id of ["even", "skewed", "one-of-five", "loss"]) {
    it(`${id}: steady between R(1 - ε) and R, never over R plus the bursts (seeds ${SEEDS})`, () => {
      for (const seed of SEEDS) {
        const s = { ...scenario(id), endMs: 25_000 };
        const o = run(s, seed);
        const floor = id === "one-of-five" ? 0.955 : 0.98;
        assert.ok(
          o.steady >= floor && o.steady <= 1.005,
          `steady ${o.steady}; ${replay(id, seed)}`,
        );
        assert.ok(o.peak <= 1 + (5 * 50) / R, `peak ${o.peak}; ${replay(id, seed)}`);
      }
    });
  }
});

describe("shares under partitions stay within their policy's bound", () => {
  const cases: Array<[string, number]> = [
    ["split-optimistic", 2.0],
    ["split-holddown-60000ms", 1.01],
    ["split-quorum", 1.03],
  ];
  for (const [id, bound] of cases) {
    it(`${id}: at most ${bound} R in every second`, () => {
      for (const seed of SEEDS.slice(0, 2)) {
        const o = run(scenario(id), seed);
        assert.ok(o.peak <= bound, `peak ${o.peak}; ${replay(id, seed)}`);
      }
    });
  }
});

describe("a fleet node's view", () => {
  it("holds while joining and learning, then shares; cold keys run at α R / N", () => {
    const fleet = new Fleet({ seed: 5, size: 5, limit: LIMIT });
    fleet.runUntil(1);
    const first = fleet.stats(3)!;
    assert.equal(first.joining, true);
    assert.equal(first.held, true);
    fleet.runUntil(5_000);
    const s = fleet.stats(3)!;
    assert.deepEqual([s.clusterSize, s.countedSize, s.joining, s.learning, s.held], [
      5,
      5,
      false,
      false,
      false,
    ]);
    assert.ok(s.sinceLastRoundMs <= 200);
    assert.equal(s.hotKeys, 0);
    // A key no one has asked for yet: the cold share, R × α / N.
    assert.equal(fleet.share(3, "never-seen"), (R * 0.5) / 5);
    fleet.setDemand(3, 900);
    fleet.runUntil(10_000);
    assert.equal(fleet.stats(3)!.hotKeys, 1);
    assert.ok(fleet.share(3, KEY) > 900, `hot, it takes nearly all: ${fleet.share(3, KEY)}`);
  });

  it("a restarted node gets no fresh quota: it is held at the floor until its peers hear it", () => {
    const fleet = new Fleet({ seed: 6, size: 5, limit: LIMIT });
    for (let i = 0; i < 5; i++) fleet.setDemand(i, 400);
    fleet.runUntil(15_000);
    fleet.crash(2);
    fleet.restart(2);
    fleet.runUntil(15_001);
    assert.equal(fleet.stats(2)!.held, true);
    assert.ok(fleet.share(2, KEY) <= (R * 0.05) / 1, `floor while joining: ${fleet.share(2, KEY)}`);
    fleet.take(2);
    fleet.runUntil(15_200);
    assert.ok(fleet.take(2).admitted <= 1 + 10, "no burst on a fresh start");
  });

  it("a leave gives its share away at once; a crash after the suspicion and the hold", () => {
    const fleet = new Fleet({
      seed: 7,
      size: 5,
      limit: LIMIT,
      policy: PartitionPolicy.holdDown(10_000),
    });
    fleet.runUntil(5_000);
    fleet.leave(4);
    fleet.runUntil(5_600);
    assert.equal(fleet.stats(0)!.countedSize, 4);
    fleet.crash(3);
    fleet.runUntil(9_000);
    assert.equal(fleet.stats(0)!.countedSize, 4, "held: suspected or dead, within the hold");
    fleet.runUntil(30_000);
    assert.equal(fleet.stats(0)!.countedSize, 3);
  });

  it("without a majority in sight, Quorum holds every key at the floor", () => {
    const fleet = new Fleet({ seed: 8, size: 5, limit: LIMIT, policy: PartitionPolicy.quorum() });
    fleet.runUntil(5_000);
    fleet.topology.partition([[0, 1, 2], [3, 4]]);
    fleet.runUntil(15_000);
    const minority = fleet.stats(4)!;
    assert.deepEqual([minority.withoutQuorum, minority.held, minority.countedSize], [
      true,
      true,
      5,
    ]);
    assert.equal(fleet.share(4, "k"), (R * 0.05) / 5);
    assert.equal(fleet.stats(0)!.withoutQuorum, false);
    fleet.topology.heal();
    fleet.runUntil(30_000);
    assert.equal(fleet.stats(4)!.withoutQuorum, false);
  });
});
