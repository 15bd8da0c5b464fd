import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../mod.ts";
import { offer, rig } from "./support.ts";

describe("GCRA on virtual time", () => {
  it("admits exactly the burst back to back, then tells when to retry", () => {
    const { enforcer } = rig(Limit.perSecond(10).burst(3));
    const seen = [1, 2, 3, 4].map(() => enforcer.check("", "k", 1, 1_000));
    assert.deepEqual(seen.map((d) => d.allowed), [true, true, true, false]);
    assert.deepEqual(seen.map((d) => d.remaining), [2, 1, 0, 0]);
    assert.deepEqual(seen.slice(0, 3).map((d) => d.resetMs), [100, 200, 300]);
    assert.equal(seen[0].retryAfterMs, 0);
    assert.equal(seen[3].retryAfterMs, 100);
    assert.equal(seen[3].resetMs, 300);
    assert.equal(enforcer.check("", "k", 1, 1_099.999).allowed, false);
    assert.equal(enforcer.check("", "k", 1, 1_100).allowed, true);
  });

  it("holds the steady rate exactly over a long run", () => {
    const r = rig(Limit.perSecond(3).burst(2));
    // Probing every millisecond over [0, 1000 s): the burst of 2 at 0, then
    // one at each third of a second from 1/3 s on, the last at 999.67 s.
    // Exact: no drift in 3000 admissions at a fractional interval.
    assert.equal(offer(r, "k", { perSec: 1_000, seconds: 1_000 }), 2 + 2_999);
  });

  it("holds one an hour at one an hour", () => {
    const { enforcer } = rig(Limit.perHour(1));
    const hour = 3_600_000;
    let admitted = 0;
    for (let t = 0; t < 10 * hour; t += 60_000) {
      if (enforcer.check("", "k", 1, t).allowed) admitted++;
    }
    assert.equal(admitted, 10);
    assert.equal(enforcer.check("", "slow", 1, 0).allowed, true);
    const denied = enforcer.check("", "slow", 1, 1);
    assert.equal(denied.retryAfterMs, hour - 1);
  });

  it("charges a cost, and never admits a cost above the burst", () => {
    const { enforcer } = rig(Limit.perSecond(10).burst(5));
    assert.equal(enforcer.check("", "k", 3, 0).remaining, 2);
    const d = enforcer.check("", "k", 3, 0);
    assert.equal(d.allowed, false);
    assert.equal(d.remaining, 2);
    assert.equal(d.retryAfterMs, 100);
    const never = enforcer.check("", "other", 6, 0);
    assert.equal(never.allowed, false);
    assert.equal(never.retryAfterMs, Infinity);
  });

  it("peek tells what the next check would say, consuming and counting nothing", () => {
    const { enforcer } = rig(Limit.perSecond(10).burst(2));
    assert.deepEqual(enforcer.peek("", "k", 0), enforcer.peek("", "k", 0));
    assert.equal(enforcer.table.size, 0, "peek creates no state");
    enforcer.check("", "k", 1, 0);
    enforcer.check("", "k", 1, 0);
    const p = enforcer.peek("", "k", 0);
    assert.equal(p.allowed, false);
    assert.equal(p.retryAfterMs, 100);
    assert.equal(enforcer.counters.admitted, 2);
    assert.equal(enforcer.counters.denied, 0);
    assert.equal(enforcer.check("", "k", 1, 100).allowed, true);
  });

  it("refuses bad keys and costs with a message naming them", () => {
    const { enforcer } = rig(Limit.perSecond(10));
    assert.throws(() => enforcer.check("", "", 1, 0), { name: "TypeError", message: /""/ });
    // @ts-expect-error: not a string
    assert.throws(() => enforcer.check("", 42, 1, 0), { name: "TypeError", message: /42/ });
    for (const cost of [0, -1, 1.5, NaN, Infinity]) {
      assert.throws(() => enforcer.check("", "k", cost, 0), {
        name: "RangeError",
        message: new RegExp(String(cost)),
      });
    }
    assert.equal(enforcer.table.size, 0, "a refused check leaves no state");
  });
});
