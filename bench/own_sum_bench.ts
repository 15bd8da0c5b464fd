// The cost of `DemandTotals.ownSum`, the walk that weighs this node's own
// demand at the times the reports held were made, as a thousand-node fleet
// asks it: 1000 reports naming one hot key, each replaced when its origin's
// next round arrives (origins a round of 200 ms apart, heard up to 1.5 s
// late through relays), this node's 64 round starts as the breaks, and a
// call every 50 virtual ms (the allocator's tick). It prints microseconds a
// call (the median call of each run, then the median of 9 runs), and a checksum of the sums, so
// that two versions of `ownSum` can be seen to give the same bits.
//
// With `--cold`, the caches are written over before each call, as the other
// nodes of a simulated fleet leave them.
//
//   node_modules/.bin/bun bench/own_sum_bench.ts [--reports 1000] [--calls 4000] [--cold]
import process from "node:process";
import { parseArgs } from "node:util";
import { DemandTotals } from "../src/core/allocation/demand_totals.ts";
import { encodeReports, GroupReader } from "../src/core/allocation/report.ts";

const PERIOD_MS = 200;
const TICK_MS = 50;
const ROUNDS_KEPT = 64;
const KEY = { hi: 0, lo: 1 };

/** The part of `DemandTotals` the bench drives, so that another version can be passed in. */
export interface Summing {
  replace: DemandTotals["replace"];
  get: DemandTotals["get"];
  ownSum: DemandTotals["ownSum"];
}

/** A seeded stream of numbers in [0, 1), the same in every runtime. */
function random(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

/** Memory written over between calls, with `--cold`, larger than the caches. */
const scrub = new Float64Array(4 << 20);

/**
 * Pushes the reports' times out of the caches, as the other nodes of a
 * simulated fleet do between two of one node's calls.
 */
function evict(): void {
  for (let i = 0; i < scrub.length; i += 8) scrub[i] += 1;
}

/**
 * Runs `calls` ticks against `totals` and returns the microseconds the
 * median call of `ownSum` took and the sum of its results; with `cold`,
 * each call finds the caches cold.
 */
export function ownSumRun(totals: Summing, reports: number, calls: number, cold = false): {
  us: number;
  checksum: number;
} {
  const next = random(7);
  // Fractional, as the simulator's jittered arrivals make them.
  const phase = Array.from({ length: reports }, () => next() * PERIOD_MS);
  const lag = Array.from({ length: reports }, () => next() * 1_500);
  const readers = Array.from({ length: reports }, (_, i) => {
    const bytes = encodeReports([{
      origin: { hi: 1, lo: i + 1 },
      life: 1,
      round: 1,
      ageMs: 0,
      records: [{ hash: KEY, demand: 1 + (i % 7) }],
    }]);
    const reader = new GroupReader(bytes);
    reader.next();
    return reader;
  });
  const held: ReturnType<DemandTotals["replace"]>[] = readers.map(() => []);
  const madeMs = new Float64Array(reports).fill(-1);
  const breaksMs = new Float64Array(ROUNDS_KEPT).fill(-Infinity);
  const ownAt = (ms: number) => 100 + Math.sin(ms / 997);
  const own = { ownAt, breaksMs };
  const callUs = new Float64Array(calls);
  let checksum = 0;
  // Starts late enough that every origin has a report held and the breaks are all times.
  const startMs = 20_000;
  for (let c = 0; c < calls; c++) {
    const nowMs = startMs + c * TICK_MS + 3;
    if (Math.floor(nowMs / PERIOD_MS) !== Math.floor((nowMs - TICK_MS) / PERIOD_MS)) {
      breaksMs.copyWithin(1, 0, ROUNDS_KEPT - 1);
      breaksMs[0] = nowMs;
    }
    for (let i = 0; i < reports; i++) {
      // The origin's latest round that has reached this node by now.
      const latest = Math.floor((nowMs - lag[i] - phase[i]) / PERIOD_MS) * PERIOD_MS + phase[i];
      if (latest !== madeMs[i]) {
        madeMs[i] = latest;
        held[i] = totals.replace(held[i], readers[i], latest);
      }
    }
    const total = totals.get(1)!;
    if (cold) evict();
    const t0 = performance.now();
    checksum += totals.ownSum(total, own, nowMs - 3_000, 0);
    callUs[c] = (performance.now() - t0) * 1_000;
  }
  // The median call: a shared machine's preemptions fall on a few calls and leave it be.
  return { us: callUs.sort()[calls >> 1], checksum };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      reports: { type: "string", default: "1000" },
      calls: { type: "string", default: "4000" },
      cold: { type: "boolean", default: false },
    },
  });
  const reports = Number(values.reports);
  const calls = Number(values.calls);
  ownSumRun(new DemandTotals(), reports, calls, values.cold); // warm-up
  const us: number[] = [];
  let checksum = 0;
  for (let r = 0; r < 9; r++) {
    const got = ownSumRun(new DemandTotals(), reports, calls, values.cold);
    us.push(got.us);
    checksum = got.checksum;
  }
  us.sort((a, b) => a - b);
  console.log(
    `ownSum over ${reports} reports: ${us[4].toFixed(2)} us a call (median of 9, ` +
      `${us[0].toFixed(2)} to ${us[8].toFixed(2)}), checksum ${checksum}`,
  );
}
