import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet } from "../../src/sim/faces/fleet.ts";
import { LIMIT, R } from "../../src/sim/accuracy/run.ts";

// A fleet of 50 offered 2 R that a hundred join at once, the same 2 R then
// spread over all 150 (the row scale-up-50 of the accuracy table): past ten
// instances the burst is shared, and each newcomer runs at R/N while it
// learns, whatever its demand.
const OLD = 50;

/** From a second after the hundred joined, what the fleet admits in each next second, in R. */
function joined(): () => number {
  const fleet = new Fleet({ seed: 1, size: OLD, limit: LIMIT });
  fleet.runUntil(5_000);
  for (let i = 0; i < OLD; i++) fleet.setDemand(i, (2 * R) / OLD);
  fleet.runUntil(20_000);
  const after = (2 * R) / (OLD + 100);
  for (let i = 0; i < OLD; i++) fleet.setDemand(i, after);
  for (let k = 0; k < 100; k++) fleet.setDemand(fleet.add(), after);
  fleet.runUntil(21_000);
  for (let i = 0; i < fleet.size; i++) fleet.take(i);
  return () => {
    fleet.runUntil(fleet.nowMs + 1_000);
    let admitted = 0;
    for (let i = 0; i < fleet.size; i++) admitted += fleet.take(i).admitted;
    return admitted / R;
  };
}

describe("a hundred joining at once (shared burst)", () => {
  it("the old members leave the newcomers R/N while they learn: no second after the first over R", () => {
    // Summed at their demand, which rises from nothing in their first
    // reports, the newcomers left the old members their whole shares while
    // each took R/N: the fleet admitted 1.19 R in the second second after
    // the join (1.33 R in the first, while the old members had not all
    // heard of the newcomers yet). No second after it above R by more
    // than 2%, nor below it by more than 10%: the old members, whose demand
    // falls to a third, weigh their own figure against their peers' older
    // ones, the strict side, and the fleet admits 0.94 R for two seconds
    // before the newcomers leave R/N for their split.
    const second = joined();
    const seconds = [second(), second(), second(), second()];
    const shown = seconds.map((x) => x.toFixed(3)).join(" ");
    assert.ok(seconds.every((x) => x <= 1.02 && x >= 0.9), shown);
  });
});
