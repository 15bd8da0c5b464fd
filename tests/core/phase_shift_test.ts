import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Slot } from "../../src/core/keytable.ts";
import { Limit } from "../../src/core/limit.ts";
import { ruleOf } from "../../src/core/rule.ts";
import { phaseOf } from "../../src/core/allocation/phase.ts";

// 10 a second, burst 4: one request's interval is 100 ms.
const rule = ruleOf(Limit.perSecond(10).burst(4), undefined, false, 1);
const u = rule.unitsPerRequest;

describe("a slot's shift", () => {
  it("moves the next admission later as far as the burst allows, and no further", () => {
    const slot = new Slot("", "k", rule, 0);
    slot.debt = 3.5 * u; // room for half a request
    slot.atUs = 0;
    assert.equal(slot.shift(0.25, 0), 0.25);
    assert.equal(slot.shift(0.5, 0), 0.25, "only what is left under the burst");
    assert.equal(slot.owed(0), 4 * u);
  });

  it("moves it earlier, never to an empty debt, which would read as a bucket refilled", () => {
    const slot = new Slot("", "k", rule, 0);
    slot.debt = 0.3 * u;
    slot.atUs = 0;
    assert.ok(slot.shift(-0.5, 0) > -0.3);
    assert.equal(slot.owed(0), 1);
    const full = new Slot("", "k", rule, 0);
    assert.equal(full.shift(-0.5, 0), 0, "a full bucket has no grid to move");
  });

  it("leaves a blocked key as it is", () => {
    const slot = new Slot("", "k", rule, 0);
    slot.debt = rule.toleranceUnits;
    slot.atUs = 1_000_000;
    assert.equal(slot.shift(-0.5, 0), 0);
    assert.equal(slot.debt, rule.toleranceUnits);
  });
});

describe("phaseOf", () => {
  it("spreads nodes' offsets over half an interval either way, evenly", () => {
    const key = { hi: 0x1234, lo: 0x5678 };
    const offsets = Array.from(
      { length: 4_000 },
      (_, i) => phaseOf({ hi: i * 7, lo: i }, key).offset,
    );
    assert.ok(offsets.every((x) => x >= -0.5 && x < 0.5));
    // Each tenth of the interval holds about a tenth of the nodes.
    for (let b = 0; b < 10; b++) {
      const inBin = offsets.filter((x) => Math.floor((x + 0.5) * 10) === b).length;
      assert.ok(inBin > 320 && inBin < 480, `tenth ${b}: ${inBin} of 4000`);
    }
  });
});
