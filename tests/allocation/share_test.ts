import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet, KEY } from "../../src/sim/fleet.ts";
import { R } from "../../src/sim/accuracy.ts";
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
    const read = fleet.share(3, KEY);
    assert.ok(read > 900, `a reader sees the hot share, not the cold ${(R * 0.5) / 5}: ${read}`);
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
