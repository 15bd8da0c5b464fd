import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { addressOf, Fleet } from "../../src/sim/faces/fleet.ts";
import { SCENARIOS_5 } from "../../src/sim/accuracy/five.ts";
import { R, run, type Scenario } from "../../src/sim/accuracy/run.ts";
import { Limit } from "../../src/core/limit.ts";

const SKEWED: Scenario = { ...SCENARIOS_5.find((s) => s.id === "skewed")!, endMs: 30_000 };
const LIMIT = Limit.perSecond(R).burst(50);

describe("allocation under clock drift", () => {
  it("a fleet whose clocks drift up to ±5% admits R within the drift, and the drift shows", () => {
    const drift = 0.05;
    const steady = [1, 2, 3, 4].map((seed) => run({ ...SKEWED, clockDrift: drift }, seed).steady);
    const shown = steady.map((x) => x.toFixed(4)).join(" ");
    assert.ok(steady.every((x) => x >= 1 - drift - 0.02 && x <= 1 + drift), `steady ${shown}`);
    // Each node keeps its share in its own time: with clocks this far apart
    // some run lands visibly off R, where a fleet without drift stays on it.
    assert.ok(steady.some((x) => Math.abs(x - 1) > 0.01), `no run moved off R: ${shown}`);
    const still = run(SKEWED, 1).steady;
    assert.ok(Math.abs(still - 1) < 0.005, `without drift: ${still}`);
  });

  it("replays exactly from its seed", () => {
    const perSecond = (seed: number) => run({ ...SKEWED, clockDrift: 0.02 }, seed).perSecond;
    assert.deepEqual(perSecond(7), perSecond(7));
    assert.notDeepEqual(perSecond(7), perSecond(8));
  });
});

describe("a fleet on the simulator's driver", () => {
  it("queues a paused node's requests and serves them when the pause ends", () => {
    const fleet = new Fleet({ seed: 2, size: 3, limit: LIMIT });
    fleet.runUntil(5_000);
    fleet.setDemand(1, 100);
    fleet.runUntil(6_000);
    fleet.take(1);
    fleet.pause(1, 2_000); // until 8 s
    fleet.runUntil(7_999);
    const during = fleet.take(1);
    assert.equal(during.admitted + during.denied, 0, "a paused node decides nothing");
    fleet.runUntil(8_000);
    const after = fleet.take(1);
    // The 200 requests of the pause, all at once when it ends (one may fall either side).
    const served = after.admitted + after.denied;
    assert.ok(served >= 199 && served <= 201, `served ${served} at the end of the pause`);
  });

  it("refuses to restart a running node, and names a node it never had", () => {
    const fleet = new Fleet({ seed: 1, size: 2, limit: LIMIT });
    assert.throws(() => fleet.restart(1), /node 1 is running/);
    assert.throws(() => fleet.setDemand(9, 10), RangeError);
    assert.throws(
      () => new Fleet({ seed: 1, size: 1, limit: LIMIT, clockDrift: 0.5 }),
      /clockDrift/,
    );
  });

  it("gives nodes past the 255th addresses of their own", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) seen.add(addressOf(i).toString());
    assert.equal(seen.size, 600);
    assert.equal(addressOf(255).toString(), "10.0.1.0:7946");
  });
});
