import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Demand, DemandTotals } from "../../src/core/allocation/demand_totals.ts";
import { encodeReports, GroupReader } from "../../src/core/allocation/report.ts";

/** A reader at a group of origin `lo` naming key 1 (and key 2 when `both`). */
function group(lo: number, demand: number, both: boolean): GroupReader {
  const records = [{ hash: { hi: 0, lo: 1 }, demand }];
  if (both) records.push({ hash: { hi: 0, lo: 2 }, demand: 1 });
  const reader = new GroupReader(
    encodeReports([{ origin: { hi: 1, lo }, life: 1, round: 1, ageMs: 0, records }]),
  );
  reader.next();
  return reader;
}

/** `ownSum` as the walk from the first break for each report, in the total's order. */
function walked(
  made: ArrayLike<number>,
  n: number,
  breaks: ArrayLike<number>,
  ownAt: (ms: number) => number,
) {
  const segN = new Float64Array(breaks.length + 1);
  const segSum = new Float64Array(breaks.length + 1);
  for (let i = 0; i < n; i++) {
    let k = 0;
    while (k < breaks.length && !(breaks[k] <= made[i])) k++;
    segN[k]++;
    segSum[k] += made[i];
  }
  let sum = 0;
  for (let k = 0; k < segN.length; k++) {
    if (segN[k] > 0) sum += segN[k] * ownAt(segSum[k] / segN[k]);
  }
  return sum;
}

describe("a key's demand totals", () => {
  it("weigh own demand at the reports' times to the bit as the walk from the first break does", () => {
    let x = 11;
    // The high bits: the low ones of this generator repeat within a few draws.
    const next = (n: number) =>
      Math.floor(((x = (x * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * n);
    const totals = new DemandTotals();
    const held: Demand[][] = Array.from({ length: 40 }, () => []);
    const breaks = new Float64Array(8).fill(-Infinity);
    const ownAt = (ms: number) => 3 + Math.sin(ms / 13);
    for (let step = 0; step < 3_000; step++) {
      const nowMs = step * 7.3;
      // Mostly a round start put first, or the same breaks; now and then, for one sum, out of order.
      const what = next(10);
      if (what < 3) {
        breaks.copyWithin(1, 0, breaks.length - 1);
        breaks[0] = nowMs - 20; // Some reports are taken after it.
      }
      let used: Float64Array = breaks;
      if (what === 3) {
        used = breaks.slice();
        used[next(8)] = next(4) === 0 ? NaN : nowMs - next(200);
      }
      for (let j = 0; j < 4; j++) {
        const i = next(held.length);
        if (next(8) === 0) {
          totals.removeAll(held[i]);
          held[i] = [];
        } else {
          held[i] = totals.replace(
            held[i],
            group(i + 1, 1 + next(5), next(3) === 0),
            nowMs - next(300) / 3,
          );
        }
      }
      const total = totals.get(1);
      if (total === undefined) continue;
      const got = totals.ownSum(total, { ownAt, breaksMs: used }, nowMs - 100, 0);
      assert.equal(got, walked(total.madeAtMs, total.reports, used, ownAt), `step ${step}`);
    }
  });
});
