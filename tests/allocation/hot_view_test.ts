import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet, KEY } from "../../src/sim/faces/fleet.ts";
import { Limit } from "../../src/core/limit.ts";

const LIMIT = Limit.perSecond(1_000).burst(50);

function viewOf(f: Fleet, index: number) {
  const views = f.hotKeys(index) ?? [];
  const v = views.find((h) => h.key === KEY);
  assert.ok(v, `node ${index} has ${KEY} hot: ${JSON.stringify(views)}`);
  return v;
}

describe("the hot-key view of allocation", () => {
  it("shows every member's demand and a share each, summing to the limit, following demand", () => {
    const f = new Fleet({ seed: 7, size: 3, limit: LIMIT });
    [100, 300, 900].forEach((perSec, i) => f.setDemand(i, perSec));
    f.runUntil(15_000);
    for (const index of [0, 1, 2]) {
      const v = viewOf(f, index);
      assert.equal(v.className, "");
      assert.equal(v.limitPerSec, 1_000);
      assert.equal(v.members.length, 3, JSON.stringify(v));
      assert.equal(new Set(v.members.map((m) => m.id)).size, 3, "one row per member");
      const sum = v.members.reduce((s, m) => s + m.share, 0);
      assert.ok(Math.abs(sum - 1_000) < 1, `node ${index}: shares sum to ${sum}`);
      // Its own share is the one it applies.
      assert.ok(Math.abs(v.members[0].share - f.share(index, KEY)) < 1e-9);
      // Shares follow demand: the busier member gets more.
      const byDemand = [...v.members].sort((a, b) => a.demand - b.demand);
      assert.ok(byDemand[0].share < byDemand[1].share && byDemand[1].share < byDemand[2].share);
    }
  });

  it("drops a member that crashed once it no longer counts", () => {
    const f = new Fleet({ seed: 8, size: 3, limit: LIMIT });
    [0, 1, 2].forEach((i) => f.setDemand(i, 600));
    f.runUntil(10_000);
    assert.equal(viewOf(f, 0).members.length, 3);
    f.crash(2);
    f.runUntil(60_000);
    const v = viewOf(f, 0);
    assert.equal(v.members.length, 2, JSON.stringify(v));
    const sum = v.members.reduce((s, m) => s + m.share, 0);
    assert.ok(Math.abs(sum - 1_000) < 1, `shares sum to ${sum}`);
  });
});
