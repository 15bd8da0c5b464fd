import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HeldRows } from "../../src/core/allocation/held_rows.ts";

const report = (lo: number, round = 1) => ({
  originHi: 7,
  originLo: lo,
  life: 3,
  round,
  ageMs: 40,
  receivedMs: 1_000,
});

describe("the rows of the reports held", () => {
  it("finds each of thousands of origins by its low half, the first of a shared one", () => {
    const rows = new HeldRows();
    // Low halves above 2^31 too, which a Map would box.
    const lows = Array.from({ length: 3_000 }, (_, i) => (i * 0x9e37_79b9) >>> 0);
    lows.forEach((lo, place) => rows.index(lo, place));
    lows.forEach((lo, place) => assert.equal(rows.find(lo), place));
    assert.equal(rows.find(0x1234_5678), -1);
    rows.index(lows[5], 9_999);
    assert.equal(rows.find(lows[5]), 5, "the first indexed stays");
    rows.reindex([lows[2], lows[5]]);
    assert.equal(rows.find(lows[2]), 0);
    assert.equal(rows.find(lows[5]), 1);
    assert.equal(rows.find(lows[0]), -1);
  });

  it("tells a copy: the same life, no later round, while the report is believed", () => {
    const rows = new HeldRows();
    for (let place = 0; place < 100; place++) rows.set(place, report(place, 5));
    assert.equal(rows.hiAt(99), 7);
    assert.ok(rows.holdsNewer(99, { life: 3, round: 5 }, 1_000, 3_000));
    assert.ok(rows.holdsNewer(99, { life: 3, round: 4 }, 3_960, 3_000), "believed to the ms");
    assert.ok(!rows.holdsNewer(99, { life: 3, round: 4 }, 3_961, 3_000), "past belief");
    assert.ok(!rows.holdsNewer(99, { life: 3, round: 6 }, 1_000, 3_000), "a later round");
    assert.ok(!rows.holdsNewer(99, { life: 4, round: 1 }, 1_000, 3_000), "another life");
  });
});
