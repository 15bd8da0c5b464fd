import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet, KEY } from "../../src/sim/faces/fleet.ts";
import { R } from "../../src/sim/accuracy/run.ts";
import { Limit } from "../../src/core/limit.ts";

describe("readers see the rule the request path uses", () => {
  it("share stays a hot key's share after a membership change, until the next check and after it", () => {
    const fleet = new Fleet({ seed: 3, size: 4, limit: Limit.perSecond(R).burst(50) });
    fleet.setDemand(3, 900);
    fleet.runUntil(10_000);
    const hot = fleet.share(3, KEY);
    assert.ok(hot > 900, `hot, node 3 takes nearly all: ${hot}`);
    // Node 3 goes quiet (no check refreshes its rule), and a fifth member joins.
    fleet.setDemand(3, 0);
    fleet.add();
    fleet.runUntil(12_000);
    assert.equal(fleet.stats(3)!.countedSize, 5);
    assert.equal(fleet.stats(3)!.hotKeys, 1, "still hot, within its cooldown");
    // Its demand has sunk, and the spare part of the limit goes evenly: its
    // hot share is lower now, and still far above the cold one.
    const read = fleet.share(3, KEY);
    const hotShare = fleet.hotKeys(3)![0].members[0].share;
    const cold = (R * 0.5) / 5;
    assert.ok(
      read === hotShare && read > 2 * cold,
      `a reader sees the hot share ${hotShare}, not the cold ${cold}: ${read}`,
    );
  });
});

describe("a fleet whose instances each see a few requests a second", () => {
  // Each request lifts an instance's smoothed demand by a step (1 a second at
  // the default time constant) that sinks until the next: at 2 requests a
  // second the figure swings between about 1.5 and 2.5. Each instance took
  // the lower of it and its figure as of its peers' reports, so the low side
  // of the swing, and 20 instances shared 0.95 of their limit (1000, 0.94).
  it("shares the whole limit, not the low side of each instance's swing", () => {
    const n = 20;
    const fleet = new Fleet({ seed: 5, size: n, limit: Limit.perSecond(n).burst(50) });
    for (let i = 0; i < n; i++) fleet.setDemand(i, 2);
    // Each instance is offered twice its share: its burst is spent by 55 s.
    fleet.runUntil(90_000);
    for (let i = 0; i < n; i++) fleet.take(i);
    fleet.runUntil(120_000);
    let admitted = 0;
    for (let i = 0; i < n; i++) admitted += fleet.take(i).admitted;
    const ofLimit = admitted / 30 / n;
    assert.ok(ofLimit >= 0.98 && ofLimit <= 1.02, `admitted ${ofLimit.toFixed(3)} of the limit`);
  });
});

describe("a key offered less than its limit", () => {
  // Split by demand alone, the part of the limit nobody asks for went to
  // whoever asked most: a node offered 100 of a key no other node asks more
  // than 10 of took 73% of the limit, and when the key's demand rose
  // everywhere at once it spent that until its peers' reports caught up.
  it("gives each node its demand and an even part of what is left", () => {
    const n = 5;
    const fleet = new Fleet({ seed: 2, size: n, limit: Limit.perSecond(R).burst(50) });
    fleet.setDemand(0, 100);
    for (let i = 1; i < n; i++) fleet.setDemand(i, 10);
    fleet.runUntil(20_000);
    const shares = Array.from({ length: n }, (_, i) => fleet.share(i, KEY));
    const sum = shares.reduce((a, b) => a + b, 0);
    // The floor R·β/N = 10, the demand 100, a fifth of the 810 left: 272.
    assert.ok(Math.abs(shares[0] - 272) < 15, `node 0: ${shares[0].toFixed(1)}`);
    for (let i = 1; i < n; i++) {
      assert.ok(Math.abs(shares[i] - 182) < 15, `node ${i}: ${shares[i].toFixed(1)}`);
    }
    assert.ok(Math.abs(sum - R) < 0.02 * R, `the shares add up to ${sum.toFixed(1)}`);
  });
});
