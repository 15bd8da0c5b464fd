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
