import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../mod.ts";
import { rig } from "./support.ts";

describe("bounded key table", () => {
  it("keeps state for at most its capacity, however many keys arrive", () => {
    const r = rig(Limit.perSecond(10).burst(5), { capacity: 64 });
    for (let i = 0; i < 100_000; i++) r.enforcer.check("", `k${i}`, 1, i / 1000);
    assert.ok(r.enforcer.table.size <= 64, `size ${r.enforcer.table.size}`);
    assert.ok(r.enforcer.counters.overflowed > 0);
  });

  it("a replenished key frees its place for a newcomer", () => {
    const r = rig(Limit.perSecond(10).burst(1), { capacity: 4 });
    for (const k of ["a", "b", "c", "d"]) r.enforcer.check("", k, 1, 0);
    r.enforcer.check("", "e", 1, 0);
    assert.equal(r.enforcer.counters.overflowed, 1, "no place while all four are paying off");
    // 100 ms later each has paid off its one request: a fresh slot would decide the same.
    r.enforcer.check("", "f", 1, 100);
    assert.equal(r.enforcer.counters.overflowed, 1);
    assert.ok(r.enforcer.table.get("", "f"));
    assert.equal(r.enforcer.table.size, 4);
  });

  it("keys beyond the bound share one allowance at the strictest cold rate", () => {
    const r = rig(Limit.perSecond(1_000).burst(10), { capacity: 2 });
    r.book.setClass("slow", Limit.perSecond(100).burst(10));
    // Two busy keys hold the only places.
    r.enforcer.check("", "a", 10, 0);
    r.enforcer.check("", "b", 10, 0);
    // Everyone else shares 100/s × α (0.5) = 50/s, burst 10, at the strict side.
    let admitted = 0;
    for (let i = 0; i < 1_000; i++) {
      if (r.enforcer.check("", `new${i}`, 1, i * 0.01).allowed) admitted++;
    }
    assert.equal(admitted, 10);
    assert.equal(r.enforcer.counters.overflowed, 1_000);
  });

  it("prune forgets every replenished key", () => {
    const r = rig(Limit.perSecond(10).burst(2), { capacity: 100 });
    for (let i = 0; i < 50; i++) r.enforcer.check(i % 2 ? "c" : "", `k${i}`, 1, 0);
    r.enforcer.check("", "busy", 2, 0);
    assert.equal(r.enforcer.table.size, 51);
    assert.equal(r.enforcer.prune(150), 50);
    assert.equal(r.enforcer.table.size, 1);
  });
});

describe("checkAll", () => {
  it("is all or nothing: a denied batch consumes nothing", () => {
    const r = rig(Limit.perSecond(10).burst(2));
    r.enforcer.check("", "b", 2, 0); // b is spent
    const batch = r.enforcer.checkAll([{ key: "a" }, { key: "b" }], 0);
    assert.equal(batch.allowed, false);
    assert.deepEqual(batch.decisions.map((d) => d.allowed), [true, false]);
    assert.equal(batch.retryAfterMs, 100);
    assert.equal(r.enforcer.peek("", "a", 0).remaining, 1, "a consumed nothing");
    const ok = r.enforcer.checkAll([{ key: "a", cost: 2 }, { class: "other", key: "b" }], 0);
    assert.equal(ok.allowed, true);
    assert.equal(ok.remaining, 0);
    assert.equal(r.enforcer.peek("", "a", 0).allowed, false, "an admitted batch consumed a");
    assert.equal(r.enforcer.counters.admitted, 1 + 2);
    assert.equal(r.enforcer.counters.denied, 2);
  });

  it("refuses the same class and key twice, and malformed items", () => {
    const r = rig(Limit.perSecond(10));
    assert.throws(() => r.enforcer.checkAll([{ key: "a" }, { key: "b" }, { key: "a" }], 0), {
      name: "TypeError",
      message: /"a".*twice/,
      item: 2,
    });
    // A class and key whose concatenations agree are still different pairs.
    assert.equal(
      r.enforcer.checkAll([{ class: "ab", key: "c" }, { class: "a", key: "bc" }], 0).allowed,
      true,
    );
    assert.throws(() => r.enforcer.checkAll([], 0), TypeError);
    assert.throws(() => r.enforcer.checkAll([{ key: "a", cost: 0 }], 0), RangeError);
    // @ts-expect-error: not an item
    assert.throws(() => r.enforcer.checkAll([null], 0), TypeError);
  });

  it("in a dry run admits, counting would-be denials", () => {
    const r = rig(Limit.perSecond(10).burst(1));
    r.enforcer.dryRun = true;
    r.enforcer.checkAll([{ key: "a" }], 0);
    const b = r.enforcer.checkAll([{ key: "a" }, { key: "b" }], 0);
    assert.equal(b.allowed, true);
    assert.ok(b.decisions.every((d) => d.allowed));
    assert.equal(r.enforcer.counters.denied, 2);
    assert.equal(r.enforcer.peek("", "b", 0).remaining, 0, "b: 1 burst, untouched, one left after");
  });

  it("two keys in the overflow allowance are charged together", () => {
    const r = rig(Limit.perSecond(100).burst(4), { capacity: 1 });
    r.enforcer.check("", "holder", 4, 0);
    // The overflow allowance: 50/s, burst 4. Two overflowing keys at cost 3 do not fit.
    const b = r.enforcer.checkAll([{ key: "x", cost: 3 }, { key: "y", cost: 3 }], 0);
    assert.equal(b.allowed, false);
    assert.equal(
      r.enforcer.checkAll([{ key: "x", cost: 2 }, { key: "y", cost: 2 }], 0).allowed,
      true,
    );
  });
});
