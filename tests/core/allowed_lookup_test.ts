// The allowed path's lookups (a first request, a debt of whole requests in
// one microsecond) against the arithmetic they stand in for: the same
// Decision, field for field, over many rates, debts, costs and instants.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../mod.ts";
import { allowedByArithmetic, allowedDecision, rateOf } from "../../src/core/gcra.ts";
import { Prng } from "../../src/core/prng.ts";
import { toUs } from "../../src/core/time.ts";
import { rig } from "./support.ts";

const PERIODS_MS = [1, 7, 1_000, 60_000, 3_600_000, 86_400_000];
const COUNTS = [1, 3, 7, 10, 999, 1_000, 123_457, 1_000_000, 4_000_000_000];

function randomRate(prng: Prng) {
  const count = COUNTS[prng.below(COUNTS.length)] * (1 + prng.below(5));
  const periodMs = PERIODS_MS[prng.below(PERIODS_MS.length)];
  const burst = prng.below(4) === 0 ? 1 + prng.below(1_000_000) : 1 + prng.below(100);
  // A share of the limit half the time: a fractional refill a microsecond.
  const scale = prng.below(2) === 0 ? 1 : Math.max(1e-6, prng.nextFloat());
  return rateOf(count, periodMs, burst, scale);
}

describe("the allowed path's lookups", () => {
  it("give what the arithmetic gives, for every debt of whole requests and others", () => {
    const prng = new Prng(13);
    let lookedUp = 0;
    for (let i = 0; i < 3_000; i++) {
      const rate = randomRate(prng);
      const nowUs = prng.below(2) === 0 ? prng.below(1_000) : prng.below(2 ** 31) * 4_096;
      const debts: number[] = [];
      for (let k = 1; k <= Math.min(rate.burst, 70); k++) debts.push(k * rate.unitsPerRequest);
      for (let j = 0; j < 20; j++) {
        debts.push(1 + Math.floor(prng.nextFloat() * rate.toleranceUnits));
      }
      for (const next of debts) {
        const got = allowedDecision(next, nowUs, rate, nowUs);
        assert.deepEqual(
          got,
          allowedByArithmetic(next, nowUs, rate, nowUs),
          `${next} of ${rate.unitsPerRequest}`,
        );
        if (next % rate.unitsPerRequest === 0 && next / rate.unitsPerRequest <= 64) {
          lookedUp++;
          // The one decision for this debt, kept by the rule and frozen.
          assert.equal(allowedDecision(next, nowUs + 5, rate, nowUs + 5), got);
          assert(Object.isFrozen(got));
        }
        // A debt as of an instant ahead (a blocked key) takes the arithmetic.
        const aheadUs = nowUs + 1 + prng.below(1_000_000);
        assert.deepEqual(
          allowedDecision(next, aheadUs, rate, nowUs),
          allowedByArithmetic(next, aheadUs, rate, nowUs),
        );
      }
    }
    assert(lookedUp > 50_000, `only ${lookedUp} debts of whole requests were tried`);
  });

  it("a first request's resetMs is one request's payback, as the arithmetic says", () => {
    const prng = new Prng(7);
    for (let i = 0; i < 2_000; i++) {
      const rate = randomRate(prng);
      const nowUs = prng.below(1_000_000_000);
      assert.deepEqual(
        allowedDecision(rate.unitsPerRequest, nowUs, rate, nowUs),
        allowedByArithmetic(rate.unitsPerRequest, nowUs, rate, nowUs),
      );
    }
  });

  it("a shared decision cannot be changed by the caller it was given to", () => {
    const { enforcer } = rig(Limit.perSecond(10).burst(5));
    const first = enforcer.check("", "k", 1, 0);
    const again = enforcer.check("", "other", 1, 0);
    assert.equal(first, again); // both owed nothing: the same decision
    assert.throws(() => {
      (first as { remaining: number }).remaining = 99;
    }, TypeError);
    assert.equal(enforcer.check("", "third", 1, 0).remaining, 4);
  });

  it("checks of one key, many to a microsecond, decide as the arithmetic does", () => {
    const prng = new Prng(42);
    let sameMicrosecond = 0;
    for (let round = 0; round < 60; round++) {
      const count = [10, 1_000, 250_000, 1_000_000, 100_000_000][round % 5] * (1 + prng.below(9));
      // A burst of at least a microsecond's worth: shorter ones are refused.
      const limit = Limit.perSecond(count).burst(Math.ceil(count / 1e6) + 1 + prng.below(50));
      const { enforcer } = rig(limit);
      let tMs = prng.below(1_000_000) / 7;
      let lastUs = -1;
      for (let i = 0; i < 400; i++) {
        // Mostly a few nanoseconds apart, as a hot key is; now and then later.
        tMs += prng.below(10) === 0 ? prng.nextFloat() * 5 : prng.nextFloat() * 0.0003;
        const cost = prng.below(8) === 0 ? 1 + prng.below(3) : 1;
        const d = enforcer.check("", "k", cost, tMs);
        const nowUs = toUs(tMs, 0);
        if (nowUs === lastUs) sameMicrosecond++;
        lastUs = nowUs;
        if (!d.allowed) continue;
        const slot = enforcer.table.get("", "k")!;
        assert.deepEqual(d, allowedByArithmetic(slot.debt, slot.atUs, slot.rule, nowUs));
      }
    }
    assert(sameMicrosecond > 5_000, `only ${sameMicrosecond} checks shared a microsecond`);
  });
});
