// The time base: decisions after months and years of uptime are the
// decisions of a process that has just started, at every rate a Limit
// accepts, and a Limit the base cannot hold is refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Limit, MAX_BURST } from "../../mod.ts";
import { MAX_COUNT } from "../../src/core/limit.ts";
import { rateLimitItem } from "../../src/http/fields.ts";
import { rig } from "./support.ts";

const DAY_MS = 86_400_000;
/** The clock readings under test: a fresh process, a month, a year, ten years up. */
export const UPTIMES_MS = [0, 30 * DAY_MS, 365 * DAY_MS, 3_652 * DAY_MS];

/** `n` checks of one key at one instant; how many were admitted. */
function burstAt(enforcer: ReturnType<typeof rig>["enforcer"], atMs: number, n: number): number {
  let admitted = 0;
  for (let i = 0; i < n; i++) if (enforcer.check("", "k", 1, atMs).allowed) admitted++;
  return admitted;
}

describe("time after months and years of uptime", () => {
  it("3/s with its burst spent says t=1 after 180 days, as at start", () => {
    for (const t0 of [0, 180 * DAY_MS]) {
      const { enforcer } = rig(Limit.perSecond(3).burst(3));
      let last;
      for (let i = 0; i < 3; i++) last = enforcer.check("", "k", 1, t0);
      assert.equal(rateLimitItem("default", last!), '"default";r=0;t=1', `at ${t0} ms`);
    }
  });

  it("1e9/s with a burst of 10 is refused, and 10,000 checks at one instant admit the burst", () => {
    assert.throws(() => Limit.perSecond(1e9).burst(10), {
      name: "RangeError",
      message: /at most 10000000 a second with a burst of 10/,
    });
    for (const t0 of UPTIMES_MS) {
      // The fastest rate a burst of 10 allows: ten a microsecond.
      const { enforcer } = rig(Limit.perSecond(10_000_000).burst(10));
      assert.equal(burstAt(enforcer, t0, 10_000), 10, `at ${t0} ms`);
    }
  });

  it("refuses every Limit whose burst is shorter than a microsecond, naming the bound", () => {
    assert.doesNotThrow(() => Limit.perSecond(1_000_001), "its default burst of 50,000 holds it");
    assert.doesNotThrow(() => Limit.perSecond(MAX_COUNT));
    assert.throws(() => Limit.perSecond(1_000_001).burst(1), {
      name: "RangeError",
      message: /at most 1000000 a second with a burst of 1\b/,
    });
    assert.throws(() => Limit.perMinute(60_000_001).burst(1), { name: "RangeError" });
    assert.doesNotThrow(() => Limit.perMinute(60_000_000).burst(1));
    assert.throws(() => Limit.perSecond(MAX_COUNT).burst(4_294), { name: "RangeError" });
    assert.doesNotThrow(() => Limit.perSecond(MAX_COUNT).burst(4_295));
  });

  it("a share of a limit is never early: waiting retryAfterMs or resetMs is enough", () => {
    for (const limit of [Limit.perSecond(3).burst(3), Limit.perHour(1), Limit.perSecond(999_983)]) {
      for (const scale of [0.3, 0.05 / 7, 0.999]) {
        for (const t0 of UPTIMES_MS) {
          const { book, enforcer } = rig(limit);
          book.setScale(scale);
          const burst = limit.burstSize();
          for (let i = 0; i < burst; i++) assert(enforcer.check("", "k", 1, t0).allowed);
          const denied = enforcer.check("", "k", 1, t0);
          assert.equal(denied.allowed, false);
          const what = `${limit} at ${scale} from ${t0} ms`;
          // Whole microseconds, at most one more than the fewest.
          for (const ms of [denied.retryAfterMs, denied.resetMs]) {
            assert(ms > 0 && Math.abs(ms * 1_000 - Math.round(ms * 1_000)) < 1e-6, what);
          }
          assert.equal(
            enforcer.peek("", "k", t0 + denied.retryAfterMs - 0.002).allowed,
            false,
            what,
          );
          assert.equal(enforcer.peek("", "k", t0 + denied.retryAfterMs).allowed, true, what);
          const full = enforcer.peek("", "k", t0 + denied.resetMs);
          assert.equal(full.remaining, burst - 1, what);
        }
      }
    }
  });

  for (const t0 of UPTIMES_MS) {
    describe(`with the clock at ${t0 / DAY_MS} days`, () => {
      it("one an hour: one admitted, then exactly an hour to wait", () => {
        const { enforcer } = rig(Limit.perHour(1).burst(1));
        const first = enforcer.check("", "k", 1, t0);
        assert.deepEqual([first.allowed, first.remaining, first.resetMs], [true, 0, 3_600_000]);
        const denied = enforcer.check("", "k", 1, t0 + 1);
        assert.deepEqual(
          [denied.allowed, denied.remaining, denied.retryAfterMs, denied.resetMs],
          [false, 0, 3_599_999, 3_599_999],
        );
        assert.equal(enforcer.check("", "k", 1, t0 + 3_599_999.999).allowed, false);
        assert.equal(enforcer.check("", "k", 1, t0 + 3_600_000).allowed, true);
      });

      it("three a second, burst 3: the burst, then a third of a second each", () => {
        const { enforcer } = rig(Limit.perSecond(3).burst(3));
        const seen = [0, 1, 2, 3].map(() => enforcer.check("", "k", 1, t0));
        assert.deepEqual(seen.map((d) => d.allowed), [true, true, true, false]);
        assert.deepEqual(seen.map((d) => d.remaining), [2, 1, 0, 0]);
        // Durations are whole microseconds, rounded up: a third of a second
        // is 333,334 µs, three thirds exactly one second.
        assert.deepEqual(seen.map((d) => d.resetMs), [333.334, 666.667, 1_000, 1_000]);
        assert.equal(seen[3].retryAfterMs, 333.334);
        assert.equal(enforcer.check("", "k", 1, t0 + 333.333).allowed, false);
        const next = enforcer.check("", "k", 1, t0 + 333.334);
        assert.deepEqual([next.allowed, next.remaining], [true, 0]);
        // Over the next ten seconds at 1000 a second: 30 admitted, no drift.
        let admitted = 0;
        for (let i = 1; i <= 10_000; i++) {
          if (enforcer.check("", "k", 1, t0 + 333.334 + i).allowed) admitted++;
        }
        assert.equal(admitted, 30);
      });

      it("a million a second, burst 1: one a microsecond", () => {
        const { enforcer } = rig(Limit.perSecond(1_000_000).burst(1));
        assert.equal(burstAt(enforcer, t0, 10_000), 1);
        const denied = enforcer.check("", "k", 1, t0);
        assert.deepEqual([denied.retryAfterMs, denied.resetMs, denied.remaining], [
          0.001,
          0.001,
          0,
        ]);
        let admitted = 0;
        for (let us = 1; us <= 1_000; us++) admitted += burstAt(enforcer, t0 + us / 1_000, 10);
        assert.equal(admitted, 1_000);
      });

      it(`the fastest rate: ${MAX_COUNT} a second with the least burst it allows`, () => {
        const { enforcer } = rig(Limit.perSecond(MAX_COUNT).burst(4_295));
        assert.equal(burstAt(enforcer, t0, 10_000), 4_295);
        const denied = enforcer.check("", "k", 1, t0);
        assert.deepEqual([denied.allowed, denied.retryAfterMs, denied.remaining], [
          false,
          0.001,
          0,
        ]);
        // A microsecond pays back 4294.967295 requests: 4294 fit.
        assert.equal(burstAt(enforcer, t0 + 0.001, 10_000), 4_294);
        const full = rig(Limit.perSecond(MAX_COUNT).burst(MAX_BURST)).enforcer;
        assert.equal(burstAt(full, t0, 10_000), 10_000);
        assert.equal(full.check("", "k", 1, t0).remaining, MAX_BURST - 10_001);
      });
    });
  }
});
