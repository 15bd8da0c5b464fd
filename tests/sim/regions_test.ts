import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Prng } from "../../src/core/prng.ts";
import { Limit } from "../../src/core/limit.ts";
import { deliveryDelays, symmetricRegions, Topology } from "../../src/sim/driver/network.ts";
import { REGION_DELAYS_MS, threeRegions } from "../../src/sim/accuracy/regions.ts";
import { Fleet } from "../../src/sim/faces/fleet.ts";

const LIMIT = Limit.perSecond(1_000).burst(50);

describe("the simulator's regions", () => {
  it("delays a datagram by its link's delay and jitter, and loses it to its link's loss", () => {
    const regions = threeRegions(9); // nodes 0–2 in A, 3–5 in B, 6–8 in C
    const prng = new Prng(1);
    const sample = (from: number, to: number) => {
      let lost = 0;
      const delays: number[] = [];
      for (let i = 0; i < 20_000; i++) {
        const d = deliveryDelays({ regions }, prng, from, to);
        if (d.length === 0) lost++;
        delays.push(...d);
      }
      return { lost: lost / 20_000, min: Math.min(...delays), max: Math.max(...delays) };
    };
    const inside = sample(0, 1);
    assert.equal(inside.lost, 0);
    assert.ok(inside.min >= 0.5 && inside.max < 1, `inside A: ${inside.min} to ${inside.max} ms`);
    const bc = sample(4, 7);
    assert.ok(bc.min >= 75 && bc.max <= 75 * 1.1, `B to C: ${bc.min} to ${bc.max} ms`);
    assert.ok(Math.abs(bc.lost - 0.01) < 0.003, `B to C lost ${bc.lost}`);
    const ca = sample(8, 2);
    assert.ok(ca.min >= 40 && ca.max <= 44, `C to A: ${ca.min} to ${ca.max} ms`);
  });

  it("makes its links the same both ways", () => {
    const regions = symmetricRegions(() => 0, REGION_DELAYS_MS, { lossRate: 0.01 });
    for (let a = 0; a < 3; a++) {
      for (let b = 0; b < 3; b++) {
        assert.deepEqual(regions.links[a][b], regions.links[b][a]);
        assert.equal(regions.links[a][b].lossRate, a === b ? 0 : 0.01);
      }
    }
    assert.equal(regions.links[1][2].delayMs, 75);
  });

  it("draws as before without regions, so that tables without them do not move", () => {
    const a = new Prng(7);
    const b = new Prng(7);
    const faults = { lossRate: 0.1, jitterMs: 1 };
    for (let i = 0; i < 1_000; i++) {
      assert.deepEqual(deliveryDelays(faults, a, 3, 4), deliveryDelays(faults, b));
    }
  });

  it("cuts a side off both ways, nodes added later included, until healed", () => {
    const topology = new Topology();
    topology.cutOff((i) => i >= 6);
    assert.equal(topology.connected(0, 1), true);
    assert.equal(topology.connected(6, 7), true);
    assert.equal(topology.connected(0, 7), false);
    assert.equal(topology.connected(7, 0), false);
    assert.equal(topology.connected(100, 2), false);
    topology.heal();
    assert.equal(topology.connected(0, 7), true);
  });
});

describe("false deaths in a fleet run", () => {
  it("counts a cut-off member's deaths, pair by pair, and no crashed member's", () => {
    const fleet = new Fleet({ seed: 1, size: 5, limit: LIMIT });
    fleet.runUntil(5_000);
    fleet.crash(3);
    fleet.runUntil(20_000);
    assert.equal(fleet.falseDeaths(), 0, "a crash is a true death");
    fleet.topology.cutOff((i) => i === 4);
    fleet.runUntil(40_000);
    // Nodes 0–2 declare node 4 dead, and node 4 declares them dead.
    assert.equal(fleet.falseDeaths(), 6);
  });

  it("counts no death of an earlier life as false", () => {
    const fleet = new Fleet({ seed: 1, size: 5, limit: LIMIT });
    fleet.runUntil(5_000);
    fleet.crash(2);
    fleet.runUntil(8_000);
    fleet.restart(2);
    fleet.runUntil(30_000);
    assert.equal(fleet.falseDeaths(), 0);
  });

  it("sees none in three regions, 1% loss between them, at 20 nodes", () => {
    const fleet = new Fleet({
      seed: 1,
      size: 20,
      limit: LIMIT,
      faults: { regions: threeRegions(20) },
    });
    fleet.runUntil(40_000);
    assert.equal(fleet.falseDeaths(), 0);
  });
});
